"""Row_sparse tables held by the parameter servers, sharded by rows: the worker side.

A table of ``R`` rows is cut into ``S`` contiguous ranges, one per server rank. Workers send a
server only the rows of its range: pushes as (row ids, rows), pulls as row ids answered with
those rows. Two update disciplines exist:

- ``async`` (``dist_async``): a server applies every push when it arrives.
- ``sync`` (``dist_sync`` / ``dist_device_sync`` with server ranks, "hybrid" training): every
  worker makes one push per table and server per step (possibly of no row); a server applies
  *round* ``k`` when it holds the ``k``-th push of every worker, summing them in worker order,
  then acknowledges it to every worker. A worker's reads wait for the acknowledgements of its
  own earlier pushes, so they see every update of the rounds it took part in, as with an
  all-reduce.

For the embedding cache, a server also keeps a version per row (how many gradient updates its
pushes held: a cache pushes several of a row at once) and its round count; a read can send the versions of the rows a worker holds and the bound
on their staleness, and the server sends back only the rows that are too stale, plus the current
versions (see :mod:`.embedding_cache`)."""
import numpy as np

from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from ..context import cpu
from ..sparse_storage import INDEX_DTYPE, sorted_unique
from .mpi_comm import TAG_ACK, TAG_ACK_ROWS, TAG_DATA, TAG_REPLY, TAG_REQUEST, TAG_TABLES
from .sparse_wire import host_rows, pack_counted_rows, shard_bounds, split_rows

__all__ = ['RowTables', 'next_store_id', 'join_states', 'slice_state']

_STORE_IDS = [0]


def next_store_id():
    """A number for a new server-backed store; every worker creates its stores in the same order,
    so the numbers agree between workers and the servers can tell the stores apart."""
    _STORE_IDS[0] += 1
    return _STORE_IDS[0]


class _Table(object):
    """What a worker knows of one sharded table."""
    __slots__ = ('shape', 'dtype', 'bounds', 'sync', 'rounds', 'tag', 'acked')

    def __init__(self, shape, dtype, bounds, sync, tag):
        self.tag = tag           # the tag of the servers' replies to reads of this table
        self.shape = shape
        self.dtype = dtype
        self.bounds = bounds
        self.sync = sync
        self.rounds = 0          # pushes this worker made (sync: rounds it took part in)
        self.acked = 0           # the last round whose acknowledgement was read


