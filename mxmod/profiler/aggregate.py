"""Aggregate statistics of the profiler (``profiler.dumps()``), in MXNet 1.9.1's layouts.

Per category (``operator``, ``Device Storage``, a domain name, ...) and per name: the number of
events, their total, minimum and maximum duration (microseconds; shown in milliseconds), or for
counters the last, minimum and maximum value (memory counters shown in kB). The table and the
JSON text are laid out as MXNet prints them, so tools that read MXNet's output read these."""
import threading

__all__ = ['AggregateStats', 'SORT_KEYS']

DURATION, COUNTER, OTHER = 1, 2, 4
MEMORY_CATEGORIES = ('Device Storage', 'Pool Memory')
SORT_KEYS = ('total', 'avg', 'min', 'max', 'count')
_UNSET_MIN = 2 ** 31 - 1     # MXNet starts every minimum at INT_MAX


class _Stat(object):
    __slots__ = ('kind', 'count', 'total', 'low', 'high')

    def __init__(self):
        self.kind = OTHER
        self.count = 0
        self.total = 0
        self.low = _UNSET_MIN
        self.high = 0

    def spread(self):
        """What MXNet shows as the average of a counter: half its range."""
        spread = self.high - self.low
        return spread // 2 if isinstance(spread, int) else spread / 2.0

    def average(self):
        return self.spread() if self.kind == COUNTER else self.total / float(self.count)

    def sort_value(self, sort_by):
        return {'total': lambda: self.total, 'avg': self.average, 'min': lambda: self.low,
                'max': lambda: self.high, 'count': lambda: self.count}[sort_by]()


class AggregateStats(object):
    """Running per-name statistics, grouped by category."""

    def __init__(self):
        self._stats = {}
        self._lock = threading.Lock()

    def _entry(self, category, name):
        names = self._stats.get(category)
        if names is None:
            names = self._stats[category] = {}
        stat = names.get(name)
        if stat is None:
            stat = names[name] = _Stat()
        return stat

    def add_duration(self, category, name, dur_us):
        """Count one event of ``dur_us`` microseconds."""
        with self._lock:
            stat = self._entry(category, name)
            stat.kind = DURATION
            stat.count += 1
            stat.total += dur_us
            stat.high = max(stat.high, dur_us)
            stat.low = min(stat.low, dur_us)

    def add_counter(self, category, name, value):
        """Count one new value of a counter (the last value is its 'total')."""
        with self._lock:
            stat = self._entry(category, name)
            stat.kind = COUNTER
            stat.count += 1
            stat.total = value
            stat.high = max(stat.high, value)
            stat.low = min(stat.low, value)

    def touch(self, category):
        """List ``category`` even while it has no rows (instant markers)."""
        with self._lock:
            self._stats.setdefault(category, {})

    def clear(self):
        """Forget everything counted so far."""
        with self._lock:
            self._stats.clear()

    def _sorted(self, names, sort_by, ascending):
        rows = [(stat.sort_value(sort_by), name, stat) for name, stat in names.items()
                if stat.kind in (DURATION, COUNTER)]
        sign = -1 if ascending else 1
        rows.sort(key=lambda row: (sign * row[0], row[1]), reverse=True)
        return [(name, stat) for _, name, stat in rows]

    def _snapshot(self, sort_by, ascending):
        with self._lock:
            return [(category, category in MEMORY_CATEGORIES,
                     self._sorted(self._stats[category], sort_by, ascending))
                    for category in sorted(self._stats)]

    def table(self, sort_by='total', ascending=False):
        """The statistics as MXNet's text table."""
        lines = ['', 'Profile Statistics:', '\tNote the difference in units for different entries.']
        for category, is_memory, rows in self._snapshot(sort_by, ascending):
            lines += [category, '=================']
            lines.append(_row('Name', 'Total Count', '' if is_memory else 'Time (ms)',
                              'Min Use  (kB)' if is_memory else 'Min Time (ms)',
                              'Max Use  (kB)' if is_memory else 'Max Time (ms)',
                              'Avg Use  (kB)' if is_memory else 'Avg Time (ms)', is_memory))
            lines.append(_row('----', '-----------', '' if is_memory else '---------',
                              '-------------', '-------------', '-------------', is_memory))
            for name, stat in rows:
                total, low, high, avg = _shown(stat)
                lines.append(_row(name, str(stat.count), '' if is_memory else '%.4f' % total,
                                  '%.4f' % low, '%.4f' % high, '%.4f' % avg, is_memory))
            lines.append('')
        return '\n'.join(lines) + '\n'

    def json(self, sort_by='total', ascending=False):
        """The statistics as MXNet's JSON text (``Time``, ``Memory`` and ``Unit`` sections)."""
        sections = {False: [], True: []}
        for category, is_memory, rows in self._snapshot(sort_by, ascending):
            entries = []
            for name, stat in rows:
                total, low, high, avg = _shown(stat)
                fields = [('Count', str(stat.count))]
                if not is_memory:
                    fields.append(('Total', _g4(total)))
                fields += [('Min', _g4(low)), ('Max', _g4(high)), ('Avg', _g4(avg))]
                body = ',\n'.join('                "%s": %s' % item for item in fields)
                entries.append('            %s: {\n%s\n            }\n' % (_quote(name), body))
            sections[is_memory].append('        %s: {\n%s        }\n'
                                       % (_quote(category), '            ,\n'.join(entries)))
        return ('{\n    "Time": {\n' + '        ,\n'.join(sections[False]) + '    }\n    ,\n'
                '    "Memory": {\n' + '        ,\n'.join(sections[True]) + '    }\n,\n'
                '    "Unit": {\n        "Time": "ms",\n        "Memory": "kB"\n    }\n}\n')


def _shown(stat):
    """(total, min, max, average) in the units shown: microseconds as ms, bytes as kB."""
    return (stat.total / 1000.0, stat.low / 1000.0, stat.high / 1000.0, stat.average() / 1000.0)


def _row(name, count, total, low, high, avg, is_memory):
    head = '%-25s%16s ' % (name, count)
    if not is_memory:
        head += '%16s ' % total
    return head + '%16s %16s %16s' % (low, high, avg)


def _g4(value):
    """A number as C++ streams print it with precision 4 (like %.4g)."""
    return '%.4g' % value


def _quote(text):
    return '"%s"' % text.replace('\\', '\\\\').replace('"', '\\"')
