"""The embedding-cache controls of the distributed stores (``kv.set_embedding_cache``,
prefetch, flush and diagnostics), kept apart from the store's push/pull machinery."""
import numpy as np

from ..base import MXNetError
from .embedding_cache import EmbeddingCache, POLICIES
from .sharded import checked_rows

__all__ = ['CacheControl']


class CacheControl(object):
    """Mixin of :class:`~mxmod.kvstore.dist.DistKVStore`; needs ``_tables``, ``_cache``,
    ``_stats``, ``_world``, ``_wait_requests`` and ``type``."""

    def set_embedding_cache(self, policy='lfu', capacity=0.1, bound=100, prefetch=True,
                            keys=None):
        """Cache embedding rows of the server-held row_sparse tables on this worker, with
        bounded staleness (HET): a cached row is read without asking the servers while it is at
        most ``bound`` updates behind, and its gradients are pushed once ``bound`` updates are
        pending, when it is evicted, and at :meth:`flush` (Module calls it at epoch ends and
        before checkpoints). ``bound=0`` gives the parameters of the run without a cache.

        Every worker must call it, before or after ``init`` of the tables (tables initialized
        later, for instance by ``fit(..., kvstore=kv)``, are cached as they arrive).

        Parameters
        ----------
        policy : {'lru', 'lfu'}
            Which row to evict: least recently or least frequently read.
        capacity : int or float
            Rows cached per table: a number of rows (a table with fewer rows is cached whole,
            and an INFO line says so), or a fraction (0, 1] of each table's rows.
        bound : int
            Largest staleness, in updates, of a read or a pending write (>= 0).
        prefetch : bool
            Let ``Module.fit`` read the next batch's rows while the current batch computes.
        keys : list, optional
            The tables to cache (default: every row_sparse table of the store).
        """
        if self._tables is None:
            raise MXNetError('set_embedding_cache: kvstore %r has no server ranks to hold the '
                             'tables; launch with server processes (python -m mxmod.launch -n W '
                             '-s S ...) and use dist_sync, dist_device_sync or dist_async'
                             % self.type)
        if not isinstance(policy, str) or policy.lower() not in POLICIES:
            raise MXNetError('set_embedding_cache: policy=%r is not supported; allowed values: %s'
                             % (policy, ', '.join(repr(p) for p in POLICIES)))
        if isinstance(bound, bool) or not isinstance(bound, (int, np.integer)) or bound < 0:
            raise MXNetError('set_embedding_cache: bound=%r must be an integer >= 0 (the largest '
                             'staleness in updates; 0 disables staleness)' % (bound,))
        if isinstance(capacity, bool) or not isinstance(capacity, (int, float, np.integer,
                                                                   np.floating)):
            raise MXNetError('set_embedding_cache: capacity=%r must be a number of rows (int >= '
                             '1) or a fraction of each table in (0, 1]' % (capacity,))
        if isinstance(capacity, (float, np.floating)):
            if not 0.0 < float(capacity) <= 1.0:
                raise MXNetError('set_embedding_cache: capacity=%r as a fraction must be in '
                                 '(0, 1]' % (capacity,))
            capacity = float(capacity)
        elif capacity < 1:
            raise MXNetError('set_embedding_cache: capacity=%r must be >= 1 row' % (capacity,))
        else:
            capacity = int(capacity)
        tables = list(self._tables.tables)
        if keys is not None:
            keys = list(keys) if isinstance(keys, (list, tuple)) else [keys]
            for k in keys:
                if tables and k not in self._tables:
                    raise MXNetError('set_embedding_cache: key %r is not a row_sparse table of '
                                     'this store; tables: %s' % (k, tables))
        # tables initialized later (e.g. by fit(kvstore=kv)) are cached as they arrive
        self._tables.settle()
        self._cache = EmbeddingCache(self._tables, keys, policy.lower(), capacity, int(bound),
                                     bool(prefetch), self._stats,
                                     margin=self._world.num_workers * self._world.num_servers)

    def prefetch(self, key, row_ids):
        """Start reading rows ``row_ids`` of ``key`` for the step after this worker's next push
        (used by ``Module.fit`` when the embedding cache prefetches)."""
        if self._cache is None or key not in self._cache:
            return
        rows = checked_rows(key, row_ids, self._tables.tables[key].shape[0])
        self._cache.prefetch(key, rows)

    @property
    def prefetching(self):
        """Whether reads of the next batch's rows may start early (a cache with prefetch)."""
        return self._cache is not None and self._cache.prefetch_on

    def flush(self):
        """Push every update the embedding cache holds back (a round of every cached table);
        a collective call: every worker calls it at the same point."""
        if self._cache is None:
            return
        sends = []
        for key in self._cache.caches:
            ids, values, counts = self._cache.drain(key)
            sends += self._tables.push(key, ids, values, counts)
        self._wait_requests(sends, self._world.server_ranks, 'flush')
        self._tables.settle()

    def row_versions(self, key, row_ids):
        """The servers' version (updates applied) of rows ``row_ids`` of a server-held table,
        and this worker's cached version of them (-1: not cached); for diagnostics."""
        if self._tables is None or key not in self._tables:
            raise MXNetError('row_versions: key %r is not a row_sparse table held by server '
                             'ranks' % (key,))
        rows = checked_rows(key, row_ids, self._tables.tables[key].shape[0])
        server = self._tables.versions(key, rows)
        mine = np.full(rows.shape[0], -1, dtype=np.int64)
        if self._cache is not None and key in self._cache:
            cache = self._cache.caches[key]
            slots = cache.slot_of[rows]
            mine[slots >= 0] = cache.version[slots[slots >= 0]]
        return server, mine

    def cache_pending(self, key):
        """The most updates a row of ``key`` has waiting in the embedding cache."""
        if self._cache is None or key not in self._cache:
            return 0
        return self._cache.caches[key].max_pending()
