"""The in-process key-value store: types ``local`` (reduce on CPU) and ``device`` (reduce on the
devices the values live on).

Pushed per-device lists are summed (in list order) into a merge buffer; with an updater the
store's copy is updated with ``updater(key, merged, stored)``, otherwise the store's copy becomes
the sum. Pulls copy the store's copy into every output array. Subclasses (the distributed store)
override :meth:`KVStore._reduce_across_workers` to add the cross-process step."""
from ..base import MXNetError, write_file_atomic
from ..context import cpu
from ..ndarray.ndarray import NDArray, empty
from .base import KVStoreBase, check_new_keys, normalize_pairs
from .compression import create_compression
from .sparse_values import is_row_sparse, merge_rows, retain, stored_copy

__all__ = ['KVStore']


def _stype(arr):
    return getattr(arr, 'stype', 'default')


def _dense(arr):
    return arr if _stype(arr) == 'default' else arr.tostype('default')


class KVStore(KVStoreBase):
    """A single-process store for ``local`` and ``device`` types (created by ``mx.kv.create``).

    Parameters
    ----------
    name : str, default 'local'
        The type string; names containing ``device`` reduce on the devices.
    """

    def __init__(self, name='local'):
        self._type = name
        self._on_device = 'device' in name
        self._store = {}
        self._home = {}
        self._merge_buf = {}
        self._load = {}
        self._key_kind = None
        self._updater = None
        self._compression = None

    # ---- properties --------------------------------------------------------
    @property
    def type(self):
        """The type string the store was created with."""
        return self._type

    @property
    def rank(self):
        """Rank of this worker (always 0 in one process)."""
        return 0

    @property
    def num_workers(self):
        """Number of workers (always 1 in one process)."""
        return 1

    @staticmethod
    def is_capable(capability):
        """Whether the store supports ``capability``; it can run an optimizer (a static method,
        as the base class's: the answer is the same for every store of the class)."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError('Unknown capability: %s' % capability)

    # ---- keys ----------------------------------------------------------------
    def _pairs(self, key, value, what):
        kind, pairs = normalize_pairs(key, value, what)
        if kind is not None and self._key_kind is not None and kind != self._key_kind:
            raise MXNetError('%s: Mixed key types are not allowed: this store uses %s keys, got '
                             '%s key(s) %r' % (what, self._key_kind, kind, key))
        return kind, pairs

    def _stored(self, key, what):
        if key not in self._store:
            raise MXNetError('%s: key %r has not been inited; call kv.init(%r, value) first'
                             % (what, key, key))
        return self._store[key]

    # ---- init / push / pull ----------------------------------------------------
    def init(self, key, value):
        """Initialize one key or a list of keys; a key may be initialized only once.

        Parameters
        ----------
        key : int, str or list of them
        value : NDArray or list of NDArray (one per key)
        """
        kind, pairs = self._pairs(key, value, 'init')
        check_new_keys(pairs, self._store)
        for k, vals in pairs:
            self._store[k] = stored_copy(vals[0], cpu())
        if kind is not None:
            self._key_kind = kind

    def push(self, key, value, priority=0):
        """Push values; a per-device list is summed, then the updater (if any) is applied.

        Parameters
        ----------
        key : int, str or list of them
        value : NDArray, list of NDArray, or list of lists (one per key)
        priority : int
            Accepted for compatibility; pushes run in call order.
        """
        _, pairs = self._pairs(key, value, 'push')
        for k, vals in pairs:
            stored = self._stored(k, 'push')
            for val in vals:
                if tuple(val.shape) != tuple(stored.shape):
                    raise MXNetError('push: shape mismatch for key %r: stored %s, pushed %s'
                                     % (k, stored.shape, tuple(val.shape)))
        for k, vals in pairs:
            merged = self._reduce_across_workers(k, self._merge(k, vals))
            self._apply(k, merged)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored value of each key into its output array(s).

        Parameters
        ----------
        key : int, str or list of them
        out : NDArray, list of NDArray, or list of lists (one per key)
        priority : int
        ignore_sparse : bool, default True
            Skip row_sparse outputs (use :meth:`row_sparse_pull` for them).
        """
        if out is None:
            raise MXNetError('pull: out must be given (the array(s) to copy key %r into)' % (key,))
        _, pairs = self._pairs(key, out, 'pull')
        for k, outs in pairs:
            stored = self._stored(k, 'pull')
            for dst in outs:
                if ignore_sparse and _stype(dst) == 'row_sparse':
                    continue
                if tuple(dst.shape) != tuple(stored.shape):
                    raise MXNetError('pull: shape mismatch for key %r: stored %s, out %s'
                                     % (k, stored.shape, tuple(dst.shape)))
                dst[:] = stored if stored.context == dst.context else stored.copyto(dst.context)

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` then pull into ``out`` (into ``value`` in place when ``out`` is None)."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key, value, out, priority=0):
        """Initialize ``key`` with ``value`` and pull it into ``out``."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull the rows ``row_ids`` of each key into row_sparse outputs (other rows are zero).

        Parameters
        ----------
        key : int, str or list of them
        out : row_sparse NDArray or list of them
        row_ids : NDArray or list of NDArray, one per output (one is reused for all)
        """
        for k, dst, ids in self._pull_targets(key, out, row_ids):
            dst[:] = retain(self._stored(k, 'row_sparse_pull'), ids, dst.context)

    def _pull_targets(self, key, out, row_ids):
        """(key, row_sparse output, its row ids) of each output of a ``row_sparse_pull`` call,
        checked: both arguments given, one row-id array per output (or one for all), every
        output row_sparse, every key inited."""
        if out is None or row_ids is None:
            raise MXNetError('row_sparse_pull needs both out= and row_ids=')
        _, pairs = self._pairs(key, out, 'row_sparse_pull')
        flat_ids = row_ids if isinstance(row_ids, (list, tuple)) else [row_ids]
        flat_ids = [r for ids in flat_ids
                    for r in (ids if isinstance(ids, (list, tuple)) else [ids])]
        n_outs = sum(len(outs) for _, outs in pairs)
        if len(flat_ids) not in (1, n_outs):
            raise MXNetError('row_sparse_pull: %d row_ids for %d outputs' % (len(flat_ids), n_outs))
        targets, pos = [], 0
        for k, outs in pairs:
            self._stored(k, 'row_sparse_pull')
            for dst in outs:
                if _stype(dst) != 'row_sparse':
                    raise MXNetError('row_sparse_pull: output for key %r has storage type %r; '
                                     'expected row_sparse (use pull for dense arrays)'
                                     % (k, _stype(dst)))
                targets.append((k, dst, flat_ids[pos if len(flat_ids) > 1 else 0]))
                pos += 1
        return targets

    # ---- reduction and update ----------------------------------------------------
    def _home_context(self, key, vals):
        """Where the merge of ``key`` happens: cpu for 'local'; for 'device', the least-loaded
        device among the pushers (chosen once per key)."""
        if not self._on_device:
            return cpu()
        home = self._home.get(key)
        if home is None:
            ctxs = []
            for val in vals:
                if val.context not in ctxs:
                    ctxs.append(val.context)
            home = min(ctxs, key=lambda c: self._load.get(c, 0))
            self._load[home] = self._load.get(home, 0) + vals[0].size
            self._home[key] = home
        return home

    def _merge(self, key, vals):
        """Sum the per-device values of ``key`` (compressed first when compression is on;
        row_sparse values are summed over the union of their rows)."""
        if all(is_row_sparse(v) for v in vals):
            return merge_rows(vals, self._home_context(key, vals))
        vals = [_dense(v) for v in vals]
        if self._compression is not None:
            vals = [self._compression.quantize(key, i, v) for i, v in enumerate(vals)]
        home = self._home_context(key, vals)
        if len(vals) == 1 and vals[0].context == home:
            return vals[0]
        buf = self._merge_buf.get(key)
        if buf is None or buf.context != home or buf.dtype != vals[0].dtype:
            buf = self._merge_buf[key] = empty(vals[0].shape, ctx=home, dtype=vals[0].dtype)
        buf[:] = vals[0] if vals[0].context == home else vals[0].copyto(home)
        for val in vals[1:]:
            buf += val if val.context == home else val.copyto(home)
        return buf

    def _reduce_across_workers(self, key, merged):
        """Hook for multi-process stores; one process has nothing to add."""
        return merged

    def _apply(self, key, merged):
        """Update the store's copy of ``key`` with the merged value."""
        stored = self._store[key]
        if stored.context != merged.context and (self._on_device or self._updater is not None):
            stored = self._store[key] = stored.copyto(merged.context)
        if self._updater is None:
            same = merged.context == stored.context
            stored[:] = merged if same else merged.copyto(stored.context)
        else:
            self._updater(key, merged, stored)

    # ---- optimizer -----------------------------------------------------------------
    def set_optimizer(self, optimizer):
        """Apply ``optimizer`` to the store's weights at every push (states kept by the store)."""
        from ..optimizer import get_updater, Optimizer  # pylint: disable=import-outside-toplevel
        if not isinstance(optimizer, Optimizer):
            raise TypeError('set_optimizer: optimizer must be an Optimizer (for example '
                            'mx.optimizer.create(%r)), got %r (%s)'
                            % (optimizer if isinstance(optimizer, str) else 'sgd', optimizer,
                               type(optimizer).__name__))
        self._set_updater(get_updater(optimizer))

    def _set_updater(self, updater):
        """Set ``updater(key, merged, stored)``; ``None`` removes it."""
        if updater is not None and not callable(updater):
            raise TypeError('updater must be callable(key, merged, stored), got %r' % (updater,))
        self._updater = updater

    set_updater = _set_updater

    def set_embedding_cache(self, policy='lfu', capacity=0.1, bound=100, prefetch=True,
                            keys=None):
        """The embedding cache needs server ranks holding the tables (see
        :meth:`mxmod.kvstore.dist.DistKVStore.set_embedding_cache`); a single-process store
        has none."""
        raise MXNetError('set_embedding_cache: kvstore %r has no server ranks to hold the '
                         'tables; launch with server processes (python -m mxmod.launch -n W -s S '
                         '...) and use dist_sync, dist_device_sync or dist_async' % self._type)

    def set_gradient_compression(self, compression_params):
        """Compress pushed gradients; only for 'device' (and 'dist') store types.

        Parameters
        ----------
        compression_params : dict
            ``{'type': '2bit', 'threshold': 0.5}``; the threshold must be > 0.
        """
        if 'device' not in self._type and 'dist' not in self._type:
            raise MXNetError('Gradient compression is not supported for this type of kvstore '
                             '(%r); use a "device" or "dist_*" kvstore' % self._type)
        self._compression = create_compression(compression_params)

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the store updater's states (and optionally the optimizer) to ``fname``."""
        updater = self._need_updater('save_optimizer_states')
        write_file_atomic(fname, updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        """Read states written by :meth:`save_optimizer_states` into the store's updater."""
        updater = self._need_updater('load_optimizer_states')
        with open(fname, 'rb') as fin:
            updater.set_states(fin.read())

    def _need_updater(self, what):
        if self._updater is None or not hasattr(self._updater, 'get_states'):
            raise MXNetError('%s: this kvstore has no optimizer; call set_optimizer first' % what)
        return self._updater

