"""Communication counters of the distributed stores (``kv.comm_stats()``).

Bytes are what this process puts on and takes off the network for the store's values under the
algorithm used: a ring all-reduce of ``B`` bytes over ``n`` workers sends and receives
``2 (n-1)/n B``; an all-gather of row_sparse values sends this worker's (ids, values) to each of
the ``n-1`` others and receives theirs; parameter-server pushes and pulls count their messages'
payloads. When the profiler runs, every update of a counter is also recorded as a Counter event
(domain ``kvstore``)."""
import threading

from ..profiler.state import PROFILER, record_counter

__all__ = ['CommStats', 'COUNTERS']

# name -> meaning (the keys of comm_stats())
COUNTERS = (
    ('dense_bytes_sent', 'bytes of dense values sent'),
    ('dense_bytes_received', 'bytes of dense values received'),
    ('sparse_bytes_sent', 'bytes of row_sparse values (row ids + rows) sent'),
    ('sparse_bytes_received', 'bytes of row_sparse values (row ids + rows) received'),
    ('rows_requested', 'row ids the trainer asked for (row_sparse_pull; repeats included)'),
    ('rows_transferred', 'rows that crossed the network towards this worker'),
    ('cache_hits', 'requested rows served by the embedding cache'),
    ('cache_misses', 'requested rows the embedding cache had to fetch'),
    ('cache_evictions', 'rows evicted from the embedding cache'),
    ('pushes_deferred', 'row updates kept in the cache instead of being pushed'),
    ('max_staleness', 'largest number of server updates a cached read was behind'),
    ('row_wait_seconds', 'time the trainer waited for rows'),
)


class CommStats(object):
    """Thread-safe counters; :meth:`snapshot` returns them as a dict."""

    def __init__(self):
        self._lock = threading.Lock()
        self._values = {name: 0 for name, _ in COUNTERS}
        self._values['row_wait_seconds'] = 0.0

    def add(self, **amounts):
        """Add to counters (``max_staleness`` keeps the maximum)."""
        with self._lock:
            for name, amount in amounts.items():
                if name not in self._values:
                    raise KeyError('unknown kvstore counter %r' % name)
                if name == 'max_staleness':
                    self._values[name] = max(self._values[name], amount)
                else:
                    self._values[name] += amount
            changed = {name: self._values[name] for name in amounts}
        _to_profiler(changed)

    def add_dense(self, nbytes, num_workers):
        """A ring all-reduce of ``nbytes`` among ``num_workers``."""
        if num_workers > 1 and nbytes:
            wire = int(round(2.0 * (num_workers - 1) / num_workers * nbytes))
            self.add(dense_bytes_sent=wire, dense_bytes_received=wire)

    def add_sparse(self, sent, received, rows):
        """Row_sparse bytes sent and received and rows received."""
        self.add(sparse_bytes_sent=int(sent), sparse_bytes_received=int(received),
                 rows_transferred=int(rows))

    def snapshot(self):
        """The counters as a new dict."""
        with self._lock:
            return dict(self._values)


def _to_profiler(changed):
    if not PROFILER.active:
        return
    for name, value in changed.items():
        record_counter('kvstore', name, value)
