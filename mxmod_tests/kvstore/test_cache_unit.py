"""The embedding cache's bookkeeping in one process (no MPI): eviction order of LRU and LFU,
held-back writes and when they are released, the staleness rule of reads, and the counters
(also as profiler Counter events)."""
import json

import numpy as np
import pytest

import mxmod as mx
from mxmod.kvstore.embedding_cache import TableCache
from mxmod.kvstore.stats import CommStats

ROWS, DIM = 20, 2


def _answer(ids, versions_now, rounds_now, theirs, bound, table):
    """What a server sends back for ``ids`` given the worker's versions ``theirs``."""
    current = versions_now[ids]
    sent = (theirs < 0) | (current - theirs > bound)
    return table[ids[sent]], current, np.full(ids.shape[0], rounds_now), sent


def _read(cache, ids, use_round, versions_now, rounds_now, table, stats):
    ids = np.asarray(ids, dtype=np.int64)
    fresh, need, theirs = cache.split(ids, use_round, True)
    answer = _answer(ids[need], versions_now, rounds_now, theirs, cache.bound, table)
    return cache.serve(ids, fresh, need, answer, use_round, stats)


@pytest.mark.parametrize('policy,evicted', [('lru', 1), ('lfu', 2)])
def test_eviction_order(policy, evicted):
    """Rows 1, 2, 3 cached, then read so that row 2 is the least often read but the most
    recently read, and row 1 the least recently read: a new row evicts row 1 under LRU and row
    2 under LFU."""
    cache = TableCache('t', (ROWS, DIM), np.float32, 3, policy, bound=100)
    stats = CommStats()
    table = np.arange(ROWS * DIM, dtype=np.float32).reshape(ROWS, DIM)
    versions = np.zeros(ROWS, np.int64)
    for ids in ([1, 2, 3], [1], [1], [3], [3], [2]):
        _read(cache, ids, 0, versions, 0, table, stats)
    # reads: row 1 three times (last at the third call), row 2 twice (last), row 3 three times
    _read(cache, [7], 0, versions, 0, table, stats)
    assert cache.slot_of[evicted] == -1 and cache.slot_of[7] >= 0
    assert all(cache.slot_of[r] >= 0 for r in (1, 2, 3) if r != evicted)
    assert stats.snapshot()['cache_evictions'] == 1


def test_reads_prove_freshness_from_round_notes_and_move_only_stale_rows():
    """Rows are served unasked while the acknowledged rounds prove them at most ``bound``
    updates behind (listed growth of a row, unlisted growth of every row); beyond that the
    versions are asked for and only rows more than ``bound`` behind move."""
    cache = TableCache('t', (ROWS, DIM), np.float32, 10, 'lfu', bound=2)
    stats = CommStats()
    empty = np.zeros(0, np.int64)
    table = np.random.RandomState(0).randn(ROWS, DIM).astype(np.float32)
    versions = np.zeros(ROWS, np.int64)
    out, sent = _read(cache, [4, 5], 0, versions, 0, table, stats)
    assert sent == 2
    np.testing.assert_array_equal(out, table[[4, 5]])
    # rounds 1 and 2 each grew row 4 by one update (listed): two behind, still served unasked
    for rnd in (1, 2):
        versions[4] += 1
        cache.note_round(rnd, 0, np.array([4]), np.array([1]))
    fresh, need, _ = cache.split(np.array([4, 5]), 2, True)
    assert fresh.all() and not need.any()
    assert cache.lag_bound(cache.slot_of[[4, 5]], 2).tolist() == [2, 0]
    # round 3: row 4 once more (three behind: asked and moved); every other row may have grown
    # by one unlisted update (row 5 one behind at most: still unasked)
    versions[4] += 1
    cache.note_round(3, 1, np.array([4]), np.array([1]))
    fresh, need, theirs = cache.split(np.array([4, 5]), 3, True)
    assert need.tolist() == [True, False] and theirs.tolist() == [0]
    table2 = table + 1
    out, sent = _read(cache, [4, 5], 3, versions, 3, table2, stats)
    assert sent == 1
    np.testing.assert_array_equal(out[0], table2[4])       # refreshed
    np.testing.assert_array_equal(out[1], table[5])        # within the bound: cached value
    # two more unlisted growths: row 5 could be three behind now: asked, but it did not move
    cache.note_round(4, 2, empty, empty)
    fresh, need, theirs = cache.split(np.array([5]), 4, True)
    assert need.all() and theirs.tolist() == [0]
    out, sent = _read(cache, [5], 4, versions, 4, table2, stats)
    assert sent == 0 and cache.lag_bound(cache.slot_of[[5]], 4).tolist() == [0]
    assert stats.snapshot()['max_staleness'] <= 2


