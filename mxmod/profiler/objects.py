"""Profiling objects that user code creates: Domain, Task, Frame, Event, Counter, Marker, and the
``scope`` context manager.

They record only while the profiler runs and is not paused; their categories are MXNet's (a task
or counter in its domain's name, a frame in ``'<domain>,frame'``, an event in ``'event'``, a
marker in ``'<domain>,instant_marker'``), so ``dumps()`` groups them as MXNet does."""
import contextlib
import contextvars

from ..base import MXNetError
from .state import (PROFILER, now_us, record_duration, record_counter, record_instant,
                    thread_track, category_exists)

__all__ = ['Domain', 'Task', 'Frame', 'Event', 'Counter', 'Marker', 'scope', 'current_scope']

_MARKER_SCOPES = {'global': 'g', 'process': 'p', 'thread': 't', 'task': 't', 'marker': 't'}
_DEFAULT_SCOPE = '<unk>:'
_CURRENT_SCOPE = contextvars.ContextVar('mxmod_profiler_scope', default=_DEFAULT_SCOPE)


class Domain(object):
    """A named group of tasks, frames, counters and markers (a category of the trace).

    Parameters
    ----------
    name : str
    """

    def __init__(self, name):
        self.name = str(name)

    def __str__(self):
        return self.name

    def new_task(self, name):
        """A :class:`Task` in this domain."""
        return Task(self, name)

    def new_frame(self, name):
        """A :class:`Frame` in this domain."""
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """A :class:`Counter` in this domain, optionally set to ``value``."""
        return Counter(self, name, value)

    def new_marker(self, name):
        """A :class:`Marker` in this domain."""
        return Marker(self, name)


def _check_domain(domain, what):
    if not isinstance(domain, Domain):
        raise TypeError('profiler.%s: domain must be a profiler.Domain, got %s'
                        % (what, type(domain).__name__))
    return domain


class _Duration(object):
    """A named stretch of time between ``start()`` and ``stop()`` (also a context manager)."""
    kind = 'duration'

    def __init__(self, category, name):
        self.category = category
        self.name = str(name)
        self._start = None

    def start(self):
        """Start timing."""
        self._start = now_us()

    def stop(self):
        """Stop timing and record the stretch (when the profiler runs; a stop without a start
        records nothing, and raises nothing, as in MXNet)."""
        end = now_us()
        if PROFILER.active and self._start is not None:
            record_duration(self.category, self.name, thread_track(), self._start,
                            end - self._start)
        self._start = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def __str__(self):
        return self.name


class Task(_Duration):
    """A stretch of work of one thread, in ``domain``.

    Parameters
    ----------
    domain : Domain
    name : str
    """

    def __init__(self, domain, name):
        self.domain = _check_domain(domain, 'Task')
        super(Task, self).__init__(self.domain.name, name)


class Frame(_Duration):
    """A stretch of work that does not nest (an iteration, say), in ``domain``.

    Parameters
    ----------
    domain : Domain
    name : str
    """

    def __init__(self, domain, name):
        self.domain = _check_domain(domain, 'Frame')
        super(Frame, self).__init__(self.domain.name + ',frame', name)


class Event(_Duration):
    """A stretch of time of any thread, in the category ``'event'``.

    Parameters
    ----------
    name : str
    """

    def __init__(self, name):
        super(Event, self).__init__('event', name)


class Counter(object):
    """A named value recorded each time it changes.

    Parameters
    ----------
    domain : Domain
    name : str
    value : int, optional
        Initial value (recorded when given).
    """

    def __init__(self, domain, name, value=None):
        self.domain = _check_domain(domain, 'Counter')
        self.name = str(name)
        self.value = 0
        if value is not None:
            self.set_value(value)

    def set_value(self, value):
        """Set the counter to ``value``."""
        self.value = value
        if PROFILER.active:
            record_counter(self.domain.name, self.name, value)

    def increment(self, delta=1):
        """Add ``delta``."""
        self.set_value(self.value + delta)

    def decrement(self, delta=1):
        """Subtract ``delta``."""
        self.set_value(self.value - delta)

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


class Marker(object):
    """An instant of note, in ``domain``.

    Parameters
    ----------
    domain : Domain
    name : str
    """

    def __init__(self, domain, name):
        self.domain = _check_domain(domain, 'Marker')
        self.name = str(name)

    def mark(self, scope='process'):  # pylint: disable=redefined-outer-name
        """Record the instant now.

        Parameters
        ----------
        scope : {'global', 'process', 'thread', 'task', 'marker'}, default 'process'
            How far the marker reaches in the trace viewer.
        """
        if scope not in _MARKER_SCOPES:
            raise MXNetError('profiler.Marker.mark: scope must be one of %s, got %r'
                             % (sorted(_MARKER_SCOPES), scope))
        category = self.domain.name + ',instant_marker'
        if PROFILER.active:
            record_instant(category, self.name, _MARKER_SCOPES[scope])
        category_exists(category)


@contextlib.contextmanager
def scope(name='<unk>:', append_mode=True):
    """Attribute operator and memory events inside the block to the profiler scope ``name``
    (shown in each event's ``args`` as ``scope``).

    Parameters
    ----------
    name : str, default '<unk>:'
        The scope; a ``':'`` is appended when missing.
    append_mode : bool, default True
        Nest in the enclosing scope (``'outer:inner:'``).

    Yields
    ------
    str
        The scope in force inside the block.
    """
    name = name if name.endswith(':') else name + ':'
    outer = _CURRENT_SCOPE.get()
    if append_mode and outer != _DEFAULT_SCOPE:
        name = outer + name
    token = _CURRENT_SCOPE.set(name)
    try:
        yield name
    finally:
        _CURRENT_SCOPE.reset(token)


def current_scope():
    """The profiler scope in force, or None outside any."""
    value = _CURRENT_SCOPE.get()
    return None if value == _DEFAULT_SCOPE else value
