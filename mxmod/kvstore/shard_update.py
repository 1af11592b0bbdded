"""Sharded optimizer updates for the synchronous distributed store (``dist_sync`` with an
optimizer set, i.e. ``update_on_kvstore``).

Without sharding every worker all-reduces a large gradient and then applies the optimizer to the
whole weight: the update (an SGD-momentum step reads and writes weight, gradient and momentum) is
repeated on every worker. Sharded, the flat gradient is cut into ``W`` contiguous shards (one per
worker): a reduce-scatter brings each worker the sum of its shard only, the worker updates its
shard of the weight and of the optimizer states, and an all-gather of the new weights completes
every replica. The bytes on the wire are those of the all-reduce (``2 (W-1)/W`` of the gradient
per worker); the update and the summation per worker shrink to ``1/W``.

Bit-identical to the unsharded path: the optimizers taken here (SGD, NAG, Adam, exactly those
classes) update element by element, and the reduce-scatter sums the workers' pieces in the
order MPICH's all-reduce uses (pairs of neighbouring ranks, then pairs of pairs, after folding
the ranks above a power of two), so every element gets the same sum. The reduce-scatter is an
``Alltoallv`` straight from the gradient array (no staging copy) followed by that summation; the
all-gather is in place in the store's copy of the weight, and each piece is copied into the
pulled arrays while it is in cache.

Which keys: dense float32 host values of at least ``MXMOD_KVSTORE_SHARD_MB`` megabytes (unset,
``0`` or ``off``: no sharding, the default), pushed with ``pushpull`` by 2 or more workers, without
gradient compression. The optimizer states of a sharded key are valid on each worker for its own
shard only; :meth:`gather_states` (called by ``save_optimizer_states``, which every worker must
then call) completes them.

Off by default: on the one host it was measured on it cut the communication's CPU work by 13%
only (MPI's shared-memory copies cost what the all-reduce did), its bit-identity rests on the
summation order of the MPI library's all-reduce (MPICH's, checked for 2-8 parts), and a program
that saves the optimizer states from one worker only (``if kv.rank == 0: ...``) would wait
forever for the others' shards."""
import os

import numpy as np

from ..context import cpu
from ..ndarray.ndarray import NDArray, from_xp
from .bucketing import bucket_bytes
from .mpi_comm import mpi

__all__ = ['ENV_SHARD_MB', 'ShardedUpdates', 'ShardedPushPull', 'tree_sum', 'shard_bounds']

ENV_SHARD_MB = 'MXMOD_KVSTORE_SHARD_MB'
DEFAULT_SHARD_MB = 0.0        # off unless asked for


def shard_min_bytes():
    """Smallest key (bytes) updated sharded; None when sharding is off."""
    raw = os.environ.get(ENV_SHARD_MB, '').strip().lower()
    if raw in ('off', 'false', 'no'):
        return None
    try:
        value = float(raw) if raw else DEFAULT_SHARD_MB
    except ValueError:
        from ..base import MXNetError  # pylint: disable=import-outside-toplevel
        raise MXNetError('environment variable %s must be a number of megabytes or "off", got %r'
                         % (ENV_SHARD_MB, raw)) from None
    return None if value <= 0 else int(value * (1 << 20))


def _elementwise_optimizers():
    from ..optimizer.sgd import SGD, NAG  # pylint: disable=import-outside-toplevel
    from ..optimizer.adaptive import Adam  # pylint: disable=import-outside-toplevel
    return (SGD, NAG, Adam)


def tree_sum(parts, out):
    """Sum ``parts`` (arrays of one shape) into ``out`` in the order of MPICH's all-reduce: the
    ranks above the largest power of two ``P`` fold into pairs first (``a0+a1``, ``a2+a3``, ...),
    then the ``P`` values are added in pairs of neighbours, pairs of pairs, and so on."""
    count = len(parts)
    pof2 = 1
    while pof2 * 2 <= count:
        pof2 *= 2
    rem = count - pof2
    if count == 1:
        np.copyto(out, parts[0])
        return
    level = [parts[2 * i] + parts[2 * i + 1] for i in range(rem)] + list(parts[2 * rem:])
    while len(level) > 2:
        level = [level[i] + level[i + 1] for i in range(0, len(level), 2)]
    np.add(level[0], level[1], out=out)


