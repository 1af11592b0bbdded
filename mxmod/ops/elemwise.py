"""Elementwise operators: unary math, binary array-array (same shape)
and broadcast_*; the scalar forms are in elemwise_scalar.py.

Each family is a small class parametrised by its forward function and its gradient, registered
under MXNet's canonical name with MXNet's aliases (``_Plus`` for ``elemwise_add`` ...)."""
import numpy as np

from .base import Operator, register
from .broadcasting import broadcast_shape, unbroadcast
from .layout import out_like


def c_cast(xp, values, dtype):
    """Floating ``values`` converted to the integer ``dtype`` as MXNet's kernels do (a C cast on
    x86): truncation toward zero; NaN, infinities and out-of-range values become the most
    negative int32 (int64 for 8-byte types), narrower types keep the low bytes of that."""
    dtype = np.dtype(dtype)
    wide = np.dtype(np.int64 if dtype.itemsize == 8 else np.int32)
    info = np.iinfo(wide)
    with np.errstate(invalid='ignore'):
        bad = ~xp.isfinite(values) | (values >= info.max + 1.0) | (values < float(info.min))
        out = xp.where(bad, info.min, xp.trunc(xp.where(bad, 0, values))).astype(wide)
    return out.astype(dtype)


def _is_int(x):
    return x.dtype.kind in 'iu'


# ---- unary ------------------------------------------------------------------------------------
class Unary(Operator):
    """y = f(x); gradient given as a function of (xp, x, y, dy)."""
    mirror_cheap = True

    @staticmethod
    def fn(xp, x):
        raise NotImplementedError

    @staticmethod
    def grad(xp, x, y, dy):
        raise NotImplementedError

    into = None   # optional ufunc writing f(x) into a given array: into(x, out=out)
    into_fn = None    # or a function into_fn(xp, x, out) doing that

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        out = out_like(octx.out[0], x) if octx.out and not _is_int(x) else None
        if out is not None:
            if self.into_fn is not None:
                self.into_fn(octx.xp, x, out)
            else:
                getattr(octx.xp, self.into)(x, out=out)
            return [out]
        if not _is_int(x):
            return [self.fn(octx.xp, x)]
        # MXNet computes integer inputs in floating point and casts back (sqrt(5) = 2)
        with np.errstate(all='ignore'):
            y = self.fn(octx.xp, x)
            if y.dtype != x.dtype:
                y = c_cast(octx.xp, y, x.dtype) if y.dtype.kind in 'fc' else y.astype(x.dtype)
        return [y]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [self.grad(octx.xp, inputs[0], outputs[0], out_grads[0])]


# unary operators that are a single ufunc write into preallocated outputs (and may do so in place)
_UFUNC = {'tanh': 'tanh', 'exp': 'exp', 'expm1': 'expm1', 'log': 'log', 'log1p': 'log1p',
          'log2': 'log2', 'log10': 'log10', 'sqrt': 'sqrt', 'cbrt': 'cbrt', 'square': 'square',
          'abs': 'absolute', 'ceil': 'ceil', 'floor': 'floor',
          'trunc': 'trunc', 'negative': 'negative', 'sin': 'sin', 'cos': 'cos', 'tan': 'tan',
          'arcsin': 'arcsin', 'arccos': 'arccos', 'arctan': 'arctan', 'sinh': 'sinh',
          'cosh': 'cosh', 'arcsinh': 'arcsinh', 'arccosh': 'arccosh', 'arctanh': 'arctanh',
          'degrees': 'degrees', 'radians': 'radians'}


# MXNet evaluates these in single precision with the C library's correctly rounded (or nearly)
# functions; numpy's vectorised float32 versions are off by one unit in the last place for a
# large share of inputs (exp: about 40%). Evaluating them in double and rounding once matches
# MXNet's float32 results almost everywhere (exp: all but 0.1%).
_VIA_DOUBLE = ('exp', 'expm1', 'log', 'log2', 'log10', 'cbrt', 'sin', 'cos', 'tan', 'arcsin', 'arccos',
               'arctan', 'cosh', 'tanh')
_NARROW = (np.dtype(np.float32), np.dtype(np.float16))


