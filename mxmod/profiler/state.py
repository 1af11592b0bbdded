"""The profiler's process-wide state: what is being profiled, the clock, the recorded events and
their tracks.

Instrumented code reads one attribute of :data:`PROFILER` (``symbolic``, ``imperative``, ``api``,
``memory`` or ``active``) and records only when it is true, so a profiler that is off costs one
attribute check on the paths it watches. Events are kept in memory until they are dumped to the
trace file; when aggregate statistics are on they are also summed at once (see
:mod:`.aggregate`)."""
import collections
import os
import threading
import time

from .aggregate import AggregateStats

__all__ = ['PROFILER', 'now_us', 'record_duration', 'record_counter', 'record_instant',
           'device_track', 'thread_track', 'track_names', 'category_exists']

_WALL0_NS = time.time_ns()
_PERF0_NS = time.perf_counter_ns()


def now_us():
    """Microseconds since the epoch on a monotonic clock (comparable between processes on one
    host)."""
    return (_WALL0_NS + time.perf_counter_ns() - _PERF0_NS) / 1000.0


class ProfilerState(object):
    """What the profiler does now; every flag is False unless it runs, is not paused, and its
    mode includes that kind of event."""

    def __init__(self):
        self.mode = {'symbolic': True, 'imperative': True, 'memory': True, 'api': True}
        self.running = False
        self.paused = False
        self.active = False
        self.symbolic = False
        self.imperative = False
        self.memory = False
        self.api = False
        self.events = collections.deque()    # appended from any thread
        self.aggregate = None
        self.lock = threading.RLock()

    def refresh(self):
        """Recompute the flags that instrumented code reads."""
        self.active = self.running and not self.paused
        for kind, wanted in self.mode.items():
            setattr(self, kind, self.active and wanted)


PROFILER = ProfilerState()

# ---- tracks (Chrome trace threads) ------------------------------------------------------
_TRACK_NAMES = {}
_THREAD_TRACKS = {}
_MAIN_IDENT = threading.main_thread().ident
_PYTHON_TRACK_BASE = 1
_DEVICE_TRACK_BASE = 100


def device_track(ctx):
    """The track of a device: ``100 * device type id + device id`` (cpu(0) is 100, gpu(1) 201)."""
    tid = _DEVICE_TRACK_BASE * ctx.device_typeid + ctx.device_id
    if tid not in _TRACK_NAMES:
        _TRACK_NAMES[tid] = '%s(%d)' % (ctx.device_type, ctx.device_id)
    return tid


def thread_track():
    """The track of the calling Python thread (the main thread is track 1)."""
    ident = threading.get_ident()
    tid = _THREAD_TRACKS.get(ident)
    if tid is None:
        with PROFILER.lock:
            if ident == _MAIN_IDENT:
                tid, name = _PYTHON_TRACK_BASE, 'python (main thread)'
            else:
                tid = _PYTHON_TRACK_BASE + 1 + sum(1 for t in _THREAD_TRACKS.values()
                                                   if t != _PYTHON_TRACK_BASE)
                name = 'python (%s)' % threading.current_thread().name
            _THREAD_TRACKS[ident] = tid
            _TRACK_NAMES[tid] = name
    return tid


def track_names():
    """tid -> the name shown for that track."""
    return dict(_TRACK_NAMES)


# ---- recording ----------------------------------------------------------------------------
def record_duration(category, name, tid, start_us, dur_us, args=None):
    """Record a complete event ``[start, start + dur]`` (microseconds) on track ``tid``."""
    PROFILER.events.append(('X', category, name, tid, start_us, dur_us, args))
    stats = PROFILER.aggregate
    if stats is not None:
        stats.add_duration(category, name, dur_us)


def record_counter(category, name, value, tid=None):
    """Record the new value of a counter."""
    tid = thread_track() if tid is None else tid
    PROFILER.events.append(('C', category, name, tid, now_us(), value, None))
    stats = PROFILER.aggregate
    if stats is not None:
        stats.add_counter(category, name, value)


def record_instant(category, name, scope_code):
    """Record an instant event; ``scope_code`` is Chrome's 'g', 'p' or 't'."""
    PROFILER.events.append(('i', category, name, thread_track(), now_us(), scope_code, None))
    stats = PROFILER.aggregate
    if stats is not None:
        stats.touch(category)


def category_exists(category):
    """Make ``category`` known to the aggregate statistics (it is listed even without rows)."""
    stats = PROFILER.aggregate
    if stats is not None:
        stats.touch(category)


def take_events():
    """Remove and return the events recorded so far (events other threads record meanwhile stay
    for the next call)."""
    events = PROFILER.events
    return [events.popleft() for _ in range(len(events))]


def env_flag(name):
    """True when the environment variable ``name`` is set to a true value."""
    return os.environ.get(name, '0').strip().lower() not in ('', '0', 'false', 'no', 'off')


def new_aggregate():
    """A fresh :class:`AggregateStats`."""
    return AggregateStats()
