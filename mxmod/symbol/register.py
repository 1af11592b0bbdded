"""Symbol creation: ``mx.sym.Variable`` and one creation function per registered operator."""
import json

import numpy as np

from ..attribute import AttrScope
from ..base import MXNetError, string_types
from ..name import NameManager
from ..ops.base import OPS, attr_str, check_arguments
from .graph import HIDDEN_KEYS, Node, make_op, normalize_attrs
from .symbol import Symbol

# numpy dtype name -> MXNet's type flag, as Variable(dtype=) stores it
DTYPE_FLAGS = {'float32': 0, 'float64': 1, 'float16': 2, 'uint8': 3, 'int32': 4, 'int8': 5,
               'int64': 6, 'bool': 7, 'int16': 8, 'uint16': 9, 'uint32': 10, 'uint64': 11,
               'bfloat16': 12}
FLAG_DTYPES = {v: k for k, v in DTYPE_FLAGS.items()}
STYPE_FLAGS = {'default': 0, 'row_sparse': 1, 'csr': 2}


def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,  # pylint: disable=invalid-name
             stype=None, profiler_scope=None, **kwargs):
    """Create a symbolic variable (a graph input).

    Parameters
    ----------
    name : str
    attr : dict of str to str, optional
    shape : tuple, optional
        Known shape (0 for unknown dimensions), used by shape inference.
    lr_mult, wd_mult : float, optional
        Learning-rate / weight-decay multipliers read by the optimizer.
    dtype : str or numpy dtype, optional
    init : Initializer or str, optional
    stype : str, optional
    """
    if not isinstance(name, string_types):
        raise TypeError('Expect a string for variable `name`, got %s' % type(name).__name__)
    attrs = AttrScope.current.get(attr)
    attrs = normalize_attrs(attrs)
    if shape is not None:
        attrs['__shape__'] = _shape_attr(name, shape)
    if lr_mult is not None:
        attrs['__lr_mult__'] = str(lr_mult)
    if wd_mult is not None:
        attrs['__wd_mult__'] = str(wd_mult)
    if dtype is not None:
        attrs['__dtype__'] = str(DTYPE_FLAGS[np.dtype(dtype).name])
    if init is not None:
        attrs['__init__'] = init if isinstance(init, string_types) else init.dumps()
    if stype is not None:
        attrs['__storage_type__'] = str(STYPE_FLAGS[stype])
    if profiler_scope is not None:
        attrs['__profiler_scope__'] = profiler_scope
    for key, val in kwargs.items():
        if not (key.startswith('__') and key.endswith('__')):
            raise ValueError('Attribute name=%s is not supported. Additional attributes must start '
                             'and end with double underscores, e.g, __yourattr__' % key)
        attrs[key] = str(val)
    return Symbol([(Node(None, name, attrs), 0)])


var = Variable


def _shape_attr(name, shape):
    """The ``__shape__`` text of variable ``name`` (a string is kept as MXNet keeps it)."""
    if isinstance(shape, string_types):
        return shape
    if isinstance(shape, int) and not isinstance(shape, bool):
        return str(shape)
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else None
    if dims is None or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                               for d in dims):
        raise TypeError('Variable %r: shape must be a tuple of ints, got %r' % (name, shape))
    return attr_str(tuple(int(d) for d in dims))


def create(op_name, hint, args, kwargs):
    """Create a symbol applying operator ``op_name`` to symbol inputs; named from ``hint``."""
    cls = OPS[op_name]
    name = kwargs.pop('name', None)
    kwargs.pop('out', None)     # accepted and ignored, as MXNet's symbol functions do
    user_attr = dict(kwargs.pop('attr', None) or {})
    inputs, params = {}, {}
    for key, val in kwargs.items():
        if isinstance(val, Symbol):
            inputs[key] = val
        elif key in HIDDEN_KEYS:
            user_attr[key] = attr_str(val)
        elif val is not None or _optional(cls, key):
            params[key] = attr_str(val)     # an explicit None of an optional one is 'None'
    k = 0
    while k < len(args) and (args[k] is None or isinstance(args[k], Symbol)):
        k += 1
    pos = [a for a in args[:k] if a is not None]
    rest = args[k:]
    if rest:
        free = [n for n in cls.params if n not in kwargs]
        if len(rest) > len(free) or any(isinstance(a, Symbol) for a in rest):
            raise TypeError('%s: positional arguments must be input Symbols followed by parameters '
                            '%s; got %r' % (op_name, list(cls.params), args))
        params.update((n, attr_str(v)) for n, v in zip(free, rest))
    if 'num_args' in cls.params and 'num_args' not in params:
        params['num_args'] = str(len(pos) + len(inputs))
    check_arguments(cls, params)
    attrs = normalize_attrs(AttrScope.current.get(user_attr))
    if cls.params:
        # MXNet hands attr= and AttrScope entries to the operator's parameter parser as well:
        # an unknown one is refused at the call (an operator without parameters keeps them)
        check_arguments(cls, dict(attrs, **params))
    attrs.update(params)
    op = make_op(op_name, attrs)
    name = NameManager.current.get(name, hint)
    return _wire(op, name, attrs, pos, inputs)


def _optional(cls, key):
    """True for a parameter that takes None (MXNet stores an explicit None as 'None')."""
    decl = cls.params.get(key)
    return decl is not None and decl.kind.endswith('?')


def _wire(op, name, attrs, pos, named):
    arg_names = op.list_arguments()
    aux_names = op.list_auxiliary_states()
    all_names = arg_names + aux_names
    if len(pos) > len(all_names):
        raise MXNetError('%s %r: %d positional inputs given, it takes %s'
                         % (op.op_name, name, len(pos), all_names))
    given = dict(zip(all_names, pos))
    if not all_names:
        # MXNet composes an operator without inputs without looking at keyword Symbols:
        # mx.sym.random.normal(..., data=sym) ignores data
        named = {}
    for key, sym in named.items():
        if key not in all_names:
            raise MXNetError('%s %r has no input named %r; inputs are %s'
                             % (op.op_name, name, key, all_names))
        given[key] = sym
    entries = []
    extra_attrs = op.input_var_attrs()
    for arg in all_names:
        sym = given.get(arg)
        if sym is None:
            var_attrs = dict(attrs)
            var_attrs.update(extra_attrs.get(arg, {}))
            entries.append((Node(None, '%s_%s' % (name, arg), var_attrs), 0))
        else:
            if len(sym) != 1:
                raise MXNetError('%s %r: input %r must be a single-output symbol, got %d outputs'
                                 % (op.op_name, name, arg, len(sym)))
            entries.append(sym._outputs[0])
    node = Node(op, name, attrs, entries)
    count = op.num_visible_outputs()
    return Symbol([(node, i) for i in range(count)])


def make_function(op_name, hint=None):
    """Build ``mx.sym.<op_name>``."""
    hint = hint or op_name

    def fn(*args, **kwargs):
        return create(op_name, hint.lower(), args, kwargs)
    fn.__name__ = op_name
    fn.__doc__ = 'Create a symbol applying operator %s.' % OPS[op_name].op_name
    return fn


def init_dumps(spec):
    """JSON of an initializer spec given as [name, kwargs]."""
    return json.dumps(spec)
