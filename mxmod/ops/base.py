"""The operator protocol: one class per operator, registered once, used by ``mx.sym`` and ``mx.nd``.

An operator class declares its parameters (``params``), the names of its arguments, outputs and
auxiliary states, and implements shape/type inference, ``forward`` and ``backward`` side by side.
An instance holds one parsed set of attributes (the strings MXNet keeps in its symbol JSON)."""
import ast

import numpy as np

from ..base import MXNetError
# the shape helpers of the operators' inference, exported here too
from .shape_infer import (unknown, merge_shape, same_shape_infer, forward_shape_infer, mx_dim,
                          from_mx_dims, rank_check)

__all__ = ['Param', 'Operator', 'OpContext', 'register', 'get_op', 'OPS', 'REQUIRED',
           'unknown', 'merge_shape', 'same_shape_infer', 'forward_shape_infer', 'mx_dim',
           'from_mx_dims', 'rank_check',
           'check_arguments', 'call_text']

OPS = {}
REQUIRED = object()


def register(cls):
    """Class decorator: add an operator class to the table under ``op_name`` and its ``aliases``."""
    for name in (cls.op_name,) + tuple(cls.aliases):
        OPS[name] = cls
    return cls


def get_op(name):
    """Return the operator class registered as ``name``."""
    try:
        return OPS[name]
    except KeyError:
        raise MXNetError('unknown operator %r' % (name,)) from None


# ---- parameters -------------------------------------------------------------------------------
def _parse_bool(v):
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ('true', '1'):
            return True
        if low in ('false', '0'):
            return False
        raise ValueError('expected a boolean, got %r' % v)
    return bool(v)


def _parse_tuple(v):
    if isinstance(v, str):
        v = v.strip()
        if v in ('None', ''):
            return None
        v = ast.literal_eval(v.replace('L', ''))
    if v is None:
        return None
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    return tuple(None if x is None else int(x) for x in v)


def _parse_float_tuple(v):
    if isinstance(v, str):
        v = ast.literal_eval(v)
    if isinstance(v, (int, float)):
        return (float(v),)
    return tuple(float(x) for x in v)


def _parse_optional(fn):
    def parse(v):
        if v is None or (isinstance(v, str) and v.strip() in ('None', '')):
            return None
        return fn(v)
    return parse


def _parse_dtype(v):
    if v is None or v == 'None':
        return None
    return np.dtype(v).name


def _parse_int(v):
    if isinstance(v, str):
        return int(float(v)) if '.' in v or 'e' in v else int(v)
    return int(v)


_KINDS = {
    'int': _parse_int, 'float': float, 'bool': _parse_bool, 'str': str, 'shape': _parse_tuple,
    'floats': _parse_float_tuple, 'dtype': _parse_dtype,
    'int?': _parse_optional(_parse_int), 'float?': _parse_optional(float),
    'shape?': _parse_optional(_parse_tuple), 'bool?': _parse_optional(_parse_bool),
    'str?': _parse_optional(str), 'dtype?': _parse_optional(_parse_dtype),
}


class Param(object):
    """Declaration of one operator parameter.

    Parameters
    ----------
    kind : str
        One of 'int', 'float', 'bool', 'str', 'shape' (tuple of ints), 'floats', 'dtype', or the same
        with a trailing '?' meaning None is allowed.
    default : object
        Default value, or ``REQUIRED``.
    choices : sequence, optional
        Allowed values for 'str' parameters.
    lower, upper : number, optional
        Bounds MXNet's parameter declaration sets (``set_lower_bound`` / ``set_range``).
    """

    def __init__(self, kind, default=REQUIRED, choices=None, lower=None, upper=None):
        self.kind = kind
        self.parse_fn = _KINDS[kind]
        self.default = default
        self.choices = choices
        self.lower = lower
        self.upper = upper

    def parse(self, op_name, name, value, given=None):
        """Convert ``value`` (a string from JSON or a Python value) to its typed form.

        ``given`` (the attributes of the call) is shown in errors as MXNet does."""
        try:
            out = self.parse_fn(value)
        except (ValueError, TypeError, SyntaxError):
            raise MXNetError('Invalid Parameter format for %s expect %s but value=%r, in operator %s'
                             % (name, self.describe(), attr_str(value),
                                call_text(op_name, given or {name: value}))) from None
        if self.choices is not None and out not in self.choices:
            raise MXNetError('Invalid Input: %r, valid values are: %s, in operator %s'
                             % (attr_str(value), _choices_text(self.choices),
                                call_text(op_name, given or {name: value})))
        if (self.lower is not None or self.upper is not None) and out is not None:
            self._check_bounds(op_name, name, out, given)
        return out

    def _check_bounds(self, op_name, name, out, given):
        if self.upper is not None and not self.lower <= out <= self.upper:
            raise MXNetError('value %s for Parameter %s exceed bound [%s,%s], in operator %s'
                             % (attr_str(out), name, self.lower, self.upper,
                                call_text(op_name, given or {name: out})))
        if self.lower is not None and out < self.lower:
            raise MXNetError('value %s for Parameter %s should be greater equal to %s, in '
                             'operator %s' % (attr_str(out), name, self.lower,
                                              call_text(op_name, given or {name: out})))

    def describe(self):
        """The parameter's type as MXNet's help shows it: 'int', 'boolean', 'Shape(tuple)', ..."""
        if self.choices is not None:
            return _choices_text(self.choices)
        return _KIND_TEXT.get(self.kind.rstrip('?'), self.kind)

    def help_line(self, name):
        """``name : type, required`` or ``name : type, optional, default=value``."""
        if self.default is REQUIRED:
            return '%s : %s, required' % (name, self.describe())
        default = 'None' if self.default is None else attr_str(self.default)
        if isinstance(self.default, bool):
            default = str(int(self.default))
        return '%s : %s, optional, default=%s' % (name, self.describe(), default)


