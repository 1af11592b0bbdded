"""Gluon's Block: a named node of a tree of blocks that owns Parameters; calling it runs
``forward``. Name scopes give children and Parameters their prefixes ('dense0_',
'hybridsequential0_conv0_'), as MXNet 1.9.1 does."""
import re
import threading
import warnings
from collections import OrderedDict, defaultdict

from .. import initializer, ndarray
from ..name import NameManager, Prefix
from .parameter import CheckError, Parameter
from .parameter_dict import ParameterDict
from .utils import HookHandle, _brief_print_list, _indent

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


def _has_unregistered_block(data, children):
    if isinstance(data, (list, tuple)):
        return any(_has_unregistered_block(item, children) for item in data)
    if isinstance(data, dict):
        return any(_has_unregistered_block(item, children) for item in data.values())
    return isinstance(data, Block) and data not in children


class Block(object):
    """Base class of all layers and models.

    Parameters
    ----------
    prefix : str, optional
        Prefix of this block's Parameter names and of the symbols it creates; derived from
        the class name (e.g. 'dense0_') and the enclosing ``name_scope()`` when None.
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
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        lines = ['  (%s): %s' % (key, _indent(repr(block), 2))
                 for key, block in self.__dict__.items() if isinstance(block, Block)]
        return '%s(\n%s\n)' % (type(self).__name__, '\n'.join(lines))

    def __setattr__(self, name, value):
        existing = self.__dict__.get(name)
        if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
            raise TypeError('Changing attribute type for %s from %s to %s is not allowed.'
                            % (name, type(existing), type(value)))
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise CheckError("Overriding Parameter attribute %s is not allowed. If you want "
                                 "to share parameters between blocks, please set 'params' at "
                                 "Block construction instead." % name)
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _check_container_with_block(self):
        children = set(self._children.values())
        for key, value in self.__dict__.items():
            if isinstance(value, (list, tuple, dict)) and not (key.startswith('__') or
                                                                key == '_children'):
                if _has_unregistered_block(value, children):
                    warnings.warn('"%s.%s" is an unregistered container with Blocks. Note that '
                                  'Blocks inside the list, tuple or dict will not be registered '
                                  'automatically. Make sure to register them using '
                                  'register_child() or switching to nn.Sequential/'
                                  'nn.HybridSequential instead. ' % (type(self).__name__, key),
                                  stacklevel=3)

    def _alias(self):
        return type(self).__name__.lower()

    @property
    def prefix(self):
        """Prefix of this block's names, e.g. 'dense0_'."""
        return self._prefix

    @property
    def name(self):
        """The prefix without its trailing '_'."""
        return self._name

    def name_scope(self):
        """A ``with`` scope in which new blocks are named as children of this one."""
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
        self._check_container_with_block()
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

    def _collect_params_with_prefix(self, prefix=''):
        if prefix:
            prefix += '.'
        ret = OrderedDict((prefix + key, value) for key, value in self._reg_params.items())
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename, deduplicate=False):
        """Save the Parameters under their attribute paths ('0.weight', 'conv.bias', ...) in
        MXNet's .params format.

        Parameters
        ----------
        filename : str
        deduplicate : bool, default False
            Save a Parameter shared by several blocks once (under its last name).
        """
        params = self._collect_params_with_prefix()
        if deduplicate:
            by_param = OrderedDict((value, key) for key, value in params.items())
            params = OrderedDict((key, value) for value, key in by_param.items())
        ndarray.save(filename, OrderedDict((key, value._reduce())  # pylint: disable=protected-access
                                           for key, value in params.items()))

    def save_params(self, filename):
        """Deprecated: save with full Parameter names (prefix stripped); use
        ``save_parameters``."""
        warnings.warn('save_params is deprecated. Please use save_parameters. Note that if you '
                      'want load from SymbolBlock later, please use export instead.')
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as err:
            raise ValueError('%s\nsave_params is deprecated. Using save_parameters may resolve '
                             'this error.' % err) from None

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source='current'):
        """Load Parameters saved by ``save_parameters`` (or, for files with full names, by
        ``save_params`` / ``ParameterDict.save``).

        Parameters
        ----------
        filename : str
        ctx : Context or list of Context, optional
        allow_missing : bool, default False
        ignore_extra : bool, default False
        cast_dtype : bool, default False
        dtype_source : {'current', 'saved'}, default 'current'
        """
        loaded = ndarray.load(filename)
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if isinstance(loaded, list) or not any('.' in key for key in loaded.keys()):
            # full Parameter names (save_params / ParameterDict.save)
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            names_of = defaultdict(list)
            for key, value in params.items():
                names_of[value].append(key)
            for key, value in params.items():
                if not any(name in loaded for name in names_of[value]):
                    raise CheckError("Parameter '%s' is missing in file '%s', which contains "
                                     "parameters: %s. Set allow_missing=True to ignore missing "
                                     "parameters." % (key, filename,
                                                      _brief_print_list(loaded.keys())))
        for key, value in loaded.items():
            if key not in params:
                if not ignore_extra:
                    raise ValueError("Parameter '%s' loaded from file '%s' is not present in "
                                     "ParameterDict, which contains parameters %s. Set "
                                     "ignore_extra=True to ignore. "
                                     % (key, filename, _brief_print_list(self._params.keys())))
                continue
            params[key]._load_init(value, ctx, cast_dtype=cast_dtype,  # pylint: disable=protected-access
                                   dtype_source=dtype_source)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """Deprecated name of ``load_parameters``."""
        warnings.warn('load_params is deprecated. Please use load_parameters.')
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def register_child(self, block, name=None):
        """Register ``block`` as a child (named by its position when ``name`` is None)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """Call ``hook(block, inputs)`` before each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """Call ``hook(block, inputs, outputs)`` after each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Call ``fn(block)`` on every child recursively, then on this block; returns self."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize the Parameters of this block and its children
        (``collect_params().initialize(...)``)."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlocks among the children (a plain Block itself stays
        imperative)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype):
        """Cast the Parameters of this block and its children to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for param in self.params.values():
            param.cast(dtype)

    def save(self, prefix):
        """Save the structure (with the cached graphs of hybridized blocks) to
        ``prefix-model.json`` and the Parameters to ``prefix-model.params``."""
        from .block_io import save_block  # pylint: disable=import-outside-toplevel
        save_block(self, prefix)

    def load(self, prefix):
        """Load what ``save(prefix)`` wrote into this (identically structured) block."""
        from .block_io import load_block  # pylint: disable=import-outside-toplevel
        load_block(self, prefix)

    def __call__(self, *args):
        for hook in self._forward_pre_hooks.values():
            hook(self, args)
        out = self.forward(*args)
        for hook in self._forward_hooks.values():
            hook(self, args, out)
        return out

    def forward(self, *args):
        """The computation on the inputs; defined by subclasses."""
        raise NotImplementedError('%s does not define forward()' % type(self).__name__)

    def register_op_hook(self, callback, monitor_all=False):
        """Pass ``callback(name, op_name, array)`` to the hybridized children's graphs."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def summary(self, *inputs):
        """Print each layer's output shape and Parameter counts for one forward pass on
        ``inputs`` (the block must not be hybridized)."""
        from .block_io import print_summary  # pylint: disable=import-outside-toplevel
        print_summary(self, inputs)