class RowTables(object):
    """The sharded row_sparse tables of one store, seen from a worker.

    Parameters
    ----------
    store : DistKVStore or DistAsyncKVStore
        Provides ``_peer`` (the world communicator, possibly emulating a slower network),
        ``_world``, ``_sid``, ``_stats``, ``rank`` and ``_wait_requests``.
    """

    def __init__(self, store):
        self._store = store
        self.tables = {}
        self._acks = []          # (request, buffer, server) of unacknowledged sync pushes
        self._sends = []         # (request, buffer, server) of sync pushes still being sent
        self._by_tag = {}
        self.on_round = None     # on_round(key, round, small, ids, growths) per acknowledgement

    def __contains__(self, key):
        return key in self.tables

    @property
    def _servers(self):
        return self._store._world.server_ranks

    # ---- init ----------------------------------------------------------------------
    def init(self, key, value, sync):
        """Make ``key`` a sharded table of ``value``'s shape; rank 0 sends every server its
        range of rows (as dense rows)."""
        store = self._store
        shape, dtype = tuple(value.shape), np.dtype(value.dtype)
        if len(shape) < 1 or shape[0] < 1:
            raise MXNetError('kvstore %s: row_sparse key %r needs at least one row, got shape %s'
                             % (store.type, key, shape))
        bounds = shard_bounds(shape[0], len(self._servers))
        tag = TAG_TABLES + (store._sid % 100) * 100 + len(self.tables) % 100
        self.tables[key] = _Table(shape, dtype, bounds, sync, tag)
        self._by_tag[tag] = key
        if store.rank != 0:
            return
        workers = store._world.num_workers if sync else 0
        ids, values = host_rows(value._data)
        cuts = split_rows(ids, bounds)
        for s, server in enumerate(self._servers):
            first, end = int(bounds[s]), int(bounds[s + 1])
            shard = np.zeros((end - first,) + shape[1:], dtype=dtype)
            shard[ids[cuts[s]:cuts[s + 1]] - first] = values[cuts[s]:cuts[s + 1]]
            store._peer.send(('init_rows', store._sid, key,
                              (shard.shape, dtype.str, first, workers, tag)),
                             dest=server, tag=TAG_REQUEST)
            store._peer.Send(shard, dest=server, tag=TAG_DATA)
            store._receive(server, 'its reply to init of rows %d-%d of key %r'
                           % (first, end - 1, key))

    # ---- push -------------------------------------------------------------------------
    def push(self, key, ids, values, counts=None):
        """Send the rows ``ids`` (sorted, unique) of a gradient to the servers holding them;
        ``counts``: how many updates each row's sum holds (1 each by default).

        Async tables: only servers with rows get a message. Sync tables: every server gets
        this worker's push of the round (possibly of no row) and acknowledges the round once
        it is applied; :meth:`settle` waits for that. Returns the send requests."""
        store = self._store
        table = self.tables[key]
        cuts = split_rows(ids, table.bounds)
        if counts is None:
            counts = np.ones(ids.shape[0], dtype=np.int64)
        requests = []
        for s, server in enumerate(self._servers):
            lo, hi = int(cuts[s]), int(cuts[s + 1])
            if hi == lo and not table.sync:
                continue
            payload = pack_counted_rows(ids[lo:hi], counts[lo:hi], values[lo:hi])
            sends = [store._peer.isend(('push_rows', store._sid, key, hi - lo), dest=server,
                                       tag=TAG_REQUEST),
                     store._peer.Isend(payload, dest=server, tag=TAG_DATA)]
            requests += sends
            store._stats.add(sparse_bytes_sent=payload.nbytes)
            if table.sync:
                # the buffer must live until the send completes: settle() waits for it
                self._sends += [(r, payload, server) for r in sends]
                ack = np.empty(4, dtype=np.int64)
                self._acks.append((store._peer.Irecv(ack, source=server, tag=TAG_ACK), ack,
                                   server))
        table.rounds += 1
        return requests

    def settle(self):
        """Wait until the servers applied every round this worker pushed to."""
        if not self._acks and not self._sends:
            return
        acks, sends = self._acks, self._sends
        self._acks, self._sends = [], []
        store = self._store
        others = [r for r in range(store._world.num_workers) if r != store._world.rank]
        # a round needs every worker's push: a worker that has ended blocks it for good
        store._wait_requests([a[0] for a in acks + sends], sorted(set(a[2] for a in acks)),
                             'the servers applying a synchronous round, which needs every '
                             "worker's push", workers=others)
        for _, head, server in acks:        # in the order each server sent them
            tag, rnd, small, nbig = (int(v) for v in head)
            rows = np.empty(2 * nbig, dtype=np.int64)
            if nbig:
                store._peer.Recv(rows, source=server, tag=TAG_ACK_ROWS)
            if self.on_round is not None:
                self.on_round(self._by_tag[tag], rnd, small, rows[:nbig], rows[nbig:])

    # ---- reads ---------------------------------------------------------------------------
    def request(self, key, ids, versions=None, bound=0):
        """Ask the servers for rows ``ids`` (sorted, unique) of ``key``; returns a handle for
        :meth:`complete` (one read of a table may be under way at a time: its replies share
        the table's tag). Without ``versions`` every row is sent back. With ``versions`` (the
        version of this worker's copy of each row, -1 for none) a server sends back the rows
        whose copy is absent or more than ``bound`` versions behind, and the current version
        of every row and its round count."""
        store = self._store
        table = self.tables[key]
        cuts = split_rows(ids, table.bounds)
        parts = []
        for s, server in enumerate(self._servers):
            lo, hi = int(cuts[s]), int(cuts[s + 1])
            if hi == lo:
                continue
            extra = (hi - lo, None if versions is None else int(bound), table.tag)
            wanted = np.ascontiguousarray(ids[lo:hi])
            reqs = [store._peer.isend(('pull_rows', store._sid, key, extra), dest=server,
                                      tag=TAG_REQUEST),
                    store._peer.Isend(wanted, dest=server, tag=TAG_DATA), wanted]
            sent = ids[lo:hi].nbytes
            head = None
            if versions is not None:
                mine = np.ascontiguousarray(versions[lo:hi], dtype=np.int64)
                reqs += [store._peer.Isend(mine, dest=server, tag=TAG_DATA), mine]
                sent += mine.nbytes
                head = np.empty(hi - lo + 1, dtype=np.int64)
                reqs.append(store._peer.Irecv(head, source=server, tag=table.tag))
            store._stats.add(sparse_bytes_sent=sent)
            parts.append((server, lo, hi, head, reqs))
        return (key, ids, versions, bound, parts)

    def complete(self, handle):
        """Finish a :meth:`request`: returns ``(values, versions, rounds, sent)``; without
        versions asked for, ``values`` holds every row and the rest is None. With versions,
        ``values`` holds the rows sent back (``sent`` marks them, in ``ids`` order) and
        ``versions``/``rounds`` the servers' version of every row and round count."""
        key, ids, versions, bound, parts = handle
        store = self._store
        table = self.tables[key]
        row_shape = tuple(table.shape[1:])
        # the send buffers ride along in each part's list (kept alive until this point)
        requests = [r for part in parts for r in part[4] if not isinstance(r, np.ndarray)]
        servers = sorted(set(part[0] for part in parts))
        if versions is None:
            values = np.empty((ids.shape[0],) + row_shape, dtype=table.dtype)
            for server, lo, hi, _, _ in parts:
                requests.append(store._peer.Irecv(values[lo:hi], source=server, tag=table.tag))
                store._stats.add(sparse_bytes_received=values[lo:hi].nbytes,
                                 rows_transferred=hi - lo)
            if requests:
                store._wait_requests(requests, servers, 'row_sparse_pull')
            return values, None, None, None
        if requests:
            store._wait_requests(requests, servers, 'row_sparse_pull')
        current = np.empty(ids.shape[0], dtype=np.int64)
        rounds = np.empty(ids.shape[0], dtype=np.int64)
        for _, lo, hi, head, _ in parts:
            current[lo:hi] = head[:-1]
            rounds[lo:hi] = head[-1]
            store._stats.add(sparse_bytes_received=head.nbytes)
        sent = (versions < 0) | (current - versions > bound)
        values = np.empty((int(sent.sum()),) + row_shape, dtype=table.dtype)
        receives, start = [], 0
        for server, lo, hi, _, _ in parts:
            count = int(sent[lo:hi].sum())
            if count:
                receives.append(store._peer.Irecv(values[start:start + count], source=server,
                                                  tag=table.tag))
                store._stats.add(sparse_bytes_received=values[start:start + count].nbytes,
                                 rows_transferred=count)
                start += count
        if receives:
            store._wait_requests(receives, servers, 'row_sparse_pull')
        return values, current, rounds, sent

    def fetch(self, key, ids):
        """Current values of rows ``ids`` (sorted, unique) of ``key``."""
        self.settle()
        return self.complete(self.request(key, ids))[0]

    def pull_whole(self, key, out):
        """Receive requests filling ``out`` (the whole table, dense) from every server."""
        store = self._store
        bounds = self.tables[key].bounds
        requests = []
        for s, server in enumerate(self._servers):
            requests.append(store._peer.Irecv(out[bounds[s]:bounds[s + 1]], source=server,
                                              tag=TAG_REPLY))
            requests.append(store._peer.isend(('pull', store._sid, key, None), dest=server,
                                              tag=TAG_REQUEST))
        store._stats.add(dense_bytes_received=out.nbytes)
        return requests

    def versions(self, key, ids):
        """The servers' current version of rows ``ids`` (for tests and diagnostics)."""
        self.settle()
        store = self._store
        table = self.tables[key]
        cuts = split_rows(ids, table.bounds)
        out = np.empty(ids.shape[0], dtype=np.int64)
        for s, server in enumerate(self._servers):
            lo, hi = int(cuts[s]), int(cuts[s + 1])
            if hi > lo:
                out[lo:hi] = store._ask(server, 'row_versions', key,
                                        np.ascontiguousarray(ids[lo:hi]))
        return out

    # ---- optimizer states -------------------------------------------------------------
    def split_states(self, states, server_index):
        """The part of a states dict that server ``server_index`` holds."""
        return {key: (slice_state(state, self.tables[key].bounds[server_index],
                                  self.tables[key].bounds[server_index + 1])
                      if key in self.tables else state)
                for key, state in states.items()}


