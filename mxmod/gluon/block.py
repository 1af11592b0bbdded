"""The part of Gluon's Block that recurrent cells rely on: prefixes and name scopes, child blocks,
Parameters registered as attributes, and ``collect_params``. Blocks here build symbols only."""
import re
import threading
from collections import OrderedDict

from ..base import MXNetError
from ..name import NameManager, Prefix
from .parameter import Parameter, ParameterDict

__all__ = ['Block']


class _BlockScope(object):
    """While entered: the block whose prefix names new child blocks and new symbols."""
    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """The prefix and ParameterDict of a new block, from the enclosing scope (if any)."""
        current = getattr(_BlockScope._current, 'value', None)
        if current is None:
            if prefix is None:
                prefix = NameManager.current.get(None, hint) + '_'
            if params is None:
                return prefix, ParameterDict(prefix)
            return prefix, ParameterDict(params.prefix, params)
        if prefix is None:
            count = current._counter.get(hint, 0)
            current._counter[hint] = count + 1
            prefix = '%s%d_' % (hint, count)
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, 'value', None)
        _BlockScope._current.value = self
        self._name_scope = Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, ptype, value, trace):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(ptype, value, trace)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


class Block(object):
    """Base of Gluon's recurrent cells: a named node of a tree of blocks owning Parameters.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the names of this block's Parameters and of the symbols it creates; derived
        from the class (e.g. 'lstm0_') and the enclosing ``name_scope()`` when None.
    params : ParameterDict, optional
        Parameters to share with another block (looked up before new ones are created).
    """

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ''
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith('_') else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}

    def __repr__(self):
        lines = ['  (%s): %s' % (key, _indent(repr(block), 2))
                 for key, block in self.__dict__.items() if isinstance(block, Block)]
        return '%s(\n%s\n)' % (type(self).__name__, '\n'.join(lines))

    def __setattr__(self, name, value):
        existing = self.__dict__.get(name)
        if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
            raise TypeError('changing attribute %s of %s from %s to %s is not allowed'
                            % (name, type(self).__name__, type(existing).__name__,
                               type(value).__name__))
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise MXNetError('Parameter attribute %s of %s is already set; share parameters '
                                 'by passing params= when creating the block instead'
                                 % (name, type(self).__name__))
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _alias(self):
        return type(self).__name__.lower()

    @property
    def prefix(self):
        """Prefix of this block's names, e.g. 'lstm0_'."""
        return self._prefix

    @property
    def name(self):
        """The prefix without its trailing '_'."""
        return self._name

    def name_scope(self):
        """A ``with`` scope in which new blocks are named as children of this one.

        Returns
        -------
        context manager
        """
        return self._scope

    @property
    def params(self):
        """This block's own ParameterDict (children's Parameters not included)."""
        return self._params

    def collect_params(self, select=None):
        """The Parameters of this block and all its children.

        Parameters
        ----------
        select : str, optional
            Regular expression; only Parameters whose names match it (``re.match``).

        Returns
        -------
        ParameterDict
        """
        ret = ParameterDict(self._params.prefix)
        if select:
            pattern = re.compile(select)
            ret.update(OrderedDict((name, value) for name, value in self.params.items()
                                   if pattern.match(name)))
        else:
            ret.update(self.params)
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def register_child(self, block, name=None):
        """Register ``block`` as a child (named by its position when ``name`` is None).

        Parameters
        ----------
        block : Block
        name : str, optional
        """
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def apply(self, fn):
        """Call ``fn(block)`` on every child recursively, then on this block.

        Parameters
        ----------
        fn : callable

        Returns
        -------
        Block
            This block.
        """
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def hybridize(self, active=True, **kwargs):
        """Accepted for compatibility: symbolic calls already build a static graph, so
        hybridizing changes nothing here (as in MXNet for Symbol inputs).

        Parameters
        ----------
        active : bool, default True
        **kwargs
            Ignored (static_alloc, static_shape, ...).
        """
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def __call__(self, *args):
        """Run ``forward`` on the inputs (Symbols)."""
        return self.forward(*args)

    def forward(self, *args):
        """One forward computation; defined by subclasses."""
        raise NotImplementedError('%s does not define forward()' % type(self).__name__)


def _indent(text, spaces):
    lines = text.split('\n')
    return '\n'.join(lines[:1] + [' ' * spaces + line for line in lines[1:]])
