"""Synchronous distributed stores over MPI: ``dist_sync`` and ``dist_device_sync``
(``dist_sync_device``); ``create('dist_async')`` is answered by :mod:`.dist_async`.

Every worker process keeps a replica of the store. A push first reduces the process's own
devices (on CPU for ``dist_sync``, on the devices for ``dist_device_sync``), then sums across
processes with MPI allreduce (small arrays fused into buckets, see :mod:`.bucketing`); the
updater, when set, then runs identically on every replica, which is what MXNet's servers do for
all workers at once. ``init`` keeps rank 0's value, as MXNet does. Launch with
``python -m mxmod.launch -n N python train.py`` or ``mpiexec -n N python -m mpi4py train.py``.

Row_sparse values (embedding gradients) travel as row ids + rows: all-gathered between the
workers and summed in rank order. In a job with server ranks (``mxmod.launch -n N -s S``) the
row_sparse keys live on the servers instead, sharded by rows and updated in synchronous rounds
(:mod:`.sharded`), while dense keys are all-reduced as above ("hybrid" training); an embedding
cache with bounded staleness can then sit in front of them (:meth:`set_embedding_cache`).
A worker whose program ends while the others wait for it in a store call makes them raise an
MXNetError naming it (see :mod:`.peer_watch`) instead of waiting forever."""
import numpy as np

from ..base import MXNetError
from ..context import cpu
from ..ndarray.ndarray import from_xp
from . import mpi_comm
from .base import check_new_keys
from .bucketing import Bucketer
from .compression import create_compression
from .local import KVStore, _dense, _stype
from .server_link import ServerLink
from .sharded import RowTables, checked_rows, next_store_id
from .sparse_values import is_row_sparse, retain
from .sparse_wire import allgather_rows, host_rows, sum_rows
from .stats import CommStats
from . import net_emulation
from .cache_control import CacheControl
from .server_optimizer import ServerOptimizer
from .shard_update import ShardedPushPull
from ..sparse_storage import RowSparseStorage
from .twobit_wire import reduce_compressed

__all__ = ['DistKVStore']


def _count_rows(row_ids):
    """Number of row ids in a row_sparse_pull's ``row_ids`` argument."""
    if isinstance(row_ids, (list, tuple)):
        return sum(_count_rows(r) for r in row_ids)
    return int(row_ids.size) if row_ids is not None else 0