def test_writes_are_held_back_at_most_bound_updates():
    cache = TableCache('t', (ROWS, DIM), np.float32, 10, 'lru', bound=3)
    stats = CommStats()
    table = np.zeros((ROWS, DIM), np.float32)
    _read(cache, [1, 2], 0, np.zeros(ROWS, np.int64), 0, table, stats)
    grad = np.ones((2, DIM), np.float32)
    pushed = []
    for step in range(7):
        ids, values, counts = cache.write(np.array([1, 9]), grad, stats)
        pushed.append((ids.tolist(), values.tolist(), counts.tolist()))
        assert cache.max_pending() <= 3
    # row 9 is not cached: pushed at every step; row 1 every third step with the sum of three
    assert all(9 in ids for ids, _, _ in pushed)
    with_one = [(ids, vals, cnt) for ids, vals, cnt in pushed if 1 in ids]
    assert len(with_one) == 2 and with_one[0][1][0] == [3.0, 3.0]
    assert with_one[0][2] == [3, 1]                      # row 1 holds 3 updates, row 9 one
    ids, values, counts = cache.write(np.zeros(0, np.int64), np.zeros((0, DIM), np.float32),
                                      stats, everything=True)
    assert ids.tolist() == [1] and values.tolist() == [[1.0, 1.0]] and counts.tolist() == [1]
    assert cache.max_pending() == 0
    assert stats.snapshot()['pushes_deferred'] == 5


def test_evicted_rows_release_their_pending_updates():
    cache = TableCache('t', (ROWS, DIM), np.float32, 1, 'lru', bound=10)
    stats = CommStats()
    table = np.zeros((ROWS, DIM), np.float32)
    _read(cache, [1], 0, np.zeros(ROWS, np.int64), 0, table, stats)
    ids, _, _ = cache.write(np.array([1]), np.ones((1, DIM), np.float32), stats)
    assert ids.tolist() == []
    _read(cache, [2], 0, np.zeros(ROWS, np.int64), 0, table, stats)      # evicts row 1
    ids, values, counts = cache.write(np.array([2]), np.full((1, DIM), 5, np.float32), stats)
    assert ids.tolist() == [1] and values.tolist() == [[1.0, 1.0]] and counts.tolist() == [1]


def test_counters_reach_the_profiler(tmp_path):
    stats = CommStats()
    trace = str(tmp_path / 'trace.json')
    mx.profiler.set_config(profile_all=True, filename=trace)
    mx.profiler.set_state('run')
    try:
        stats.add(cache_hits=5, rows_transferred=3)
        stats.add(max_staleness=4)
        stats.add(max_staleness=2)
    finally:
        mx.profiler.set_state('stop')
        mx.profiler.dump()
    assert stats.snapshot()['max_staleness'] == 4
    with open(trace) as fin:
        events = json.load(fin)['traceEvents']
    counters = [e for e in events if e.get('ph') == 'C' and e.get('cat', '') == 'kvstore']
    names = set(e['name'] for e in counters)
    assert {'cache_hits', 'rows_transferred', 'max_staleness'} <= names, names
    with pytest.raises(KeyError):
        stats.add(bogus=1)


class _Tables(object):
    """The part of a store's RowTables that EmbeddingCache reads: each table's shape and dtype."""

    def __init__(self, rows):
        self.tables = {key: type('Table', (), {'shape': (n, DIM), 'dtype': np.float32})()
                       for key, n in rows.items()}
        self.on_round = None


@pytest.mark.parametrize('capacity,expected', [
    (100, {'tiny': 3, 'mid': 100, 'big': 100}), (1000000000, {'tiny': 3, 'mid': 500, 'big': 5000}),
    (0.5, {'tiny': 2, 'mid': 250, 'big': 2500}), (1.0, {'tiny': 3, 'mid': 500, 'big': 5000})])
def test_capacity_in_rows_caches_smaller_tables_whole(caplog, capacity, expected):
    """A number of rows applies to every table; a table with fewer rows is cached whole, as the
    fraction 1.0 caches it, and an INFO line names the table and its rows (no cache larger than
    its table is allocated)."""
    from mxmod.kvstore.embedding_cache import EmbeddingCache  # pylint: disable=import-outside-toplevel
    tables = _Tables({'tiny': 3, 'mid': 500, 'big': 5000})
    with caplog.at_level('INFO', logger='mxmod'):
        cache = EmbeddingCache(tables, None, 'lfu', capacity, 2, False, CommStats())
    assert {key: c.capacity for key, c in cache.caches.items()} == expected
    assert all(c.values.shape[0] == c.capacity for c in cache.caches.values())
    whole = sorted(key for key, rows in (('tiny', 3), ('mid', 500), ('big', 5000))
                   if isinstance(capacity, int) and capacity > rows)
    notes = [r.getMessage() for r in caplog.records if 'cached whole' in r.getMessage()]
    assert len(notes) == len(whole)
    for key in whole:
        rows = tables.tables[key].shape[0]
        assert any("table '%s' has %d rows, fewer than capacity=%d" % (key, rows, capacity) in note
                   for note in notes), notes
