"""Automatic naming of symbols: NameManager (hint + counter) and Prefix."""
import threading


class NameManager(object):
    """Gives every unnamed symbol a unique name ``<hint><counter>``; usable as a ``with`` scope."""
    _local = threading.local()

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """Return ``name`` if given, else a fresh name derived from ``hint``."""
        if name:
            return name
        hint = hint.lower()
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return '%s%d' % (hint, count)

    def __enter__(self):
        self._old_manager = NameManager.current()
        NameManager._local.value = self
        return self

    def __exit__(self, ptype, value, trace):
        NameManager._local.value = self._old_manager

    @staticmethod
    def current():
        """The active NameManager of this thread."""
        cur = getattr(NameManager._local, 'value', None)
        if cur is None:
            cur = NameManager._local.value = NameManager()
        return cur


class Prefix(NameManager):
    """A NameManager that prepends ``prefix`` to every name it returns."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)