def _choices_text(choices):
    """``{None, 'a', 'b'}``: the allowed values as MXNet lists them (None first, then sorted)."""
    ordered = ([None] if None in choices else []) + sorted(c for c in choices if c is not None)
    return '{%s}' % ', '.join('None' if c is None else repr(c) for c in ordered)


_KIND_TEXT = {'int': 'int', 'float': 'float', 'bool': 'boolean', 'str': 'string',
              'shape': 'Shape(tuple)', 'floats': 'tuple of <float>', 'dtype': 'dtype'}


def call_text(op_name, attrs, name=''):
    """``Op(name="", key="value", ...)``: how MXNet's errors show the call."""
    parts = ['name="%s"' % name] + ['%s="%s"' % (k, attr_str(v)) for k, v in attrs.items()]
    return '%s(%s)' % (op_name, ', '.join(parts))


def unknown_argument_error(cls, key, attrs):
    """MXNet's error for an argument ``key`` that operator class ``cls`` does not have."""
    lines = '\n'.join(decl.help_line(name) for name, decl in cls.params.items())
    return MXNetError("Cannot find argument '%s', Possible Arguments:\n----------------\n%s\n, "
                      "in operator %s" % (key, lines, call_text(cls.op_name, attrs)))


def check_arguments(cls, attrs):
    """Raise MXNet's error for the first key of ``attrs`` (a call's keyword parameters) that is
    neither a parameter of ``cls`` nor a hidden ``__key__`` attribute."""
    if getattr(cls, 'accepts_any_params', False) or not cls.params:
        # MXNet parses attributes only for operators that declare parameters; the others
        # (broadcast_*, elemwise_*, unary math) keep any extra keyword and ignore it
        return
    for key in attrs:
        if key not in cls.params and not (key.startswith('__') and key.endswith('__')):
            raise unknown_argument_error(cls, key, attrs)


def attr_str(value):
    """String form of an attribute value as MXNet writes it into symbol JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return '(' + ', '.join(attr_str(v) for v in value) + (',)' if len(value) == 1 else ')')
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return np.dtype(value).name
    return str(value)


class _Namespace(object):
    def __init__(self, values):
        self.__dict__.update(values)


class OpContext(object):
    """Per-node, per-executor state handed to forward/backward.

    Attributes
    ----------
    xp : module
        numpy or cupy.
    ctx : Context
        The device.
    is_train : bool
        Training mode (Dropout, BatchNorm batch statistics).
    saved : dict
        Scratch space that forward may fill for backward (e.g. a dropout mask).
    need_grad : list of bool
        Which arguments need a gradient in this backward.
    out_shapes : list of tuple or None
        Output shapes inferred at bind time (lets source ops resolve unknown dimensions).
    out : list or None
        Preallocated output arrays (entries may be None) for operators with ``writes_out``.
    grad_out : list or None
        Per argument, the array its gradient may be written into (an argument's final gradient
        buffer when this step is its only contributor), or None.
    shared : dict or None
        Given when an argument named by the operator's ``shares_derived`` is read by several steps
        of the graph: a cache, common to the executor's steps and emptied before every forward,
        for arrays derived from such an argument (keyed by ``id`` of the argument, holding the
        argument itself to guard the key).
    fused : str or None
        Set by the executor (executor/fusion.py) on a BatchNorm ('bn_relu', or 'bn_relu_fresh'
        when its output must be a new array) and the relu that alone reads its output
        ('relu_after_bn') while the two run fused.
    grad_ready : callable or None
        Set while a gradient-ready hook is installed: an operator that has written the final
        gradient of argument ``i`` into ``grad_out[i]`` may call ``grad_ready(i)`` before it
        computes its other gradients (the gradient can then travel while it does).
    """
    __slots__ = ('xp', 'ctx', 'is_train', 'saved', 'need_grad', 'out_shapes', 'out', 'grad_out',
                 'shared', 'fused', 'grad_ready')

    def __init__(self, xp, ctx, is_train=False, need_grad=None, out_shapes=None):
        self.xp = xp
        self.ctx = ctx
        self.is_train = is_train
        self.saved = {}
        self.need_grad = need_grad
        self.out_shapes = out_shapes
        self.out = None
        self.grad_out = None
        self.shared = None
        self.fused = None
        self.grad_ready = None

    @property
    def rng(self):
        """The device's random stream (seeded by mx.random.seed)."""
        from ..rng import generator  # pylint: disable=import-outside-toplevel
        return generator(self.ctx)