def _via_double(ufunc_name):
    """fn(xp, x) and into(xp, x, out) evaluating ``ufunc_name`` in double for float32/16."""
    def fn(xp, x):
        ufunc = getattr(xp, ufunc_name)
        if x.dtype not in _NARROW:
            return ufunc(x)
        if xp is np:
            return ufunc(x, out=np.empty_like(x), dtype=np.float64, casting='same_kind')
        return ufunc(x.astype(np.float64)).astype(x.dtype)

    def into(xp, x, out):
        ufunc = getattr(xp, ufunc_name)
        if x.dtype not in _NARROW:
            ufunc(x, out=out)
        elif xp is np:
            ufunc(x, out=out, dtype=np.float64, casting='same_kind')
        else:
            out[...] = ufunc(x.astype(np.float64))
    return fn, into


def _unary(name, fn, grad, aliases=(), uses=('inputs', 'outputs')):
    ufunc = _UFUNC.get(name)
    into_fn = None
    if name in _VIA_DOUBLE:
        fn, into_fn = _via_double(ufunc)
    cls = type(name, (Unary,), {'op_name': name, 'aliases': tuple(aliases),
                                'fn': staticmethod(fn), 'grad': staticmethod(grad),
                                'backward_uses': uses, 'into': ufunc,
                                'into_fn': None if into_fn is None else staticmethod(into_fn),
                                'writes_out': ufunc is not None, 'inplace_ok': ufunc is not None})
    return register(cls)


def _sigmoid(xp, x):
    return (1 / (1 + xp.exp(-x))).astype(x.dtype, copy=False)


def _float_only(xp, x, grad):
    """``grad``, or zeros when ``x`` is an integer array (MXNet's % has no gradient on ints)."""
    return xp.zeros_like(grad) if x.dtype.kind in 'biu' else grad


def _zero_grad(xp, x, y, dy):
    return xp.zeros_like(dy)


# relu's gradient is NaN where its input was NaN (as MXNet's relu, unlike Activation's): y is 0, 1
# or NaN, so sign(y) is the mask with NaN kept.
_unary('relu', lambda xp, x: xp.maximum(x, 0), lambda xp, x, y, dy: dy * xp.sign(y), uses=('outputs',))
_unary('sigmoid', _sigmoid, lambda xp, x, y, dy: dy * y * (1 - y), uses=('outputs',))
_unary('tanh', lambda xp, x: xp.tanh(x), lambda xp, x, y, dy: dy * (1 - y * y), uses=('outputs',))
_unary('softsign', lambda xp, x: x / (1 + xp.abs(x)), lambda xp, x, y, dy: dy / (1 + xp.abs(x)) ** 2)
_unary('exp', lambda xp, x: xp.exp(x), lambda xp, x, y, dy: dy * y, uses=('outputs',))
_unary('expm1', lambda xp, x: xp.expm1(x), lambda xp, x, y, dy: dy * (y + 1), uses=('outputs',))
_unary('log', lambda xp, x: xp.log(x), lambda xp, x, y, dy: dy / x, uses=('inputs',))
_unary('log1p', lambda xp, x: xp.log1p(x), lambda xp, x, y, dy: dy / (1 + x), uses=('inputs',))
_unary('log2', lambda xp, x: xp.log2(x), lambda xp, x, y, dy: dy / (x * np.log(2)), uses=('inputs',))
_unary('log10', lambda xp, x: xp.log10(x), lambda xp, x, y, dy: dy / (x * np.log(10)), uses=('inputs',))
_unary('sqrt', lambda xp, x: xp.sqrt(x), lambda xp, x, y, dy: dy / (2 * y), uses=('outputs',))
_unary('rsqrt', lambda xp, x: 1 / xp.sqrt(x), lambda xp, x, y, dy: -0.5 * dy * y * y * y, uses=('outputs',))
_unary('cbrt', lambda xp, x: xp.cbrt(x), lambda xp, x, y, dy: dy / (3 * y * y), uses=('outputs',))
_unary('rcbrt', lambda xp, x: 1 / xp.cbrt(x), lambda xp, x, y, dy: -dy * y / (3 * x), uses=('inputs', 'outputs'))
_unary('square', lambda xp, x: x * x, lambda xp, x, y, dy: 2 * x * dy, uses=('inputs',))
_unary('abs', lambda xp, x: xp.abs(x), lambda xp, x, y, dy: dy * xp.sign(x), uses=('inputs',))


