"""A worker-side cache of embedding rows with bounded staleness (HET's cache-enabled hybrid
training), in front of the sharded row_sparse tables of the parameter servers.

Every cached row carries the version it had on its server when it was read: how many gradient
updates had reached the row (a push of ``p`` held-back updates of a row counts ``p``). Reads and
writes follow the bound ``b``:

- A read sends the ids and versions of the rows it needs; the server sends back only the rows
  that are absent from the cache or more than ``b`` updates behind, plus every row's current
  version, so a fresh row's value never travels. A row whose lag was established in the current
  round of a synchronous table is served without asking: a server cannot finish a round without
  this worker's push, so nothing can have changed it since. (An asynchronous table has no rounds;
  its rows are always checked.)
- A write adds the row's gradient to the row's pending sum; the sum is pushed when ``b`` updates
  are pending (every step when ``b`` is 0 or 1), when the row is evicted, and on :meth:`flush`
  (epoch ends and checkpoint saves), so no update waits more than ``b`` steps.

Eviction is LRU (least recently read) or LFU (least often read), exact up to 4,096 cached rows
and sampled above (the lowest score among 4,096 rows drawn at random, or 8 per row to evict). ``prefetch`` reads the rows of
the next batch while the current one computes; when the rows are used, any row the prefetch could
not prove fresh enough for the later round is read again.

A capacity given as a number of rows applies to every cached table; a table with fewer rows is
cached whole (its capacity is its rows; an INFO line says so), as a fraction of 1.0 would, so
one number serves models whose tables range from a few rows to millions."""
import logging
import time

import numpy as np

from .table_cache import TableCache

__all__ = ['EmbeddingCache', 'TableCache', 'POLICIES']

POLICIES = ('lru', 'lfu')


class EmbeddingCache(object):
    """The caches of a store's row_sparse tables (see the module's description).

    Parameters
    ----------
    tables : RowTables
        The store's sharded tables.
    keys : list
        The tables to cache.
    policy : str
    capacity : int or float
        Rows per table (an int; a table with fewer rows is cached whole), or a fraction of each
        table's rows (a float in (0, 1]).
    bound : int
    prefetch : bool
    stats : CommStats
    margin : int
        The most an unlisted row's version can grow in one round (workers x servers).
    """

    def __init__(self, tables, keys, policy, capacity, bound, prefetch, stats, margin=1):
        self.tables = tables
        self.bound = bound
        self.prefetch_on = prefetch
        self.stats = stats
        self.policy = policy
        self.capacity = capacity
        self.margin = margin
        self.keys = keys             # the tables to cache; None: every row_sparse table
        self.caches = {}
        for key in list(tables.tables):
            if self.wants(key):
                self.add(key)
        tables.on_round = self._on_round

    def wants(self, key):
        """Whether table ``key`` is to be cached (when it exists)."""
        return self.keys is None or key in self.keys

    def add(self, key):
        """Cache table ``key`` (already initialized on the servers)."""
        table = self.tables.tables[key]
        rows = table.shape[0]
        capacity = self.capacity
        count = int(round(capacity * rows)) if isinstance(capacity, float) else capacity
        if count > rows:
            logging.getLogger('mxmod').info(
                'set_embedding_cache: table %r has %d rows, fewer than capacity=%d: it is cached '
                'whole (%d rows)', key, rows, count, rows)
            count = rows
        cache = TableCache(key, table.shape, table.dtype, max(count, 1), self.policy,
                           self.bound)
        # a round not yet acknowledged grows an unlisted row by at most one update per worker
        # and server
        cache.margin = self.margin
        self.caches[key] = cache

    def _on_round(self, key, rnd, small, rows, growths):
        if key in self.caches:
            self.caches[key].note_round(rnd, small, rows, growths)
        self.tables.tables[key].acked = max(self.tables.tables[key].acked, rnd)

    def __contains__(self, key):
        return key in self.caches

    def read(self, key, ids):
        """The current rows ``ids`` (sorted, unique) of ``key`` within the bound; completes a
        prefetch of the same rows when one is under way. Counts a hit for every row whose
        value did not travel for this read and a miss for every row that did."""
        cache = self.caches[key]
        table = self.tables.tables[key]
        tic = time.perf_counter()
        self.tables.settle()
        use_round = table.rounds
        ready = cache.prefetched
        cache.prefetched = None
        travelled, same = 0, False
        if ready is not None:
            pids, handle, fresh, need = ready
            answer = _nothing(cache) if isinstance(handle, _Done) else \
                self.tables.complete(handle)
            same = pids.shape[0] == ids.shape[0] and np.array_equal(pids, ids)
            # the rows this read uses are checked again below: their staleness is counted there
            rows, travelled = cache.serve(pids, fresh, need, answer, use_round, self.stats,
                                          record=False)
            if not same:
                travelled = 0                  # prefetched other rows: this read starts anew
        fresh, need, versions = cache.split(ids, use_round, table.sync)
        if need.any() or not same or ready is not None:
            # rows not cached, or not provably fresh enough for this round
            answer = self.tables.complete(self.tables.request(key, ids[need], versions,
                                                              self.bound)) \
                if need.any() else _nothing(cache)
            rows, again = cache.serve(ids, fresh, need, answer, use_round, self.stats)
            travelled += again
        if ids.shape[0]:
            travelled = min(travelled, int(ids.shape[0]))
            self.stats.add(cache_hits=int(ids.shape[0]) - travelled, cache_misses=travelled,
                           row_wait_seconds=time.perf_counter() - tic)
        return rows

    def prefetch(self, key, ids):
        """Start reading rows ``ids`` for use after this worker's next push."""
        if not self.prefetch_on or key not in self.caches or self.bound == 0:
            # with bound 0 every row read before the coming round would have to be read again
            return
        cache = self.caches[key]
        table = self.tables.tables[key]
        if cache.prefetched is not None:
            self.read(key, cache.prefetched[0])       # finish the one under way first
        fresh, need, versions = cache.split(ids, table.rounds + 1, table.sync,
                                            unacknowledged=table.rounds + 1 - table.acked)
        handle = self.tables.request(key, ids[need], versions, self.bound) \
            if need.any() else None
        cache.prefetched = (ids, handle if handle is not None else _Done(cache), fresh, need)

    def write(self, key, ids, grads, step=None):
        """A step's gradient rows of ``key`` go through the cache; returns what to push: (ids,
        sums, update counts)."""
        return self.caches[key].write(ids, grads, self.stats, step=step)

    def drain(self, key):
        """Every pending row of ``key`` (for a flush): (ids, sums, update counts)."""
        cache = self.caches[key]
        empty = np.zeros(0, dtype=np.int64)
        return cache.write(empty, np.zeros((0,) + cache.shape[1:], cache.dtype), self.stats,
                           everything=True)


class _Done(object):
    """A prefetch that needed no server."""

    def __init__(self, cache):
        self.cache = cache


def _nothing(cache):
    empty = np.zeros(0, dtype=np.int64)
    return (np.zeros((0,) + cache.shape[1:], cache.dtype), empty, empty,
            np.zeros(0, dtype=bool))
