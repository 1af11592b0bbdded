"""The cached rows of one embedding table on a worker: values, versions and lags, held-back
gradient sums, and LRU/LFU eviction (see :mod:`.embedding_cache` for the protocol)."""
import collections

import numpy as np

from ..sparse_storage import sorted_unique
from .sparse_wire import sum_rows

__all__ = ['TableCache']

RECENT_ROUNDS = 8   # acknowledged rounds whose listed rows a late reply is caught up with
SAMPLE = 4096       # eviction candidates looked at when more rows are cached


class TableCache(object):
    """The cached rows of one table.

    Parameters
    ----------
    key : int or str
    shape : tuple
        The table's shape (rows first).
    dtype : numpy dtype
    capacity : int
        Rows kept at most.
    policy : {'lru', 'lfu'}
    bound : int
        Largest staleness allowed, in updates.
    """

    def __init__(self, key, shape, dtype, capacity, policy, bound):
        self.key = key
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.capacity = int(capacity)
        self.policy = policy
        self.bound = int(bound)
        row_shape = self.shape[1:]
        self.slot_of = np.full(self.shape[0], -1, dtype=np.int64)
        self.row_of = np.full(self.capacity, -1, dtype=np.int64)
        self.values = np.zeros((self.capacity,) + row_shape, dtype=self.dtype)
        self.version = np.zeros(self.capacity, dtype=np.int64)
        self.base = np.full(self.capacity, -1, dtype=np.int64)
        self.lag = np.zeros(self.capacity, dtype=np.int64)
        self.pending = np.zeros((self.capacity,) + row_shape, dtype=self.dtype)
        self.npending = np.zeros(self.capacity, dtype=np.int64)
        self.score = np.zeros(self.capacity, dtype=np.int64)
        self.free = np.arange(self.capacity - 1, -1, -1, dtype=np.int64)   # a stack of slots
        self.nfree = self.capacity
        self.tick = 0
        # per round (index = round number): the largest growth of a row's version not listed
        # one by one, summed over the servers; and the recently listed rows
        self.small = np.zeros(1024, dtype=np.int64)
        self.recent = collections.deque(maxlen=RECENT_ROUNDS)
        self.margin = 0          # the most a round not yet acknowledged can add (unlisted rows)
        self._rng = np.random.RandomState(len(self.shape) * 7919 + self.shape[0] % 7919)
        self.evicted = []            # (ids, pending sums) of evicted rows not yet pushed
        self.prefetched = None       # (ids, the handle of the read under way, its round)

    # ---- reads -------------------------------------------------------------------------
    def note_round(self, rnd, small, rows, growths):
        """A server applied round ``rnd``: unlisted rows grew by at most ``small``; ``rows``
        grew by ``growths`` (rows whose lag was established before the round)."""
        if rnd >= self.small.shape[0]:
            self.small = np.concatenate([self.small, np.zeros(max(rnd + 1, 2 * self.small.shape[0])
                                                              - self.small.shape[0], np.int64)])
        self.small[rnd] += small
        if rows.shape[0]:
            self.recent.append((rnd, rows, growths))
            slots = self.slot_of[rows]
            hit = slots >= 0
            hit[hit] = self.base[slots[hit]] < rnd
            np.add.at(self.lag, slots[hit], growths[hit])

    def _catch_up(self, slots, rounds):
        """Rows just read as of ``rounds``: add the listed growths of later rounds that were
        acknowledged before the reply was used."""
        for rnd, rows, growths in self.recent:
            later = rounds < rnd
            if not later.any():
                continue
            where = np.searchsorted(rows, self.row_of[slots])
            where = np.minimum(where, rows.shape[0] - 1)
            listed = (rows[where] == self.row_of[slots]) & later
            if listed.any():
                np.add.at(self.lag, slots[listed], growths[where[listed]])

    def lag_bound(self, slots, use_round, unacknowledged=0):
        """How far behind the servers cached rows can be at ``use_round``: the lag established
        when last read, listed growths since, and the unlisted growth of every round since
        (``unacknowledged`` rounds not yet acknowledged count ``margin`` each)."""
        if use_round >= self.small.shape[0]:
            self.note_round(use_round, 0, np.zeros(0, np.int64), np.zeros(0, np.int64))
        cum = np.cumsum(self.small[:use_round + 1])
        base = np.minimum(self.base[slots], use_round)
        drift = cum[use_round] - cum[np.maximum(base, 0)]
        return self.lag[slots] + drift + unacknowledged * self.margin

    def split(self, ids, use_round, sync, unacknowledged=0):
        """Which of ``ids`` the cache can serve at ``use_round`` without asking (mask), and
        the versions to send for the others (-1: not cached). With a synchronous table a row is
        served unasked when :meth:`lag_bound` proves it at most ``bound`` behind."""
        slots = self.slot_of[ids]
        cached = slots >= 0
        fresh = np.zeros(ids.shape[0], dtype=bool)
        if sync and cached.any():
            cslots = slots[cached]
            fresh[cached] = self.lag_bound(cslots, use_round, unacknowledged) <= self.bound
        need = ~fresh
        versions = np.where(cached, self.version[np.maximum(slots, 0)], -1)[need]
        return fresh, need, versions

    def serve(self, ids, fresh, need, answer, use_round, stats, record=True):
        """Merge the servers' ``answer`` = (values, versions, rounds, sent) for ``ids[need]``
        into the cache and return (the rows of ``ids``, how many rows travelled)."""
        values, current, rounds, sent = answer
        out = np.empty((ids.shape[0],) + self.shape[1:], dtype=self.dtype)
        slots = self.slot_of[ids]
        out[fresh] = self.values[slots[fresh]]
        staleness = [int(self.lag_bound(slots[fresh], use_round).max())] if fresh.any() else []
        need_ids, need_slots = ids[need], slots[need]
        kept = ~sent                          # cached and fresh enough: values not sent
        if kept.any():
            kslots = need_slots[kept]
            lag = current[kept] - self.version[kslots]
            self.lag[kslots] = lag
            self.base[kslots] = rounds[kept]
            self._catch_up(kslots, rounds[kept])
            staleness.append(int(self.lag_bound(kslots, use_round).max()))
        need_out = np.empty((need_ids.shape[0],) + self.shape[1:], dtype=self.dtype)
        need_out[kept] = self.values[need_slots[kept]]
        need_out[sent] = values
        out[need] = need_out
        # rows received: refresh cached ones, insert the others while there is room
        got_ids, got_slots = need_ids[sent], need_slots[sent]
        again = got_slots >= 0
        self.values[got_slots[again]] = values[again]
        self.version[got_slots[again]] = current[sent][again]
        self.base[got_slots[again]] = rounds[sent][again]
        self.lag[got_slots[again]] = 0
        self._catch_up(got_slots[again], rounds[sent][again])
        new = ~again
        if new.any():
            evicted = self._insert(got_ids[new], values[new], current[sent][new],
                                   rounds[sent][new], protect=ids)
            stats.add(cache_evictions=evicted)
        self._touch(self.slot_of[ids])
        if record:
            stats.add(max_staleness=max(staleness) if staleness else 0)
        return out, int(sent.sum())

    def _touch(self, slots):
        slots = slots[slots >= 0]
        self.tick += 1
        if self.policy == 'lfu':
            self.score[slots] += 1
        else:
            self.score[slots] = self.tick

    def _insert(self, ids, values, versions, rounds, protect):
        """Cache rows ``ids`` (evicting the lowest-scored rows not in ``protect`` when full);
        returns the number of rows evicted. Victims are the exact minimum of the score (last
        read for LRU, reads for LFU) among at most ``SAMPLE`` cached rows drawn at random when
        more are cached (as sampled LRU/LFU caches do), among all of them otherwise."""
        room = self.nfree
        evicted = 0
        if room < ids.shape[0]:
            movable = self.row_of >= 0
            held = self.slot_of[protect]
            movable[held[held >= 0]] = False
            candidates = np.flatnonzero(movable)
            want = min(ids.shape[0] - room, candidates.shape[0])
            if want:
                pool = max(SAMPLE, 8 * want)
                if candidates.shape[0] > pool:
                    candidates = candidates[self._rng.randint(0, candidates.shape[0], pool)]
                    candidates = sorted_unique(np, candidates)
                    want = min(want, candidates.shape[0])
                order = np.argpartition(self.score[candidates], want - 1)[:want]
                victims = candidates[order]
                self._evict(victims)
                evicted = int(victims.shape[0])
        count = min(self.nfree, ids.shape[0])
        if count:
            slots = self.free[self.nfree - count:self.nfree][::-1].copy()
            self.nfree -= count
            self.row_of[slots] = ids[:count]
            self.slot_of[ids[:count]] = slots
            self.values[slots] = values[:count]
            self.version[slots] = versions[:count]
            self.base[slots] = rounds[:count]
            self.lag[slots] = 0
            self._catch_up(slots, rounds[:count])
            self.npending[slots] = 0
            self.pending[slots] = 0
            self.score[slots] = 0
        return evicted

    def _evict(self, slots):
        waiting = slots[self.npending[slots] > 0]
        if waiting.shape[0]:
            self.evicted.append((self.row_of[waiting].copy(), self.pending[waiting].copy(),
                                 self.npending[waiting].copy()))
        self.slot_of[self.row_of[slots]] = -1
        self.row_of[slots] = -1
        self.npending[slots] = 0
        self.free[self.nfree:self.nfree + slots.shape[0]] = slots
        self.nfree += slots.shape[0]

    # ---- writes ------------------------------------------------------------------------
    def write(self, ids, grads, stats, everything=False, step=None):
        """Add a step's gradient rows; returns the (ids, sums, update counts) to push now: rows
        not cached, rows with ``bound`` pending updates, rows evicted since the last push
        (``everything``: every pending row). ``step(values, grads)`` applies the worker's own
        update to the cached rows whose gradient stays pending, so that its reads see its
        writes."""
        slots = self.slot_of[ids]
        cached = slots >= 0
        cslots = slots[cached]
        self.pending[cslots] += grads[cached]
        self.npending[cslots] += 1
        if everything:
            due_slots = np.flatnonzero(self.npending > 0)
        else:
            due_slots = cslots[self.npending[cslots] >= max(self.bound, 1)]
        parts, counts = [], []
        if (~cached).any():
            parts.append((ids[~cached], grads[~cached]))
            counts.append(np.ones(int((~cached).sum()), dtype=np.int64))
        for gone_ids, gone_sums, gone_counts in self.evicted:
            parts.append((gone_ids, gone_sums))
            counts.append(gone_counts)
        self.evicted = []
        if due_slots.shape[0]:
            parts.append((self.row_of[due_slots].copy(), self.pending[due_slots].copy()))
            counts.append(self.npending[due_slots].copy())
            self.pending[due_slots] = 0
            self.npending[due_slots] = 0
        kept = ~np.isin(cslots, due_slots)
        if step is not None and kept.any():
            held = cslots[kept]
            self.values[held] = step(self.values[held], grads[cached][kept])
        stats.add(pushes_deferred=int(kept.sum()))
        total = sum_rows(parts, self.shape, self.dtype)
        # update counts per row of the sum (a row evicted and cached again may appear twice)
        if parts:
            all_ids = np.concatenate([p[0] for p in parts])
            all_counts = np.concatenate(counts)
            row_counts = np.zeros(total.indices.shape[0], dtype=np.int64)
            np.add.at(row_counts, np.searchsorted(total.indices, all_ids), all_counts)
        else:
            row_counts = np.zeros(0, dtype=np.int64)
        return total.indices, total.data, row_counts

    def max_pending(self):
        """The most updates any cached row has waiting."""
        return int(self.npending.max()) if self.capacity else 0
