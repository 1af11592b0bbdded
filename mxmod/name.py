"""Automatic naming of symbols: NameManager (hint + counter) and Prefix.

``NameManager.current`` is this thread's manager, readable and assignable on the class as in
MXNet (``NameManager.current = NameManager()``); ``with NameManager():`` scopes one."""
import threading

from .base import MXNetError, _MXClassPropertyMetaClass, classproperty


class NameManager(metaclass=_MXClassPropertyMetaClass):
    """Gives every unnamed symbol a unique name ``<hint><counter>``; usable as a ``with`` scope."""
    _current = threading.local()    # .value: this thread's manager

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """Return ``name`` if given, else a fresh name ``<hint><count>``."""
        if name:
            return name
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return '%s%d' % (hint, count)

    def __enter__(self):
        self._old_manager = NameManager.current
        NameManager._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        if self._old_manager is None:
            raise MXNetError('NameManager exited without being entered')
        NameManager._current.value = self._old_manager

    @classproperty
    def current(cls):
        """The calling thread's active NameManager."""
        cur = getattr(NameManager._current, 'value', None)
        if cur is None:
            cur = NameManager._current.value = NameManager()
        return cur

    @current.setter
    def current(cls, value):
        NameManager._current.value = value


class Prefix(NameManager):
    """A NameManager that prepends ``prefix`` to every name it returns."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)