def checked_rows(key, row_ids, rows):
    """Sorted unique int64 row ids of a row_sparse_pull, checked against a table of ``rows``."""
    ids = row_ids.asnumpy() if isinstance(row_ids, NDArray) else np.asarray(row_ids)
    ids = sorted_unique(np, ids.astype(INDEX_DTYPE).reshape(-1))
    if ids.size and (ids[0] < 0 or ids[-1] >= rows):
        raise MXNetError('row_sparse_pull: row id %d out of range for key %r with %d rows'
                         % (ids[0] if ids[0] < 0 else ids[-1], key, rows))
    return ids


def join_states(parts):
    """One optimizer state of a sharded table from its servers' states (in server order)."""
    first = parts[0]
    if first is None:
        return None
    if isinstance(first, (tuple, list)):
        return type(first)(join_states([p[i] for p in parts]) for i in range(len(first)))
    if isinstance(first, NDArray):
        whole = np.concatenate([p.tostype('default').asnumpy() for p in parts], axis=0)
        value = NDArray(whole, cpu())
        return value.tostype(first.stype) if first.stype != 'default' else value
    return first


def slice_state(state, first, end):
    """The rows [first, end) of an optimizer state of a sharded table."""
    if state is None:
        return None
    if isinstance(state, (tuple, list)):
        return type(state)(slice_state(s, first, end) for s in state)
    if isinstance(state, NDArray):
        rows = state.tostype('default').asnumpy()[int(first):int(end)]
        value = NDArray(np.ascontiguousarray(rows), cpu())
        return value.tostype(state.stype) if state.stype != 'default' else value
    return state