class DistKVStore(ServerLink, CacheControl, ServerOptimizer, ShardedPushPull, KVStore):
    """A key-value store shared by the MPI worker processes of a job.

    Parameters
    ----------
    name : str, default 'dist_sync'
        ``'dist_sync'``, ``'dist_device_sync'`` / ``'dist_sync_device'`` (reduce each process's
        devices on the devices) or ``'dist_async'`` (returns a :class:`DistAsyncKVStore`).
    """

    def __new__(cls, name='dist_sync'):
        if cls is DistKVStore and '_async' in str(name):
            from .dist_async import DistAsyncKVStore  # pylint: disable=import-outside-toplevel
            cls = DistAsyncKVStore
        return super(DistKVStore, cls).__new__(cls)

    def __init__(self, name='dist_sync'):
        super(DistKVStore, self).__init__(name)
        self._world = mpi_comm.world()
        # collectives go through the watched channel (a finished peer raises instead of hanging)
        self._coll = self._world.worker_channel(name)
        self._comm = self._coll.comm
        self._bucketer = Bucketer(self._coll)
        self._wire_compression = None
        self._comm_buf = {}
        self._stats = CommStats()
        self._cache = None
        self._tables = None
        if self._world.num_servers:
            # hybrid: row_sparse tables live on the server ranks, dense values are all-reduced
            self._peer = net_emulation.wrap(self._world.comm)
            self._watch = self._world.watch
            self._sid = next_store_id()
            self._tables = RowTables(self)

    # ---- properties ----------------------------------------------------------
    @property
    def rank(self):
        """This worker's rank among the workers (MPI rank)."""
        return self._comm.Get_rank()

    @property
    def num_workers(self):
        """Number of worker processes."""
        return self._comm.Get_size()

    def barrier(self):
        """Wait until every worker reaches this point (and the servers applied this worker's
        pushes)."""
        if self._tables is not None:
            self._tables.settle()
        self._coll.barrier('barrier')

    def _on_servers(self, key):
        return self._tables is not None and key in self._tables

    # ---- init ----------------------------------------------------------------------
    def init(self, key, value):
        """Initialize key(s) on every worker with rank 0's value(s).

        Every worker must call ``init`` with the same keys, shapes and dtypes, in the same order.

        Parameters
        ----------
        key : int, str or list of them
        value : NDArray or list of NDArray (one per key)
        """
        kind, pairs = self._pairs(key, value, 'init')
        signature = [(k, tuple(v[0].shape), str(v[0].dtype)) for k, v in pairs]
        self._coll.begin('init')
        self._check_same_everywhere(signature)
        served = [(k, v) for k, v in pairs if self._tables is not None and is_row_sparse(v[0])]
        served_keys = set(k for k, _ in served)
        local = [(k, v) for k, v in pairs if k not in served_keys]
        if served:
            check_new_keys(served, self._store)
            for k, vals in served:
                # the table lives on the servers; the worker keeps its shape and dtype only
                self._tables.init(k, vals[0], sync=True)
                if self._cache is not None and self._cache.wants(k):
                    self._cache.add(k)
                from ..ndarray.sparse import zeros  # pylint: disable=import-outside-toplevel
                self._store[k] = zeros('row_sparse', vals[0].shape, dtype=vals[0].dtype)
            if kind is not None:
                self._key_kind = kind
            self._coll.barrier('init')
        if local:
            super(DistKVStore, self).init([k for k, _ in local], [v[0] for _, v in local])
            self._bucketer.bcast([self._store[k]._data for k, _ in local
                                  if not is_row_sparse(self._store[k])])
            for k, _ in local:
                if is_row_sparse(self._store[k]):
                    self._bcast_rows(self._store[k])

    def _bcast_rows(self, stored):
        """Make a row_sparse store value rank 0's (its row count, then row ids and values)."""
        storage = stored._data
        count = np.array([storage.indices.shape[0]], dtype=np.int64)
        self._coll.Bcast(count)
        nrows = int(count[0])
        if self.rank != 0:
            storage.indices = np.empty(nrows, dtype=storage.indices.dtype)
            storage.data = np.empty((nrows,) + tuple(storage.shape[1:]), dtype=storage.dtype)
        self._coll.Bcast(storage.indices.view(np.uint8))
        self._coll.Bcast(storage.data.reshape(-1).view(np.uint8))

    def _check_same_everywhere(self, signature):
        everyone = self._coll.allgather(signature)
        for rank, theirs in enumerate(everyone):
            if theirs != everyone[0]:
                raise MXNetError('init: workers disagree on the keys to initialize: rank 0 has %s '
                                 'but rank %d has %s (every worker must init the same keys, shapes '
                                 'and dtypes in the same order)' % (everyone[0], rank, theirs))

    # ---- push -------------------------------------------------------------------------
    def push(self, key, value, priority=0):
        """Sum values over this process's devices and over all workers, then update the store.

        Every worker must push the same keys in the same order (a collective call).

        Parameters
        ----------
        key : int, str or list of them
        value : NDArray, list of NDArray, or list of lists (one per key)
        priority : int
            Accepted for compatibility; the keys of one call are reduced together.
        """
        # large keys: sharded updates (mxmod.kvstore.shard_update); the others go on here
        key, value, _ = self._pushpull_sharded(key, value, None, pull=False) or (key, value, 0)
        if key != []:
            self._push_as('push', key, value)

    def _push_as(self, what, key, value):
        _, pairs = self._pairs(key, value, what)
        for k, vals in pairs:
            stored = self._stored(k, what)
            for val in vals:
                if tuple(val.shape) != tuple(stored.shape):
                    raise MXNetError('%s: shape mismatch for key %r: stored %s, pushed %s'
                                     % (what, k, stored.shape, tuple(val.shape)))
        for k, vals in pairs:
            if self._on_servers(k):
                self._push_rows(k, vals)
        pairs = [(k, vals) for k, vals in pairs if not self._on_servers(k)]
        if not pairs:
            return
        self._coll.begin(what)
        sparse = [(k, vals) for k, vals in pairs if all(is_row_sparse(v) for v in vals)]
        merged = [(k, self._merge(k, [_dense(v) for v in vals])) for k, vals in pairs
                  if not all(is_row_sparse(v) for v in vals)]
        if not merged:
            results = []
        elif self._wire_compression is not None:
            results = self._reduce_compressed(merged)
        else:
            results = self._reduce_dense(merged)
        # row_sparse gradients travel as (row ids, values) in the same call
        results += [(k, self._gather_rows(k, self._merge(k, vals))) for k, vals in sparse]
        for k, result in results:
            if result is not None:
                self._apply(k, result)

    def _push_rows(self, key, vals):
        """This worker's push of a synchronous round of a server-held table (through the
        embedding cache when one is set)."""
        merged = self._merge(key, vals if all(is_row_sparse(v) for v in vals)
                             else [v.tostype('row_sparse') for v in vals])
        ids, values = host_rows(merged._data)
        counts = None
        if self._cache is not None and key in self._cache:
            ids, values, counts = self._cache.write(key, ids, values, step=self._local_step(key))
        self._tables.push(key, ids, values, counts)

    def _local_step(self, key):
        """How the embedding cache shows this worker its own held-back updates: a plain SGD step
        of the optimizer's learning rate, weight decay and gradient scale (the servers apply the
        optimizer itself to the pushed sums)."""
        optimizer = getattr(self._updater, 'optimizer', None)
        if optimizer is None:
            return None
        lr = float(optimizer.learning_rate)
        rescale, wd = float(optimizer.rescale_grad), float(optimizer.wd)

        def step(values, grads):
            return values - lr * (rescale * grads + wd * values)
        return step

    def _gather_rows(self, key, merged):
        """The sum over all workers of one row_sparse value: every worker's rows are
        all-gathered (ids + values, variable length) and summed in rank order."""
        ids, values = host_rows(merged._data)
        shape, dtype = tuple(merged.shape), merged.dtype
        parts, sent, received = allgather_rows(self._coll, ids, values, shape, dtype)
        total = sum_rows(parts, shape, dtype)
        self._stats.add_sparse(sent * (self.num_workers - 1), received,
                               sum(p[0].shape[0] for p in parts) - ids.shape[0])
        result = from_xp(total, cpu())
        return result if merged.context == cpu() else result.as_in_context(merged.context)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Copy the rows ``row_ids`` of each key into row_sparse outputs: from this worker's
        replica of the store (every worker holds the summed, updated rows), or for a table on
        the servers, from the servers (or the embedding cache) for these rows only."""
        for k, dst, ids in self._pull_targets(key, out, row_ids):
            self._stats.add(rows_requested=_count_rows(ids))
            if not self._on_servers(k):
                dst[:] = retain(self._store[k], ids, dst.context)
                continue
            stored = self._store[k]
            rows = checked_rows(k, ids, stored.shape[0])
            values = self._read_rows(k, rows)
            dst[:] = from_xp(RowSparseStorage(values, rows, stored.shape),
                             cpu()).as_in_context(dst.context)

    def _read_rows(self, key, rows):
        """Rows ``rows`` of a server-held table, as of every round this worker pushed to."""
        if self._cache is not None and key in self._cache and \
                rows.shape[0] < self._tables.tables[key].shape[0]:
            return self._cache.read(key, rows)
        if self._cache is not None and key in self._cache:
            self._cache.read(key, rows[:0])       # finish a prefetch under way
        return self._tables.fetch(key, rows)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the value of each key into its output array(s); a table on the servers is
        fetched whole (row_sparse outputs are skipped unless ``ignore_sparse`` is False)."""
        if out is None:
            raise MXNetError('pull: out must be given (the array(s) to copy key %r into)' % (key,))
        _, pairs = self._pairs(key, out, 'pull')
        if not any(self._on_servers(k) for k, _ in pairs):
            super(DistKVStore, self).pull(key, out, priority, ignore_sparse)
            return
        for k, outs in pairs:
            if not self._on_servers(k):
                super(DistKVStore, self).pull(k, outs, priority, ignore_sparse)
                continue
            outs = [dst for dst in outs if not (ignore_sparse and _stype(dst) == 'row_sparse')]
            if not outs:
                continue
            stored = self._stored(k, 'pull')
            for dst in outs:
                if tuple(dst.shape) != tuple(stored.shape):
                    raise MXNetError('pull: shape mismatch for key %r: stored %s, out %s'
                                     % (k, stored.shape, tuple(dst.shape)))
            self._tables.settle()
            whole = np.empty(stored.shape, dtype=stored.dtype)
            self._wait_requests(self._tables.pull_whole(k, whole), self._world.server_ranks,
                                'pull')
            for dst in outs:
                dst[:] = from_xp(whole, cpu()).as_in_context(dst.context)

    def comm_stats(self):
        """This worker's communication counters since the store was created (a dict): bytes
        sent and received for dense and sparse values, rows transferred, and the embedding
        cache's counters when one is set (see :class:`~mxmod.kvstore.stats.CommStats`)."""
        return self._stats.snapshot()

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` then pull into ``out`` (into ``value`` in place when ``out`` is None).

        A collective call: every worker passes the same keys in the same order. Without an
        updater or compression, an in-place pushpull of one host array per key sums directly in
        the pushed arrays (one copy less).

        Parameters
        ----------
        key : int, str or list of them
        value : NDArray, list of NDArray, or list of lists (one per key)
        out : same structure as ``value``, optional
        priority : int
        """
        if (out is None and self._updater is None and self._wire_compression is None
                and self._pushpull_in_place(key, value)):
            return
        key, value, out = self._pushpull_sharded(key, value, out) or (key, value, out)
        if key != []:
            self._push_as('pushpull', key, value)
            self.pull(key, value if out is None else out, priority)

    def _pushpull_in_place(self, key, value):
        """Sum one host array per key across workers in place (and into the store); False when
        the values do not allow it."""
        _, pairs = self._pairs(key, value, 'pushpull')
        if not all(len(vals) == 1 and self._in_place_ok(k, vals[0]) for k, vals in pairs):
            return False
        self._coll.begin('pushpull')
        self._bucketer.allreduce([(vals[0]._data, vals[0]._data, self._store[k]._data)
                                  for k, vals in pairs])
        self._stats.add_dense(sum(vals[0]._data.nbytes for _, vals in pairs), self.num_workers)
        return True

    def _in_place_ok(self, key, val):
        stored = self._stored(key, 'pushpull')
        if tuple(val.shape) != tuple(stored.shape):
            raise MXNetError('pushpull: shape mismatch for key %r: stored %s, pushed %s'
                             % (key, stored.shape, tuple(val.shape)))
        return (getattr(val, 'stype', 'default') == 'default' and val.dtype == stored.dtype
                and isinstance(val._data, np.ndarray) and isinstance(stored._data, np.ndarray)
                and stored._data.flags.c_contiguous)

    def _target(self, key, merged, vals_private):
        """Where the cross-worker sum of ``key`` lands: the store itself when there is no
        updater (returns None as the value to apply), else a comm buffer on merged's device."""
        stored = self._store[key]
        if (self._updater is None and isinstance(stored._data, np.ndarray)
                and stored.dtype == merged.dtype and stored._data.flags.c_contiguous):
            return stored._data, None
        if vals_private:
            return merged._data, merged
        buf = self._comm_buf.get(key)
        if buf is None or buf.context != merged.context or buf.dtype != merged.dtype:
            buf = self._comm_buf[key] = from_xp(merged._data.copy(), merged.context)
        return buf._data, buf

    def _reduce_dense(self, merged):
        pairs, results = [], []
        for k, value in merged:
            private = value is self._merge_buf.get(k)
            dst, result = self._target(k, value, private)
            pairs.append((value._data, dst))
            results.append((k, result))
        self._bucketer.allreduce(pairs)
        self._stats.add_dense(sum(src.nbytes for src, _ in pairs), self.num_workers)
        return results

    def _reduce_compressed(self, merged):
        """2-bit compressed reduction (see :func:`.twobit_wire.reduce_compressed`)."""
        return reduce_compressed(self, merged)

    def set_gradient_compression(self, compression_params):
        """Compress each worker's pushed gradients with MXNet's 2-bit scheme.

        Each worker quantizes its locally reduced gradient (keeping the residual), the packed
        2-bit codes travel between workers, and the dequantized values are summed.

        Parameters
        ----------
        compression_params : dict
            ``{'type': '2bit', 'threshold': 0.5}``; the threshold must be > 0.
        """
        self._wire_compression = create_compression(compression_params)