def mx_sign(xp, x):
    """MXNet's sign: -1, 0 or 1, and 0 for NaN (numpy gives NaN)."""
    out = xp.sign(x)
    if x.dtype.kind == 'f':
        out = xp.where(xp.isnan(x), 0, out).astype(x.dtype)
    return out


def _round_half_away(xp, x):
    """MXNet's round (C's round): halves go away from zero (numpy's go to even)."""
    if x.dtype.kind not in 'fc':
        return x.copy()
    whole = xp.trunc(x)
    return xp.where(xp.abs(x - whole) == 0.5, whole + xp.sign(x), xp.round(x)).astype(x.dtype)


def _rint_half_down(xp, x):
    """MXNet's rint: the nearer of floor and ceil, halves going to the floor (2.5 -> 2,
    -2.5 -> -3); the differences are exact in floating point."""
    if x.dtype.kind not in 'fc':
        return x.copy()
    low, high = xp.floor(x), xp.ceil(x)
    return xp.where(x - low <= high - x, low, high).astype(x.dtype)


_unary('sign', mx_sign, _zero_grad, uses=())
_unary('round', _round_half_away, _zero_grad, uses=())
_unary('rint', _rint_half_down, _zero_grad, uses=())
_unary('ceil', lambda xp, x: xp.ceil(x), _zero_grad, uses=())
_unary('floor', lambda xp, x: xp.floor(x), _zero_grad, uses=())
_unary('trunc', lambda xp, x: xp.trunc(x), _zero_grad, uses=())
_unary('fix', lambda xp, x: xp.fix(x), _zero_grad, uses=())
_unary('reciprocal', lambda xp, x: 1 / x, lambda xp, x, y, dy: -dy * y * y, uses=('outputs',))
_unary('negative', lambda xp, x: -x, lambda xp, x, y, dy: -dy, uses=())
_unary('sin', lambda xp, x: xp.sin(x), lambda xp, x, y, dy: dy * xp.cos(x), uses=('inputs',))
_unary('cos', lambda xp, x: xp.cos(x), lambda xp, x, y, dy: -dy * xp.sin(x), uses=('inputs',))
_unary('tan', lambda xp, x: xp.tan(x), lambda xp, x, y, dy: dy * (1 + y * y), uses=('outputs',))
_unary('arcsin', lambda xp, x: xp.arcsin(x), lambda xp, x, y, dy: dy / xp.sqrt(1 - x * x), uses=('inputs',))
_unary('arccos', lambda xp, x: xp.arccos(x), lambda xp, x, y, dy: -dy / xp.sqrt(1 - x * x), uses=('inputs',))
_unary('arctan', lambda xp, x: xp.arctan(x), lambda xp, x, y, dy: dy / (1 + x * x), uses=('inputs',))
_unary('sinh', lambda xp, x: xp.sinh(x), lambda xp, x, y, dy: dy * xp.cosh(x), uses=('inputs',))
_unary('cosh', lambda xp, x: xp.cosh(x), lambda xp, x, y, dy: dy * xp.sinh(x), uses=('inputs',))
_unary('arcsinh', lambda xp, x: xp.arcsinh(x), lambda xp, x, y, dy: dy / xp.sqrt(x * x + 1), uses=('inputs',))
_unary('arccosh', lambda xp, x: xp.arccosh(x), lambda xp, x, y, dy: dy / xp.sqrt(x * x - 1), uses=('inputs',))
_unary('arctanh', lambda xp, x: xp.arctanh(x), lambda xp, x, y, dy: dy / (1 - x * x), uses=('inputs',))
_unary('degrees', lambda xp, x: xp.degrees(x), lambda xp, x, y, dy: dy * (180 / np.pi), uses=())
_unary('radians', lambda xp, x: xp.radians(x), lambda xp, x, y, dy: dy * (np.pi / 180), uses=())
_unary('_copy', lambda xp, x: x.copy(), lambda xp, x, y, dy: dy, aliases=('identity',), uses=())


@register
class BlockGrad(Unary):
    """Identity forward; no gradient flows back."""
    op_name = 'BlockGrad'
    aliases = ('stop_gradient',)
    backward_uses = ()
    propagates_grad = False
    needs_head_grad = False
    fn = staticmethod(lambda xp, x: x.copy())
    grad = staticmethod(lambda xp, x, y, dy: xp.zeros_like(dy))


