"""BatchNorm followed by relu, fused: when a training BatchNorm's output is read by nothing but a
relu Activation, the BatchNorm writes the relu'd values in the pass that writes its output, the
relu hands its input on, and in backward the relu passes its gradient through while BatchNorm's
kernels apply the relu mask, recomputed from the BatchNorm's input (ops/bn_relu_kernels.py).
Results are bit-identical to the separate operators'; a relu pass over memory is saved in
forward and in backward.

The pairs are found at bind time (float32 data of at most 5 axes and parameters on the CPU,
where relu gives 0 for NaN as the fused kernels do; compiled kernels in use, neither step
mirrored, the BatchNorm output no graph output) and switched on per forward:
training passes without a monitor or the symbolic profiler (both report every operator's own
output). ``MXMOD_FUSE_BN_RELU=0`` turns it off."""
import os

import numpy as np

__all__ = ['install', 'activate']


def _enabled():
    if os.environ.get('MXMOD_FUSE_BN_RELU', '1').strip() in ('0', 'false', 'off', 'no'):
        return False
    from ..ops import jit  # pylint: disable=import-outside-toplevel
    return jit.enabled()


def _float32(dtype):
    return dtype is not None and np.dtype(dtype) == np.float32


def _pairs(exe):
    plan = exe._plan
    readers = {}
    for step in plan.steps:
        for s in step.inputs + step.aux:
            readers.setdefault(s, []).append(step)
    heads = set(plan.head_slots)
    found = []
    for step in plan.steps:
        op = step.op
        if op.op_name != 'BatchNorm' or op.p.use_global_stats or not step.outputs:
            continue
        out = step.outputs[0]
        users = readers.get(out, [])
        if out in heads or len(users) != 1:
            continue
        act = users[0]
        if (act.op.op_name != 'Activation' or act.op.p.act_type != 'relu'
                or list(act.inputs) != [out] or getattr(step, 'mirror', False)
                or getattr(act, 'mirror', False)):
            continue
        octx, actx = exe._octx[step.index], exe._octx[act.index]
        shape = exe._shapes[out]
        if (octx.xp is not np or octx.ctx != actx.ctx or shape is None or 0 in shape
                or len(shape) > 5       # the relu keeps NaN there (ops.nn.mkldnn_like)
                or not _float32(exe._dtypes[out]) or not _float32(exe._dtypes[step.inputs[1]])):
            continue
        found.append((step.index, act.index))
    return found


def install(exe):
    """Find the executor's BatchNorm + relu pairs (off until :func:`activate`)."""
    exe._fusion_pairs = _pairs(exe) if _enabled() else []
    exe._fusion_on = False


def activate(exe, on):
    """Switch the pairs' fused behaviour on or off (for the next forward and its backward)."""
    on = bool(on and exe._fusion_pairs)
    if on == exe._fusion_on:
        return
    for bn, act in exe._fusion_pairs:
        # a relu without an output buffer hands on the BatchNorm's output array itself, which
        # must then not be the BatchNorm's shared buffer (free for other values after the relu)
        fresh = not exe._octx[act].out or exe._octx[act].out[0] is None
        exe._octx[bn].fused = ('bn_relu_fresh' if fresh else 'bn_relu') if on else None
        exe._octx[act].fused = 'relu_after_bn' if on else None
    exe._fusion_on = on