class Operator(object):
    """Base class of every operator. Subclasses set the class attributes and override the methods."""
    op_name = None
    aliases = ()
    params = {}
    arguments = ('data',)
    outputs = ('output',)
    aux_states = ()
    is_loss = False          # head gradients are ignored (loss layers)
    propagates_grad = True   # False: the gradient of every input is zero (BlockGrad...)
    differentiable = True    # False: binding a graph that needs its gradient is an error
    writes_out = False       # forward writes into octx.out arrays when given (never a view of inputs)
    inplace_ok = False       # with writes_out: octx.out may be the memory of an input (elementwise)
    mirror_cheap = False     # may be recomputed during backward when mirroring
    backward_uses = ('inputs', 'outputs')   # what backward reads (for memory planning)
    backward_outputs = None  # with 'outputs' in backward_uses: the indices of the outputs backward
                             # reads (None: all); the others are passed as None and not kept
    shares_derived = ()      # argument indices whose derived copies (octx.shared) pay off when
                             # several steps read the same array (a weight shared across steps)

    def __init__(self, attrs=None):
        attrs = dict(attrs or {})
        given = dict(attrs)
        check_arguments(type(self), attrs)
        self.attrs = {}      # the string attributes as stored in JSON
        values = {}
        for key, decl in self.params.items():
            if key in attrs:
                raw = attrs.pop(key)
                values[key] = decl.parse(self.op_name, key, raw, given)
                self.attrs[key] = attr_str(raw)
            elif decl.default is REQUIRED:
                raise MXNetError('Required parameter %s of %s is not presented, in operator %s'
                                 % (key, decl.describe(), call_text(self.op_name, given)))
            else:
                values[key] = decl.default
        self.p = _Namespace(values)
        self.setup()

    def setup(self):
        """Hook run after parameters are parsed (validate combinations, precompute constants)."""

    def describe(self):
        """Short name for error messages."""
        return self.op_name

    # ---- names -----------------------------------------------------------
    def list_arguments(self):
        """Names of the inputs (excluding auxiliary states)."""
        return list(self.arguments)

    def list_outputs(self):
        """Names of the outputs."""
        return list(self.outputs)

    def list_auxiliary_states(self):
        """Names of the auxiliary states (updated in place by forward, no gradient)."""
        return list(self.aux_states)

    def input_var_attrs(self):
        """Extra attributes for variables auto-created for inputs, by input name (e.g. BatchNorm's
        moving_mean gets ``{'__init__': '["zero", {}]'}``), as MXNet sets them on composition."""
        return {}

    def num_visible_outputs(self):
        """Outputs a symbol exposes (BatchNorm hides its mean/var unless output_mean_var)."""
        return len(self.list_outputs())

    # ---- inference --------------------------------------------------------
    def infer_shape(self, in_shapes, out_shapes):
        """Complete partial shapes. ``in_shapes`` covers arguments then auxiliary states; each entry
        is a tuple (0 for an unknown dimension) or None. Return ``(in_shapes, out_shapes)``."""
        return same_shape_infer(self, in_shapes, out_shapes)

    def infer_type(self, in_types, out_types):
        """Complete dtypes (numpy dtype names or None). Default: everything shares one dtype."""
        known = [t for t in list(in_types) + list(out_types) if t is not None]
        if not known:
            return in_types, out_types
        return [known[0]] * len(in_types), [known[0]] * len(out_types)

    # ---- computation -------------------------------------------------------
    def forward(self, octx, inputs, aux):
        """Compute outputs from ``inputs`` (arrays in ``list_arguments`` order). Auxiliary arrays may
        be updated in place. Return a list of output arrays."""
        raise NotImplementedError(self.op_name)

    def backward(self, octx, out_grads, inputs, outputs, aux):
        """Return the gradients of the arguments (a list, None where there is none) given the
        gradients of the outputs (None for a loss op's ignored head gradient)."""
        raise MXNetError('operator %s has no gradient' % self.op_name)
