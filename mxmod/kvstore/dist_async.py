"""``dist_async``: MXNet's asynchronous parameter-server store over MPI point-to-point messages.

The last ``S`` ranks of the MPI world are servers (``python -m mxmod.launch -n W -s S ...``) running
:mod:`.server`. Each dense key lives on one server. A row_sparse key (an embedding table) is
sharded by rows over all servers, each holding a contiguous range of rows. A worker reduces its own
devices, sends the result (2-bit packed when compression is on; a row_sparse gradient as row ids +
rows, each server getting only the rows of its shard) and goes on; the server applies the
optimizer as each push arrives, without waiting for the other workers. Pulls fetch the server's
current value; ``row_sparse_pull`` asks each server for the requested rows of its shard only."""
import pickle
import zlib

import numpy as np

from ..base import MXNetError, write_file_atomic
from ..ndarray.ndarray import NDArray, from_xp
from ..context import cpu
from ..profiler.hooks import traced
from . import mpi_comm, net_emulation
from .base import check_new_keys
from .compression import create_compression
from .dist import DistKVStore
from .local import _dense, _stype
from .sparse_values import is_row_sparse
from .sparse_wire import host_rows, pack_rows, row_bytes, shard_bounds, split_rows
from .stats import CommStats
from ..sparse_storage import INDEX_DTYPE, RowSparseStorage
from .mpi_comm import TAG_DATA, TAG_REPLY, TAG_REQUEST
from .twobit_wire import pack

__all__ = ['DistAsyncKVStore']

