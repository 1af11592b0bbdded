"""The parameter server of ``dist_async``: ``python -m mpi4py -m mxmod.kvstore.server``.

It runs on the last ``MXMOD_NUM_SERVERS`` ranks of the MPI world (``python -m mxmod.launch -s S``
starts it there), holds the keys assigned to it, applies the optimizer to each push as it arrives
and answers pulls, until every worker has said it is done. Any error raises, which (under
``python -m mpi4py``) aborts the whole job with the traceback on stderr."""
import collections
import pickle

import numpy as np

from ..base import MXNetError
from ..context import cpu
from ..ndarray.ndarray import from_xp
from . import mpi_comm, net_emulation
from .mpi_comm import TAG_ACK, TAG_ACK_ROWS, TAG_DATA, TAG_REPLY, TAG_REQUEST
from ..ops.sparse_matrix import sum_rows as sum_by_row
from .sparse_wire import COUNT_BYTES, row_bytes, sum_rows, unpack_counted_rows
from .twobit_wire import packed_size, unpack_add
from ..sparse_storage import INDEX_DTYPE, RowSparseStorage, rsp_gather, to_dense

__all__ = ['ParameterServer', 'main']


class _Store(object):
    """The keys and updater of one worker-side store object."""

    def __init__(self):
        self.values = {}
        self.tables = {}         # row_sparse key -> _Shard
        self.updater = None


class _Shard(object):
    """A server's range of rows of a row_sparse table: where it starts, the version of every
    row (how many gradient updates its pushes held), and for a synchronous table the rounds applied and the pushes
    waiting for their round (per worker rank)."""

    def __init__(self, first, rows, workers, tag):
        self.first = first
        self.workers = workers
        self.tag = tag           # names the table in acknowledgements
        self.versions = np.zeros(rows, dtype=np.int64)
        self.rounds = 0
        self.queue = {}