@register
class ZerosLike(Unary):
    """Zeros with the input's shape."""
    op_name = 'zeros_like'
    backward_uses = ()
    propagates_grad = False
    fn = staticmethod(lambda xp, x: xp.zeros_like(x))
    grad = staticmethod(_zero_grad)


@register
class OnesLike(Unary):
    """Ones with the input's shape."""
    op_name = 'ones_like'
    backward_uses = ()
    propagates_grad = False
    fn = staticmethod(lambda xp, x: xp.ones_like(x))
    grad = staticmethod(_zero_grad)


# ---- binary, same shape -----------------------------------------------------------------------
class Binary(Operator):
    """z = f(a, b) for two arrays; gradients given as functions of (xp, a, b, z, dz)."""
    arguments = ('lhs', 'rhs')
    mirror_cheap = True
    broadcast = False

    @staticmethod
    def fn(xp, a, b):
        raise NotImplementedError

    @staticmethod
    def grad_a(xp, a, b, z, dz):
        raise NotImplementedError

    @staticmethod
    def grad_b(xp, a, b, z, dz):
        raise NotImplementedError

    into = None   # the ufunc computing fn, for writing into a preallocated same-shape output

    def forward(self, octx, inputs, aux):
        a, b = inputs
        out = out_like(octx.out[0], a) if octx.out and not _is_int(a) else None
        if out is not None and a.shape == b.shape:
            getattr(octx.xp, self.into)(a, b, out=out, casting='unsafe')
            return [out]
        out = self.fn(octx.xp, a, b)
        if out.dtype != a.dtype:
            out = out.astype(a.dtype)
        return [out]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        a, b = inputs
        dz = out_grads[0]
        need = octx.need_grad or (True, True)
        ga = self.grad_a(xp, a, b, outputs[0], dz) if need[0] else None
        gb = self.grad_b(xp, a, b, outputs[0], dz) if need[1] else None
        if self.broadcast:
            ga = None if ga is None else unbroadcast(ga, a.shape)
            gb = None if gb is None else unbroadcast(gb, b.shape)
        return [ga, gb]

    def infer_shape(self, in_shapes, out_shapes):
        if not self.broadcast:
            return super().infer_shape(in_shapes, out_shapes)
        a, b = in_shapes
        if a is None or b is None:     # MXNet infers nothing backwards through broadcasting
            return in_shapes, out_shapes
        return in_shapes, [broadcast_shape(self.op_name, a, b)]


def mx_mod(xp, a, b):
    """MXNet's %: the sign of the divisor (as numpy's), and 0 where the divisor is 0."""
    with np.errstate(divide='ignore', invalid='ignore'):
        out = xp.mod(a, b)
        return xp.where(b == 0, 0, out).astype(out.dtype, copy=False)


def mx_power(xp, a, b):
    """a ** b; integer operands are raised in floating point and cast back as MXNet does (so
    negative exponents give 0 or 1 instead of numpy's error)."""
    ints = _is_int(xp.asarray(a)) and _is_int(xp.asarray(b))
    if not ints:
        return xp.power(a, b)
    dtype = xp.result_type(a, b)
    with np.errstate(all='ignore'):
        wide = xp.power(xp.asarray(a).astype(np.float64), xp.asarray(b).astype(np.float64))
    return c_cast(xp, wide, dtype)


def _safe_pow_grad_b(xp, a, b, z, dz):
    return dz * z * xp.log(xp.where(a > 0, a, 1))


