"""AttrScope: attributes attached to every symbol created inside a ``with`` block.

``AttrScope.current`` is this thread's scope, readable and assignable on the class as in MXNet."""
import threading
from collections import defaultdict

from .base import MXNetError, _MXClassPropertyMetaClass, classproperty


class AttrScope(metaclass=_MXClassPropertyMetaClass):
    """Attribute scope. Keys are stored in MXNet's hidden form ``__key__``.

    Parameters
    ----------
    **kwargs : str
        Attributes, e.g. ``ctx_group='dev1'`` or ``force_mirroring='True'``.
    """
    _current = threading.local()    # .value: this thread's scope
    # how many subgraphs (mx.sym.contrib.foreach, while_loop, cond) took each name so far
    _subgraph_names = defaultdict(int)

    def __init__(self, **kwargs):
        self._old_scope = None
        for value in kwargs.values():
            if not isinstance(value, str):
                raise ValueError('Attributes need to be string, got %r' % (value,))
        self._attr = kwargs

    def get(self, attr):
        """Merge the scope's attributes under the user-given ``attr`` dict (user keys win)."""
        if not self._attr:
            return dict(attr) if attr else {}
        merged = dict(self._attr)
        if attr:
            merged.update(attr)
        return merged

    def __enter__(self):
        self._old_scope = AttrScope.current
        attr = dict(self._old_scope._attr)
        attr.update(self._attr)
        self._attr = attr
        AttrScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        if self._old_scope is None:
            raise MXNetError('AttrScope exited without being entered')
        AttrScope._current.value = self._old_scope

    @classproperty
    def current(cls):
        """The calling thread's active AttrScope."""
        cur = getattr(AttrScope._current, 'value', None)
        if cur is None:
            cur = AttrScope._current.value = AttrScope()
        return cur

    @current.setter
    def current(cls, value):
        AttrScope._current.value = value