class ParameterServer(object):
    """Serve requests from the workers until all of them have finished.

    Parameters
    ----------
    world : mpi_comm.World, optional
    """

    def __init__(self, world=None):
        self.world = world if world is not None else mpi_comm.world()
        if not self.world.is_server:
            raise MXNetError('MPI rank %d is a worker rank, not a server: set %s to the number of '
                             'server ranks at the end of the MPI world'
                             % (self.world.rank, mpi_comm.ENV_SERVERS))
        self.comm = net_emulation.wrap(self.world.comm)
        self.stores = {}
        self._outgoing = []      # (request, buffer) of replies still being sent
        self.pushes = 0
        self._handlers = {'init': self._init, 'push': self._push, 'pull': self._pull,
                          'pushpull': self._pushpull, 'optimizer': self._optimizer,
                          'init_rows': self._init_rows, 'push_rows': self._push_rows,
                          'pull_rows': self._pull_rows, 'row_versions': self._row_versions,
                          'updater': self._updater, 'sync': self._ack,
                          'get_states': self._get_states, 'set_states': self._set_states}

    def _reply(self, buf, dest, tag):
        """Send ``buf`` to a worker without waiting for it to be received: a worker may first
        wait for this server's other work (an acknowledgement) before it posts the receive."""
        buf = np.ascontiguousarray(buf)
        self._outgoing.append((self.comm.Isend(buf, dest=dest, tag=tag), buf))

    def _prune(self):
        if self._outgoing:
            self._outgoing = [(req, buf) for req, buf in self._outgoing if not req.Test()]

    def serve(self):
        """Handle requests until every worker has sent ``stop``.

        A worker that exits normally sends ``stop`` and then its goodbye; one whose goodbye
        arrives without a ``stop`` (and no request of anyone pending) ends the server with an
        MXNetError instead of leaving it waiting forever.
        """
        MPI = mpi_comm.mpi()
        status = MPI.Status()
        stopped = set()

        def request_pending():
            return self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=TAG_REQUEST, status=status)

        def blame():
            for rank in sorted(self.world.watch.gone):
                if rank < self.world.num_workers and rank not in stopped:
                    return ('kvstore server (%s): worker rank %d %s without telling the server '
                            'it was done' % (self.world.watch.role(self.world.rank), rank,
                                             self.world.watch.left(rank)))
            return None
        def next_request():
            self._prune()
            return request_pending()
        while len(stopped) < self.world.num_workers:
            self.world.watch.wait(next_request, blame)
            src = status.Get_source()
            op, sid, key, extra = self.comm.recv(source=src, tag=TAG_REQUEST)
            if op == 'stop':
                stopped.add(src)
                continue
            handler = self._handlers.get(op)
            if handler is None:
                raise MXNetError('kvstore server: unknown request %r from rank %d' % (op, src))
            handler(src, self.stores.setdefault(sid, _Store()), key, extra)
        # every worker is done: replies nobody will receive (a prefetch never used) are dropped
        for req, _ in self._outgoing:
            if not req.Test():
                req.Cancel()
                req.Wait()
        self._outgoing = []

    # ---- handlers -------------------------------------------------------------------
    def _ack(self, src, store, key, extra, reply='ok'):
        self.comm.send(reply, dest=src, tag=TAG_REPLY)

    def _init(self, src, store, key, extra):
        shape, dtype = extra
        data = np.empty(shape, dtype=np.dtype(dtype))
        self.comm.Recv(data, source=src, tag=TAG_DATA)
        store.values[key] = from_xp(data, cpu())
        self._ack(src, store, key, extra)

    def _init_rows(self, src, store, key, extra):  # pylint: disable=too-many-locals
        """This server's shard of a row_sparse table: rows [first, first + len) as a
        row_sparse value holding every row of the shard. ``workers`` > 0 makes it a
        synchronous table (updates applied in rounds of one push per worker)."""
        shape, dtype, first, workers, tag = extra
        data = np.empty(shape, dtype=np.dtype(dtype))
        self.comm.Recv(data, source=src, tag=TAG_DATA)
        ids = np.arange(shape[0], dtype=INDEX_DTYPE)
        store.values[key] = from_xp(RowSparseStorage(data, ids, shape), cpu())
        store.tables[key] = _Shard(int(first), shape[0], int(workers), int(tag))
        self._ack(src, store, key, extra)

    def _shard(self, store, key, src):
        stored = self._stored(store, key, src)
        if key not in store.tables:
            raise MXNetError('kvstore server: rank %d sent rows for key %r, which is not a '
                             'row_sparse table' % (src, key))
        return stored, store.tables[key]

    def _push_rows(self, src, store, key, extra):
        """Rows of a gradient for this shard, with how many updates each row's sum holds (a
        worker's embedding cache pushes several at once). Async tables: the optimizer updates
        them now (MXNet's lazy update). Sync tables: the push waits for the other workers' pushes
        of the same round; the round's sum is applied at once and acknowledged to every worker.
        A row's version grows by the updates its pushes held."""
        stored, shard = self._shard(store, key, src)
        nrows = int(extra)
        per_row = row_bytes(stored.shape, stored.dtype) + COUNT_BYTES
        buf = np.empty(nrows * per_row, dtype=np.uint8)
        self.comm.Recv(buf, source=src, tag=TAG_DATA)
        ids, counts, values = unpack_counted_rows(buf, nrows, stored.shape, stored.dtype)
        ids = ids - shard.first
        if not shard.workers:
            self._apply_rows(store, key, stored, shard, ids, values)
            np.add.at(shard.versions, ids, counts)
            return
        shard.queue.setdefault(src, collections.deque()).append((ids, values, counts))
        if len(shard.queue) < shard.workers or not all(shard.queue.values()):
            return
        parts = [shard.queue[rank].popleft() for rank in sorted(shard.queue)]
        total = sum_rows([(i, v) for i, v, _ in parts], stored.shape, stored.dtype)
        if total.indices.shape[0] or store.updater is None:
            self._apply_rows(store, key, stored, shard, total.indices, total.data)
        ids = np.concatenate([i for i, _, _ in parts])
        counts = np.concatenate([c for _, _, c in parts])
        np.add.at(shard.versions, ids, counts)
        shard.rounds += 1
        # the acknowledgement tells how far versions moved: rows that grew by more than the
        # number of workers (held-back updates pushed at once) one by one, the rest by at most
        # the largest growth among them
        grown = sum_by_row(np, ids, counts)
        big = grown[1] > shard.workers
        small = int(grown[1][~big].max()) if (~big).any() else 0
        rows = np.concatenate([grown[0][big] + shard.first, grown[1][big]]).astype(np.int64)
        head = np.array([shard.tag, shard.rounds, small, int(big.sum())], dtype=np.int64)
        for rank in sorted(shard.queue):
            self._reply(head, rank, TAG_ACK)
            if big.any():
                self._reply(rows, rank, TAG_ACK_ROWS)

    def _apply_rows(self, store, key, stored, shard, ids, values):
        if store.updater is None and not shard.workers:
            raise MXNetError('kvstore server: a push to key %r arrived before any optimizer was '
                             'set (dist_async needs kv.set_optimizer on the workers)' % (key,))
        if store.updater is None:
            # no optimizer (a store used for sums): the round's sum becomes the value, as a
            # local store's does (rows not pushed are zero)
            stored._data.data[...] = 0
            stored._data.data[ids] = values
        else:
            grad = RowSparseStorage(values, ids, stored.shape)
            store.updater(key, from_xp(grad, cpu()), stored)
        self.pushes += 1

    def _pull_rows(self, src, store, key, extra):
        """Send the current values of the requested rows of this shard; with the versions of
        the worker's copies, first every row's version and the round count, then only the rows
        that are absent there or more than ``bound`` versions behind."""
        stored, shard = self._shard(store, key, src)
        nrows, bound, tag = extra
        ids = np.empty(int(nrows), dtype=INDEX_DTYPE)
        self.comm.Recv(ids, source=src, tag=TAG_DATA)
        local = ids - shard.first
        if bound is None:
            self._reply(rsp_gather(stored._data, local), src, tag)
            return
        theirs = np.empty(int(nrows), dtype=np.int64)
        self.comm.Recv(theirs, source=src, tag=TAG_DATA)
        current = shard.versions[local]
        self._reply(np.concatenate([current, [shard.rounds]]).astype(np.int64), src, tag)
        sent = (theirs < 0) | (current - theirs > int(bound))
        if sent.any():
            self._reply(rsp_gather(stored._data, local[sent]), src, tag)

    def _row_versions(self, src, store, key, extra):
        _, shard = self._shard(store, key, src)
        self._ack(src, store, key, extra, shard.versions[np.asarray(extra) - shard.first].copy())

    def _stored(self, store, key, src):
        if key not in store.values:
            raise MXNetError('kvstore server: rank %d used key %r, which was never initialized '
                             '(call kv.init on every worker first)' % (src, key))
        return store.values[key]

    def _push(self, src, store, key, extra):
        stored = self._stored(store, key, src)
        kind, threshold = extra
        if kind == 'dense':
            grad = np.empty(stored.shape, dtype=stored.dtype)
            self.comm.Recv(grad, source=src, tag=TAG_DATA)
        else:
            packed = np.empty(packed_size(stored.size), dtype=np.uint8)
            self.comm.Recv(packed, source=src, tag=TAG_DATA)
            grad = np.zeros(stored.shape, dtype=stored.dtype)
            unpack_add(packed, threshold, grad)
        if store.updater is None:
            raise MXNetError('kvstore server: a push to key %r arrived before any optimizer was '
                             'set (dist_async needs kv.set_optimizer on the workers)' % (key,))
        store.updater(key, from_xp(grad, cpu()), stored)
        self.pushes += 1

    def _pull(self, src, store, key, extra):
        value = self._stored(store, key, src)._data
        self._reply(to_dense(value), src, TAG_REPLY)

    def _pushpull(self, src, store, key, extra):
        self._push(src, store, key, extra)
        self._pull(src, store, key, extra)

    def _optimizer(self, src, store, key, extra):
        from ..optimizer import get_updater  # pylint: disable=import-outside-toplevel
        from ..optimizer.pickling import loads  # pylint: disable=import-outside-toplevel
        store.updater = get_updater(loads(extra))
        self._ack(src, store, key, extra)

    def _updater(self, src, store, key, extra):
        store.updater = pickle.loads(extra)
        self._ack(src, store, key, extra)

    def _get_states(self, src, store, key, extra):
        if store.updater is None or not hasattr(store.updater, 'get_states'):
            self._ack(src, store, key, extra, ('error', 'no optimizer was set on this kvstore; '
                                                         'call set_optimizer first'))
            return
        self._ack(src, store, key, extra, store.updater.get_states(extra))

    def _set_states(self, src, store, key, extra):
        if store.updater is None or not hasattr(store.updater, 'set_states'):
            self._ack(src, store, key, extra, ('error', 'no optimizer was set on this kvstore; '
                                                         'call set_optimizer first'))
            return
        store.updater.set_states(extra)
        self._ack(src, store, key, extra)


def main():
    """Entry point of a server rank."""
    ParameterServer().serve()


if __name__ == '__main__':
    main()