_BINARY = {
    # name: (fn, grad_a, grad_b, uses)
    'add': (lambda xp, a, b: a + b, lambda xp, a, b, z, dz: dz, lambda xp, a, b, z, dz: dz, ()),
    'sub': (lambda xp, a, b: a - b, lambda xp, a, b, z, dz: dz, lambda xp, a, b, z, dz: -dz, ()),
    'mul': (lambda xp, a, b: a * b, lambda xp, a, b, z, dz: dz * b, lambda xp, a, b, z, dz: dz * a,
            ('inputs',)),
    'div': (lambda xp, a, b: a / b, lambda xp, a, b, z, dz: dz / b,
            lambda xp, a, b, z, dz: -dz * a / (b * b), ('inputs',)),
    'mod': (mx_mod, lambda xp, a, b, z, dz: _float_only(xp, a, dz),
            lambda xp, a, b, z, dz: _float_only(xp, a, -dz * xp.floor(a / b)), ('inputs',)),
    'power': (mx_power, lambda xp, a, b, z, dz: dz * b * xp.power(a, b - 1),
              _safe_pow_grad_b, ('inputs', 'outputs')),
    'maximum': (lambda xp, a, b: xp.maximum(a, b), lambda xp, a, b, z, dz: dz * (a >= b),
                lambda xp, a, b, z, dz: dz * (a < b), ('inputs',)),
    'minimum': (lambda xp, a, b: xp.minimum(a, b), lambda xp, a, b, z, dz: dz * (a <= b),
                lambda xp, a, b, z, dz: dz * (a > b), ('inputs',)),
    'hypot': (lambda xp, a, b: xp.hypot(a, b), lambda xp, a, b, z, dz: dz * a / z,
              lambda xp, a, b, z, dz: dz * b / z, ('inputs', 'outputs')),
}
_COMPARE = {
    'equal': lambda xp, a, b: a == b, 'not_equal': lambda xp, a, b: a != b,
    'greater': lambda xp, a, b: a > b, 'greater_equal': lambda xp, a, b: a >= b,
    'lesser': lambda xp, a, b: a < b, 'lesser_equal': lambda xp, a, b: a <= b,
    'logical_and': lambda xp, a, b: xp.logical_and(a, b), 'logical_or': lambda xp, a, b: xp.logical_or(a, b),
    'logical_xor': lambda xp, a, b: xp.logical_xor(a, b),
}
_ZERO2 = lambda xp, a, b, z, dz: xp.zeros_like(dz)  # noqa: E731
_BROADCAST_ALIASES = {'add': ('broadcast_plus',), 'sub': ('broadcast_minus',)}
_ELEMWISE_NAMES = {'add': ('elemwise_add', ('_Plus', '_plus', '_add')),
                   'sub': ('elemwise_sub', ('_Minus', '_minus', '_sub')),
                   'mul': ('elemwise_mul', ('_Mul', '_mul')),
                   'div': ('elemwise_div', ('_Div', '_div')),
                   'mod': ('_mod', ('_Mod',)), 'power': ('_power', ('_Power', '_pow')),
                   'maximum': ('_maximum', ('_Maximum',)), 'minimum': ('_minimum', ('_Minimum',)),
                   'hypot': ('_hypot', ('_Hypot',))}


_BINARY_UFUNC = {'add': 'add', 'sub': 'subtract', 'mul': 'multiply', 'div': 'true_divide',
                 'power': 'power', 'maximum': 'maximum', 'minimum': 'minimum',
                 'hypot': 'hypot'}


def _binary_class(name, aliases, fn, ga, gb, uses, broadcast, ufunc=None, zero_grad=False):
    # broadcast gradients are summed back to the input shapes, so backward reads the inputs
    uses = ('inputs',) + tuple(u for u in uses if u != 'inputs') if broadcast else uses
    fills = ufunc is not None and not broadcast
    return register(type(name, (Binary,), {
        'op_name': name, 'aliases': tuple(aliases), 'fn': staticmethod(fn),
        'grad_a': staticmethod(ga), 'grad_b': staticmethod(gb), 'backward_uses': uses,
        'broadcast': broadcast, 'into': ufunc if fills else None, 'writes_out': fills,
        'inplace_ok': fills, 'propagates_grad': not zero_grad}))


for _key, (_fn, _ga, _gb, _uses) in _BINARY.items():
    _name, _aliases = _ELEMWISE_NAMES[_key]
    # MXNet's _maximum/_power/... broadcast nothing but numpy does; shapes are checked by inference
    _binary_class(_name, _aliases, _fn, _ga, _gb, _uses, False, _BINARY_UFUNC.get(_key))
    _binary_class('broadcast_' + _key, _BROADCAST_ALIASES.get(_key, ()), _fn, _ga, _gb, _uses, True)
for _key, _fn in _COMPARE.items():
    _binary_class('_' + _key, ('_' + _key.title().replace('_', ''),), _fn, _ZERO2, _ZERO2, (), False,
                  zero_grad=True)
    _binary_class('broadcast_' + _key, (), _fn, _ZERO2, _ZERO2, (), True, zero_grad=True)
