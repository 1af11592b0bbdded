"""``dist_async``: MXNet's asynchronous parameter-server store over MPI point-to-point messages.

The last ``S`` ranks of the MPI world are servers (``python -m mxmod.launch -n W -s S ...``) running
:mod:`.server`. Each dense key lives on one server. A row_sparse key (an embedding table) is
sharded by rows over all servers, each holding a contiguous range of rows. A worker reduces its own
devices, sends the result (2-bit packed when compression is on; a row_sparse gradient as row ids +
rows, each server getting only the rows of its shard) and goes on; the server applies the
optimizer as each push arrives, without waiting for the other workers. Pulls fetch the server's
current value; ``row_sparse_pull`` asks each server for the requested rows of its shard only."""
import pickle

import numpy as np

from ..base import MXNetError, write_file_atomic
from ..ndarray.ndarray import NDArray, from_xp
from ..context import cpu
from . import mpi_comm, net_emulation
from .base import check_new_keys
from .compression import create_compression
from .dist import DistKVStore, _count_rows
from .local import _dense, _stype
from .sharded import RowTables, checked_rows, join_states, next_store_id
from .sparse_values import is_row_sparse
from .sparse_wire import host_rows
from .stats import CommStats
from ..sparse_storage import RowSparseStorage
from .mpi_comm import TAG_DATA, TAG_REPLY, TAG_REQUEST
from .twobit_wire import pack

__all__ = ['DistAsyncKVStore']


def _host(value):
    """A C-contiguous host copy-or-view of an NDArray's data."""
    data = value._data
    data = data if isinstance(data, np.ndarray) else data.get()
    return np.ascontiguousarray(data)


