"""Buffer sharing for forward values: operators that can write into a given array
(``Operator.writes_out``) get preallocated outputs, and values whose lifetimes do not overlap share
one buffer; an elementwise operator (``inplace_ok``) may overwrite an input it is the last reader of.

Lifetimes are conservative: a value kept for backward, a graph output or an argument never shares;
an operator that may return views of its inputs (anything not ``writes_out``) keeps those inputs'
buffers alive as long as its outputs."""
import os

import numpy as np

from ..context import xp_of


class Block(object):
    """One preallocated buffer: ``size`` elements of ``dtype``."""
    __slots__ = ('size', 'dtype', 'until')

    def __init__(self, size, dtype):
        self.size = size
        self.dtype = dtype
        self.until = -1


def _lifetimes(plan, kept):
    """Last forward step reading each slot, with view-producing operators extending their inputs."""
    forever = len(plan.steps) + 1
    end = {}
    for step in plan.steps:
        for s in step.outputs:
            end[s] = step.index
    for step in plan.steps:
        for s in step.inputs + step.aux:
            end[s] = step.index
    pinned = set(kept) | set(plan.head_slots) | set(plan.arg_slots) | set(plan.aux_slots)
    for s in pinned:
        end[s] = forever
    for step in reversed(plan.steps):
        if not step.op.writes_out:
            last = max(end[s] for s in step.outputs)
            for s in step.inputs + step.aux:
                end[s] = max(end[s], last)
    return end, pinned


def assign(plan, kept, shapes, dtypes):
    """Return ``(blocks, slot_block)``: the buffers to allocate and, for each shareable output slot
    of a ``writes_out`` step, the index of its block."""
    end, pinned = _lifetimes(plan, kept)
    blocks, slot_block = [], {}
    for step in plan.steps:
        if not step.op.writes_out:
            continue
        for slot in step.outputs:
            shape, dtype = shapes[slot], dtypes[slot]
            if slot in pinned or shape is None or dtype is None or any(d == 0 for d in shape):
                continue
            size = int(np.prod(shape, dtype=np.int64))
            idx = _pick(blocks, slot_block, step, size, dtype, end)
            blocks[idx].until = end[slot]
            slot_block[slot] = idx
    return blocks, slot_block


def _pick(blocks, slot_block, step, size, dtype, end):
    """An in-place input block, else the smallest free block that fits, else a new block."""
    if step.op.inplace_ok:
        for s in step.inputs:
            idx = slot_block.get(s)
            if idx is not None and end[s] == step.index and blocks[idx].dtype == dtype \
                    and blocks[idx].size >= size:
                return idx
    free = [i for i, b in enumerate(blocks)
            if b.until < step.index and b.dtype == dtype and b.size >= size]
    if free:
        return min(free, key=lambda i: blocks[i].size)
    blocks.append(Block(size, dtype))
    return len(blocks) - 1


def shared_bytes(blocks):
    """Total bytes of the shared buffers."""
    return sum(b.size * np.dtype(b.dtype).itemsize for b in blocks)


def install(exe):
    """Preallocate an executor's shared forward buffers (one device only; off with
    MXMOD_SHARE_BUFFERS=0) and hand each writes_out step its output arrays. Returns the blocks."""
    if not exe._single_ctx or os.environ.get('MXMOD_SHARE_BUFFERS', '1') == '0':
        return []
    blocks, slot_block = assign(exe._plan, exe._kept, exe._shapes, exe._dtypes)
    storage = [_empty(exe._ctx, b.size, b.dtype) for b in blocks]
    for step, octx in zip(exe._plan.steps, exe._octx):
        if any(s in slot_block for s in step.outputs):
            octx.out = [_view(storage[slot_block[s]], exe._shapes[s]) if s in slot_block else None
                        for s in step.outputs]
    return blocks


def _view(flat, shape):
    return flat[:int(np.prod(shape, dtype=np.int64))].reshape(shape)


def _empty(ctx, size, dtype):
    xp = xp_of(ctx)
    if xp is np:
        return np.empty(size, dtype=dtype)
    with xp.cuda.Device(ctx.device_id):
        return xp.empty(size, dtype=dtype)