_STORE_IDS = [0]


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
        self._bounds = {}         # row_sparse key -> first row of every server's shard, and end
        self._stats = CommStats()
        self._has_updater = False
        self._wire_compression = None
        _STORE_IDS[0] += 1
        self._sid = _STORE_IDS[0]

    def _init_local(self, name):
        super(DistKVStore, self).__init__(name)  # pylint: disable=bad-super-call

    # ---- messaging --------------------------------------------------------------
    def _server_of(self, key):
        return self._world.server_ranks[zlib.crc32(repr(key).encode('utf-8'))
                                        % self._world.num_servers]

    def _wait_servers(self, test, servers, what):
        """Poll ``test`` until it is True; raise when one of ``servers`` has exited meanwhile."""
        def blame():
            for server in servers:
                if server in self._watch.gone:
                    return ('kvstore %s: %s %s while %s waits for it (%s)'
                            % (self.type, self._watch.role(server), self._watch.left(server),
                               self._watch.role(self._watch.rank), what))
            return None
        self._watch.wait(test, blame)

    @traced('KVStore', 'MPI_Waitall (servers)')
    def _wait_requests(self, requests, servers, what):
        Testall = mpi_comm.mpi().Request.Testall  # pylint: disable=invalid-name
        self._wait_servers(lambda: Testall(requests), servers, what)

    @traced('KVStore', 'MPI_Recv (server reply)')
    def _receive(self, server, what):
        """The next pickled reply of ``server``."""
        self._wait_servers(lambda: self._peer.Iprobe(source=server, tag=TAG_REPLY), [server],
                           what)
        return self._peer.recv(source=server, tag=TAG_REPLY)

    def _ask(self, server, op, key=None, extra=None):
        """Send a request that the server answers with a pickled reply; return the reply."""
        self._peer.send((op, self._sid, key, extra), dest=server, tag=TAG_REQUEST)
        reply = self._receive(server, 'its reply to %r' % op)
        if isinstance(reply, tuple) and reply and reply[0] == 'error':
            raise MXNetError('kvstore server (MPI rank %d): %s' % (server, reply[1]))
        return reply

    def _ask_all(self, op, extra=None):
        return [self._ask(server, op, None, extra) for server in self._world.server_ranks]

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
                self._init_sharded(k, vals[0])
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

    def _init_sharded(self, key, value):
        """Rank 0 sends every server its range of rows of a row_sparse table (as dense rows)."""
        shape, dtype = tuple(value.shape), np.dtype(value.dtype)
        self._meta[key] = (shape, dtype)
        bounds = self._bounds[key] = shard_bounds(shape[0], self._world.num_servers)
        if self.rank != 0:
            return
        ids, values = host_rows(value._data)
        cuts = split_rows(ids, bounds)
        for s, server in enumerate(self._world.server_ranks):
            first, end = int(bounds[s]), int(bounds[s + 1])
            shard = np.zeros((end - first,) + shape[1:], dtype=dtype)
            shard[ids[cuts[s]:cuts[s + 1]] - first] = values[cuts[s]:cuts[s + 1]]
            self._peer.send(('init_rows', self._sid, key, (shard.shape, dtype.str, first)),
                            dest=server, tag=TAG_REQUEST)
            self._peer.Send(shard, dest=server, tag=TAG_DATA)
            self._receive(server, 'its reply to init of rows %d-%d of key %r'
                          % (first, end - 1, key))

    # ---- push / pull --------------------------------------------------------------------
    def _row_pushes(self, op, key, vals):
        """Send the rows of a row_sparse gradient to the servers holding them (no message to a
        server none of whose rows changed)."""
        merged = self._merge(key, vals if all(is_row_sparse(v) for v in vals)
                             else [v.tostype('row_sparse') for v in vals])
        ids, values = host_rows(merged._data)
        bounds = self._bounds[key]
        cuts = split_rows(ids, bounds)
        requests = []
        for s, server in enumerate(self._world.server_ranks):
            lo, hi = int(cuts[s]), int(cuts[s + 1])
            if hi == lo:
                continue
            payload = pack_rows(ids[lo:hi], values[lo:hi])
            requests.append(self._peer.isend((op, self._sid, key, hi - lo), dest=server,
                                             tag=TAG_REQUEST))
            requests.append(self._peer.Isend(payload, dest=server, tag=TAG_DATA))
            self._stats.add(sparse_bytes_sent=payload.nbytes)
        return requests

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
            if k in self._bounds:
                requests += self._row_pushes('push_rows', k, vals)
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
            servers.update(self._world.server_ranks if k in self._bounds
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
            if k in self._bounds:
                bounds = self._bounds[k]
                for s, server in enumerate(self._world.server_ranks):
                    requests.append(self._peer.Irecv(buf[bounds[s]:bounds[s + 1]], source=server,
                                                     tag=TAG_REPLY))
            else:
                requests.append(self._peer.Irecv(buf, source=self._server_of(k), tag=TAG_REPLY))
            self._stats.add(dense_bytes_received=buf.nbytes)
        return bufs, requests

    def _ask_pulls(self, keys):
        """Pull requests for ``keys`` (every server of a sharded key)."""
        requests = []
        for k in keys:
            servers = self._world.server_ranks if k in self._bounds else [self._server_of(k)]
            for server in servers:
                requests.append(self._peer.isend(('pull', self._sid, k, None), dest=server,
                                                 tag=TAG_REQUEST))
        return requests

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
        if any(k in self._bounds for k, _ in pairs):
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
        if out is None or row_ids is None:
            raise MXNetError('row_sparse_pull needs both out= and row_ids=')
        _, pairs = self._pairs(key, out, 'row_sparse_pull')
        self._check(pairs, 'row_sparse_pull')
        flat_ids = row_ids if isinstance(row_ids, (list, tuple)) else [row_ids]
        flat_ids = [r for ids in flat_ids
                    for r in (ids if isinstance(ids, (list, tuple)) else [ids])]
        n_outs = sum(len(outs) for _, outs in pairs)
        if len(flat_ids) not in (1, n_outs):
            raise MXNetError('row_sparse_pull: %d row_ids for %d outputs' % (len(flat_ids), n_outs))
        jobs, pos = [], 0
        for k, outs in pairs:
            for dst in outs:
                if _stype(dst) != 'row_sparse':
                    raise MXNetError('row_sparse_pull: output for key %r has storage type %r; '
                                     'expected row_sparse (use pull for dense arrays)'
                                     % (k, _stype(dst)))
                ids = flat_ids[pos if len(flat_ids) > 1 else 0]
                pos += 1
                jobs.append((k, dst, self._requested_rows(k, ids)))
        fetched = self.fetch_rows([(k, ids) for k, _, ids in jobs])
        for (k, dst, ids), values in zip(jobs, fetched):
            shape = self._meta[k][0]
            dst[:] = from_xp(RowSparseStorage(values, ids, shape), cpu()).as_in_context(
                dst.context)

    def _requested_rows(self, key, row_ids):
        """Sorted unique int64 row ids of a row_sparse_pull, checked against the table."""
        ids = row_ids.asnumpy() if isinstance(row_ids, NDArray) else np.asarray(row_ids)
        ids = np.unique(ids.astype(INDEX_DTYPE).reshape(-1))
        rows = self._meta[key][0][0]
        if ids.size and (ids[0] < 0 or ids[-1] >= rows):
            raise MXNetError('row_sparse_pull: row id %d out of range for key %r with %d rows'
                             % (ids[0] if ids[0] < 0 else ids[-1], key, rows))
        return ids

    def fetch_rows(self, requests_):
        """Current values of rows of keys: ``[(key, sorted unique int64 ids), ...]`` ->
        ``[values (len(ids), *row_shape), ...]``, all asked for at once. A sharded table's
        servers are each asked for their own rows only."""
        bufs, requests, servers = [], [], set()
        posts = []
        for k, ids in requests_:
            shape, dtype = self._meta[k]
            buf = np.empty((ids.shape[0],) + tuple(shape[1:]), dtype=dtype)
            bufs.append(buf)
            self._stats.add(rows_requested=int(ids.shape[0]))
            if k not in self._bounds:
                # a dense key on one server: fetch it whole, keep the rows asked for
                posts.append((k, ids, buf, None))
                continue
            cuts = split_rows(ids, self._bounds[k])
            for s, server in enumerate(self._world.server_ranks):
                lo, hi = int(cuts[s]), int(cuts[s + 1])
                if hi == lo:
                    continue
                servers.add(server)
                requests.append(self._peer.Irecv(buf[lo:hi], source=server, tag=TAG_REPLY))
                requests.append(self._peer.isend(('pull_rows', self._sid, k, hi - lo),
                                                 dest=server, tag=TAG_REQUEST))
                requests.append(self._peer.Isend(ids[lo:hi], dest=server, tag=TAG_DATA))
                self._stats.add(sparse_bytes_sent=ids[lo:hi].nbytes,
                                sparse_bytes_received=buf[lo:hi].nbytes,
                                rows_transferred=hi - lo)
        if requests:
            self._wait_requests(requests, sorted(servers), 'row_sparse_pull')
        dense_keys = [k for k, _, _, _ in posts]
        if dense_keys:
            whole = [NDArray(np.empty(self._meta[k][0], self._meta[k][1]), cpu())
                     for k in dense_keys]
            self.pull(dense_keys, out=whole)
            for (k, ids, buf, _), value in zip(posts, whole):
                buf[...] = value.asnumpy()[ids]
        return bufs

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
                if key in self._bounds:
                    shards.setdefault(key, []).append(state)
                else:
                    states[key] = state
        for key, parts in shards.items():
            states[key] = _join_states(parts)
        write_file_atomic(fname, dumps((states, optimizer) if dump_optimizer else states))

    def load_optimizer_states(self, fname):
        """Load states written by :meth:`save_optimizer_states` into the servers' updaters
        (each server gets its rows of a sharded table's states)."""
        from ..optimizer.pickling import dumps, load_states  # pylint: disable=import-outside-toplevel
        with open(fname, 'rb') as fin:
            blob = fin.read()
        if self.rank == 0:
            if not self._bounds:
                self._ask_all('set_states', blob)
            else:
                states, optimizer = load_states(blob, fname)
                for s, server in enumerate(self._world.server_ranks):
                    mine = {key: (_slice_state(state, self._bounds[key][s],
                                               self._bounds[key][s + 1])
                                  if key in self._bounds else state)
                            for key, state in states.items()}
                    part = dumps((mine, optimizer) if optimizer is not None else mine)
                    self._ask(server, 'set_states', None, part)
        self._coll.barrier('load_optimizer_states')


def _join_states(parts):
    """One optimizer state of a sharded table from its servers' states (in server order)."""
    first = parts[0]
    if first is None:
        return None
    if isinstance(first, (tuple, list)):
        return type(first)(_join_states([p[i] for p in parts]) for i in range(len(first)))
    if isinstance(first, NDArray):
        whole = np.concatenate([p.tostype('default').asnumpy() for p in parts], axis=0)
        value = NDArray(whole, cpu())
        return value.tostype(first.stype) if first.stype != 'default' else value
    return first


def _slice_state(state, first, end):
    """The rows [first, end) of an optimizer state of a sharded table."""
    if state is None:
        return None
    if isinstance(state, (tuple, list)):
        return type(state)(_slice_state(s, first, end) for s in state)
    if isinstance(state, NDArray):
        rows = state.tostype('default').asnumpy()[int(first):int(end)]
        value = NDArray(np.ascontiguousarray(rows), cpu())
        return value.tostype(state.stype) if state.stype != 'default' else value
    return state