class DistAsyncKVStore(DistKVStore):
    """Asynchronous distributed store: the parameters live on server ranks.

    Every worker creates its dist_async stores in the same order (the servers tell the stores
    apart by that order) and calls ``init``, ``set_optimizer`` and ``barrier`` together; pushes
    and pulls need no partner.

    Parameters
    ----------
    name : str, default 'dist_async'
    """

    def __init__(self, name='dist_async'):  # pylint: disable=super-init-not-called
        self._init_local(name)
        self._world = mpi_comm.world()
        if not self._world.num_servers:
            raise MXNetError("kvstore 'dist_async' needs server processes: launch with "
                             "`python -m mxmod.launch -n N -s 1 python train.py` (or export %s=S "
                             "and start `python -m mpi4py -m mxmod.kvstore.server` on the last S "
                             "MPI ranks)" % mpi_comm.ENV_SERVERS)
        self._coll = self._world.worker_channel(name)
        self._comm = self._coll.comm
        self._peer = net_emulation.wrap(self._world.comm)
        self._watch = self._world.watch
        self._meta = {}
        self._stats = CommStats()
        self._has_updater = False
        self._wire_compression = None
        self._sid = next_store_id()
        self._tables = RowTables(self)
        self._cache = None

    def _init_local(self, name):
        super(DistKVStore, self).__init__(name)  # pylint: disable=bad-super-call

    # ---- keys ---------------------------------------------------------------------
    def _stored(self, key, what):
        if key not in self._meta:
            raise MXNetError('%s: key %r has not been inited; call kv.init(%r, value) first'
                             % (what, key, key))
        return self._meta[key]

    def _check(self, pairs, what):
        for k, arrays in pairs:
            shape, _ = self._stored(k, what)
            for arr in arrays:
                if tuple(arr.shape) != shape:
                    raise MXNetError('%s: shape mismatch for key %r: stored %s, got %s'
                                     % (what, k, shape, tuple(arr.shape)))

    def init(self, key, value):
        """Initialize key(s); rank 0's value is stored on the servers, then all workers sync.

        Parameters
        ----------
        key : int, str or list of them
        value : NDArray or list of NDArray (one per key)
        """
        kind, pairs = self._pairs(key, value, 'init')
        check_new_keys(pairs, self._meta)
        for k, vals in pairs:
            if is_row_sparse(vals[0]):
                self._meta[k] = (tuple(vals[0].shape), np.dtype(vals[0].dtype))
                self._tables.init(k, vals[0], sync=False)
                if self._cache is not None and self._cache.wants(k):
                    self._cache.add(k)
                continue
            data = _host(_dense(vals[0]))
            self._meta[k] = (tuple(data.shape), data.dtype)
            if self.rank == 0:
                server = self._server_of(k)
                self._peer.send(('init', self._sid, k, (data.shape, data.dtype.str)), dest=server,
                                tag=TAG_REQUEST)
                self._peer.Send(data, dest=server, tag=TAG_DATA)
                self._receive(server, 'its reply to init of key %r' % (k,))
        if kind is not None:
            self._key_kind = kind
        self._coll.barrier('init')

    def _row_pushes(self, key, vals):
        """Send the rows of a row_sparse gradient to the servers holding them."""
        merged = self._merge(key, vals if all(is_row_sparse(v) for v in vals)
                             else [v.tostype('row_sparse') for v in vals])
        ids, values = host_rows(merged._data)
        counts = None
        if self._cache is not None and key in self._cache:
            ids, values, counts = self._cache.write(key, ids, values, step=None)
        return self._tables.push(key, ids, values, counts)

    def _payload(self, key, vals):
        merged = self._merge(key, [_dense(v) for v in vals])
        if self._wire_compression is None:
            return ('dense', None), _host(merged)
        if merged.dtype != np.float32:
            raise MXNetError('gradient compression supports float32 only; key %r is %s'
                             % (key, merged.dtype))
        quantized = self._wire_compression.quantize(key, 0, merged)
        return ('2bit', self._wire_compression.threshold), pack(quantized.asnumpy())

    def _send_pushes(self, op, pairs):
        if not self._has_updater:
            raise MXNetError("%s: kvstore 'dist_async' applies pushes on the servers and needs an "
                             "optimizer there; call kv.set_optimizer(...) first" % op)
        requests = []
        for k, vals in pairs:
            if k in self._tables:
                requests += self._row_pushes(k, vals)
                continue
            server = self._server_of(k)
            how, payload = self._payload(k, vals)
            self._stats.add(dense_bytes_sent=payload.nbytes)
            requests.append(self._peer.isend((op, self._sid, k, how), dest=server, tag=TAG_REQUEST))
            requests.append(self._peer.Isend(payload, dest=server, tag=TAG_DATA))
        return requests

    def push(self, key, value, priority=0):
        """Send the locally reduced value(s) to the servers, which apply the optimizer.

        Parameters
        ----------
        key : int, str or list of them
        value : NDArray, list of NDArray, or list of lists (one per key)
        priority : int
            Accepted for compatibility.
        """
        _, pairs = self._pairs(key, value, 'push')
        self._check(pairs, 'push')
        self._wait_requests(self._send_pushes('push', pairs), self._servers_of(pairs), 'push')

    def _servers_of(self, pairs):
        servers = set()
        for k, _ in pairs:
            servers.update(self._world.server_ranks if k in self._tables
                           else [self._server_of(k)])
        return sorted(servers)

    def _post_receives(self, keys):
        """Receive buffers for the current value of ``keys`` (a sharded key's servers each
        send their rows into their range of its buffer) and their requests."""
        bufs, requests = [], []
        for k in keys:
            shape, dtype = self._meta[k]
            buf = np.empty(shape, dtype=dtype)
            bufs.append(buf)
            if k in self._tables:
                requests += self._tables.pull_whole(k, buf)
            else:
                requests.append(self._peer.Irecv(buf, source=self._server_of(k), tag=TAG_REPLY))
                self._stats.add(dense_bytes_received=buf.nbytes)
        return bufs, requests

    def _ask_pulls(self, keys):
        """Pull requests for the dense keys among ``keys`` (a sharded key's requests were sent
        with its receives)."""
        return [self._peer.isend(('pull', self._sid, k, None), dest=self._server_of(k),
                                 tag=TAG_REQUEST) for k in keys if k not in self._tables]

    @staticmethod
    def _deliver(bufs, pairs, ignore_sparse=True):
        for buf, (_, outs) in zip(bufs, pairs):
            for dst in outs:
                if ignore_sparse and _stype(dst) == 'row_sparse':
                    continue
                dst[:] = from_xp(buf, cpu())

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Fetch the servers' current value of each key into its output array(s).

        Parameters
        ----------
        key : int, str or list of them
        out : NDArray, list of NDArray, or list of lists (one per key)
        priority : int
        ignore_sparse : bool, default True
        """
        if out is None:
            raise MXNetError('pull: out must be given (the array(s) to copy key %r into)' % (key,))
        _, pairs = self._pairs(key, out, 'pull')
        self._check(pairs, 'pull')
        if ignore_sparse:
            # row_sparse outputs are left alone: do not fetch what nobody receives
            pairs = [(k, outs) for k, outs in pairs
                     if any(_stype(dst) != 'row_sparse' for dst in outs)]
            if not pairs:
                return
        bufs, requests = self._post_receives([k for k, _ in pairs])
        requests += self._ask_pulls([k for k, _ in pairs])
        self._wait_requests(requests, self._servers_of(pairs), 'pull')
        self._deliver(bufs, pairs, ignore_sparse)

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` and receive the updated value in one round trip per key.

        Parameters
        ----------
        key : int, str or list of them
        value : NDArray, list of NDArray, or list of lists (one per key)
        out : same structure as ``value``, optional
            Defaults to ``value`` (updated in place).
        """
        _, pairs = self._pairs(key, value, 'pushpull')
        _, out_pairs = self._pairs(key, value if out is None else out, 'pushpull')
        self._check(pairs, 'pushpull')
        self._check(out_pairs, 'pushpull')
        if any(k in self._tables for k, _ in pairs):
            # sharded tables: the push goes to several servers, then the value is fetched back
            self.push(key, value, priority)
            self.pull(key, value if out is None else out, priority)
            return
        bufs, requests = self._post_receives([k for k, _ in pairs])
        requests += self._send_pushes('pushpull', pairs)
        self._wait_requests(requests, self._servers_of(pairs), 'pushpull')
        self._deliver(bufs, out_pairs)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull the rows ``row_ids`` of each key into row_sparse outputs (other rows zero).

        For a row_sparse table each server is asked for the requested rows of its shard and
        sends only those; a dense key's value is fetched whole and the other rows dropped.

        Parameters
        ----------
        key : int, str or list of them
        out : row_sparse NDArray or list of them
        row_ids : NDArray or list of NDArray, one per output (one is reused for all)
        """
        targets = self._pull_targets(key, out, row_ids)
        self._check([(k, [dst]) for k, dst, _ in targets], 'row_sparse_pull')
        jobs = []
        for k, dst, ids in targets:
            jobs.append((k, dst, checked_rows(k, ids, self._meta[k][0][0])))
            self._stats.add(rows_requested=_count_rows(ids))
        fetched = self.fetch_rows([(k, ids) for k, _, ids in jobs])
        for (k, dst, ids), values in zip(jobs, fetched):
            shape = self._meta[k][0]
            dst[:] = from_xp(RowSparseStorage(values, ids, shape), cpu()).as_in_context(
                dst.context)

    def fetch_rows(self, requests_):
        """Current values of rows of keys: ``[(key, sorted unique int64 ids), ...]`` ->
        ``[values (len(ids), *row_shape), ...]``. A sharded table's servers are each asked for
        their own rows only; a dense key's value is fetched whole and the rows picked."""
        handles = [(k, ids, self._tables.request(k, ids)
                    if k in self._tables and (self._cache is None or k not in self._cache)
                    else None)
                   for k, ids in requests_]
        out = []
        for k, ids, handle in handles:
            if self._cache is not None and k in self._cache:
                out.append(self._cache.read(k, ids))
                continue
            if handle is not None:
                out.append(self._tables.complete(handle)[0])
                continue
            whole = NDArray(np.empty(self._meta[k][0], self._meta[k][1]), cpu())
            self.pull(k, out=whole)
            out.append(whole.asnumpy()[ids])
        return out

    # ---- synchronization and optimizer -----------------------------------------------
    def barrier(self):
        """Wait until every server has applied this worker's pushes, then for all workers."""
        self._ask_all('sync')
        self._coll.barrier('barrier')

    def set_optimizer(self, optimizer):
        """Send ``optimizer`` to the servers (rank 0 sends; all workers then synchronize)."""
        from ..optimizer.pickling import dumps  # pylint: disable=import-outside-toplevel
        from ..optimizer import Optimizer  # pylint: disable=import-outside-toplevel
        if not isinstance(optimizer, Optimizer):
            raise TypeError('set_optimizer: optimizer must be an Optimizer, got %r (%s)'
                            % (optimizer, type(optimizer).__name__))
        self._ship_updater('optimizer', dumps(optimizer))

    def _set_updater(self, updater):
        """Send ``updater(key, grad, weight)`` to the servers; it must be picklable."""
        try:
            blob = pickle.dumps(updater)
        except Exception as err:  # pylint: disable=broad-except
            raise TypeError("kvstore 'dist_async' runs the updater on the server processes, so "
                            "it must be picklable (a module-level function or an optimizer "
                            "Updater); pickling %r failed: %s" % (updater, err)) from err
        self._ship_updater('updater', blob)

    set_updater = _set_updater

    def _ship_updater(self, op, blob):
        if self.rank == 0:
            self._ask_all(op, blob)
        self._has_updater = True
        self._coll.barrier('set_optimizer')

    def set_gradient_compression(self, compression_params):
        """Send 2-bit compressed gradients to the servers (residual kept on the worker).

        Parameters
        ----------
        compression_params : dict
            ``{'type': '2bit', 'threshold': 0.5}``.
        """
        self._wire_compression = create_compression(compression_params)

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Gather the optimizer states from every server and write them to ``fname`` (the
        states of a sharded table joined along its rows)."""
        from ..optimizer.pickling import dumps, loads  # pylint: disable=import-outside-toplevel
        states, optimizer, shards = {}, None, {}
        for blob in self._ask_all('get_states', bool(dump_optimizer)):
            part = loads(blob)
            if dump_optimizer:
                part, optimizer = part
            for key, state in part.items():
                if key in self._tables:
                    shards.setdefault(key, []).append(state)
                else:
                    states[key] = state
        for key, parts in shards.items():
            states[key] = join_states(parts)
        write_file_atomic(fname, dumps((states, optimizer) if dump_optimizer else states))

    def load_optimizer_states(self, fname):
        """Load states written by :meth:`save_optimizer_states` into the servers' updaters
        (each server gets its rows of a sharded table's states)."""
        from ..optimizer.pickling import dumps, load_states  # pylint: disable=import-outside-toplevel
        with open(fname, 'rb') as fin:
            blob = fin.read()
        if self.rank == 0:
            if not self._tables.tables:
                self._ask_all('set_states', blob)
            else:
                states, optimizer = load_states(blob, fname)
                for s, server in enumerate(self._world.server_ranks):
                    mine = self._tables.split_states(states, s)
                    part = dumps((mine, optimizer) if optimizer is not None else mine)
                    self._ask(server, 'set_states', None, part)
        self._coll.barrier('load_optimizer_states')