def shard_bounds(size, workers):
    """[(begin, end)] of each worker's contiguous shard of ``size`` elements."""
    per = -(-size // workers)
    return [(min(q * per, size), min((q + 1) * per, size)) for q in range(workers)]


def _map_state(state, fn):
    if isinstance(state, NDArray):
        return fn(state)
    if isinstance(state, (tuple, list)):
        mapped = [_map_state(s, fn) for s in state]
        return tuple(mapped) if isinstance(state, tuple) else mapped
    return state


def _flat_view(arr, begin, end):
    return from_xp(arr._data.reshape(-1)[begin:end], arr._ctx)


class ShardedUpdates(object):
    """The sharded ``pushpull`` of one :class:`~mxmod.kvstore.dist.DistKVStore`."""

    def __init__(self, store):
        self.store = store
        self.sharded = set()        # keys whose optimizer states are valid for this shard only
        self.calls = 0              # sharded pushpulls made (tests)
        self._recv = {}

    # ---- which keys ------------------------------------------------------------------------
    def applies(self, key, vals, outs):
        """Whether ``key`` (pushed ``vals``, pulled into ``outs``) takes the sharded path."""
        store = self.store
        limit = shard_min_bytes()
        updater = store._updater
        if limit is None or store.num_workers < 2 or updater is None or \
                store._wire_compression is not None or store._compression is not None or \
                store._on_servers(key) or key not in store._store:
            return False
        optimizer = getattr(updater, 'optimizer', None)
        if type(optimizer) not in _elementwise_optimizers() or not hasattr(updater, 'states'):
            return False
        stored = store._store[key]
        data = getattr(stored, '_data', None)
        if not isinstance(data, np.ndarray) or data.dtype != np.float32 or \
                not data.flags.c_contiguous or data.nbytes < limit:
            return False
        for arr in list(vals) + list(outs):
            if getattr(arr, 'stype', 'default') != 'default' or \
                    tuple(arr.shape) != tuple(stored.shape) or arr.dtype != np.float32:
                return False
        return True

    # ---- the exchange ------------------------------------------------------------------------
    def _piece(self):
        """Elements of one worker's piece per collective call."""
        return max(1024, bucket_bytes() // 4 // self.store.num_workers)

    def pushpull(self, key, vals, outs):
        """Reduce-scatter ``key``'s merged gradient, update this worker's shard, all-gather the
        weights into the store and copy them into ``outs``."""
        store = self.store
        MPI = mpi()
        merged = store._merge(key, vals)
        grad = merged._data if isinstance(merged._data, np.ndarray) else merged.asnumpy()
        grad = np.ascontiguousarray(grad).reshape(-1)
        stored = store._store[key]
        flat = stored._data.reshape(-1)
        workers, rank = store.num_workers, store.rank
        bounds = shard_bounds(flat.size, workers)
        begin, end = bounds[rank]
        piece = self._piece()
        summed = self._buffer('sum', end - begin)
        recv = self._buffer('recv', workers * piece).reshape(workers, piece)
        per = bounds[0][1] - bounds[0][0]
        coll = store._coll
        coll.begin('pushpull')
        for off in range(0, per, piece):
            counts = [max(0, min(piece, e - b - off)) for b, e in bounds]
            displs = [min(b + off, e) for b, e in bounds]
            mine = counts[rank]
            coll.Alltoallv([grad, (counts, displs), MPI.FLOAT],
                           [recv, ([mine] * workers, [q * piece for q in range(workers)]),
                            MPI.FLOAT], 4 * max(counts))
            if mine:
                tree_sum([recv[q, :mine] for q in range(workers)], summed[off:off + mine])
        self._update(key, stored, summed, begin, end)
        targets, others = [], []
        for out in outs:
            data = out._data
            if isinstance(data, np.ndarray) and data.flags.c_contiguous and data is not flat:
                targets.append(data.reshape(-1))
            elif data is not flat:
                others.append(out)
        for off in range(0, per, piece):
            counts = [max(0, min(piece, e - b - off)) for b, e in bounds]
            displs = [min(b + off, e) for b, e in bounds]
            coll.Allgatherv_in_place([flat, (counts, displs), MPI.FLOAT], 4 * max(counts))
            for target in targets:
                for start, n in zip(displs, counts):
                    if n:
                        np.copyto(target[start:start + n], flat[start:start + n])
        for out in others:
            out[:] = stored if stored.context == out.context else stored.copyto(out.context)
        store._stats.add_dense(grad.nbytes, workers)
        self.calls += 1

    def _buffer(self, name, size):
        buf = self._recv.get(name)
        if buf is None or buf.size < size:
            buf = self._recv[name] = np.empty(max(size, 1), np.float32)
        return buf[:size]

    def _update(self, key, stored, summed, begin, end):
        """The store's updater on this worker's shard of ``key`` (views of the weight and of the
        full-size states)."""
        updater = self.store._updater
        if updater.states_synced.get(key) is not True:
            updater._ensure_state(key, stored)  # pylint: disable=protected-access
        self.sharded.add(key)
        if end <= begin:
            updater.optimizer._update_count(key)  # pylint: disable=protected-access
            return
        full = updater.states[key]
        updater.states[key] = _map_state(full, lambda s: _flat_view(s, begin, end))
        try:
            updater(key, from_xp(summed, cpu()), _flat_view(stored, begin, end))
        finally:
            updater.states[key] = full

    # ---- optimizer states ----------------------------------------------------------------------
    def gather_states(self):
        """Complete the optimizer states of the sharded keys on every worker (a collective call:
        every worker must make it, with the same sharded keys)."""
        store = self.store
        if not self.sharded:
            return
        MPI = mpi()
        keys = sorted(self.sharded, key=str)
        store._coll.begin('save_optimizer_states')
        for key in keys:
            state = store._updater.states.get(key)
            arrays = []
            _map_state(state, arrays.append)
            for arr in arrays:
                flat = arr._data.reshape(-1)
                bounds = shard_bounds(flat.size, store.num_workers)
                counts = [e - b for b, e in bounds]
                store._coll.Allgatherv_in_place([flat, (counts, [b for b, _ in bounds]),
                                                 MPI.FLOAT], 4 * max(counts))
        self.sharded.clear()


class ShardedPushPull(object):
    """What :class:`~mxmod.kvstore.dist.DistKVStore` adds for sharded updates (a mixin): the
    sharded part of a ``pushpull`` and the optimizer states completed before they are saved."""

    _shards = None

    def _pushpull_sharded(self, key, value, out, pull=True):
        """Run the keys of this ``pushpull`` (``push`` when not ``pull``) that take the sharded
        path; return the (keys, values, outs) left for the ordinary path, or None when no key
        was sharded."""
        if self._updater is None or shard_min_bytes() is None or self.num_workers < 2:
            return None
        _, pairs = self._pairs(key, value, 'pushpull' if pull else 'push')
        if pull:
            _, out_pairs = self._pairs(key, value if out is None else out, 'pull')
        else:
            out_pairs = [(k, []) for k, _ in pairs]
        if self._shards is None:
            self._shards = ShardedUpdates(self)
        chosen = [self._shards.applies(k, vals, outs) for (k, vals), (_, outs)
                  in zip(pairs, out_pairs)]
        if not any(chosen):
            return None
        for (k, vals), (_, outs), pick in zip(pairs, out_pairs, chosen):
            if pick:
                self._shards.pushpull(k, vals, outs)
        rest = [(k, vals, outs) for (k, vals), (_, outs), pick in zip(pairs, out_pairs, chosen)
                if not pick]
        return [r[0] for r in rest], [r[1] for r in rest], [r[2] for r in rest]

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the store updater's states to ``fname``. With sharded updates (see
        :mod:`mxmod.kvstore.shard_update`) each worker holds the states of its shard of the large
        keys; they are all-gathered first, so every worker must make this call."""
        if self._shards is not None:
            self._shards.gather_states()
        super(ShardedPushPull, self).save_optimizer_states(fname, dump_optimizer)

    def load_optimizer_states(self, fname):
        """Read states written by :meth:`save_optimizer_states` (complete on every worker)."""
        super(ShardedPushPull, self).load_optimizer_states(fname)
        if self._shards is not None:
            self._shards.sharded.clear()
