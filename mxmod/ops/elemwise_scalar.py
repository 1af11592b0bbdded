"""Elementwise operators with a scalar operand: ``_plus_scalar``, ``_rminus_scalar``, ...,
``_power_scalar``, ``_hypot_scalar`` and the scalar comparisons, each registered with MXNet's
CamelCase alias (``_PlusScalar``, ``_RMinusScalar`` ...). The scalar is converted to the array's
dtype first, as MXNet does."""
import numpy as np

from .base import Operator, Param, register
from .elemwise import _float_only, _is_int, mx_mod, mx_power
from .layout import out_like

class ScalarOp(Operator):
    """y = f(x, scalar); gradient as a function of (xp, x, s, y, dy)."""
    params = {'scalar': Param('float', 1.0)}
    mirror_cheap = True

    @staticmethod
    def fn(xp, x, s):
        raise NotImplementedError

    @staticmethod
    def grad(xp, x, s, y, dy):
        raise NotImplementedError

    into = None        # (ufunc, scalar first?) writing into a preallocated output

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        # MXNet converts the scalar to the array's dtype first (int32 * 1.5 multiplies by 1)
        scalar = x.dtype.type(self.p.scalar)
        out = out_like(octx.out[0], x) if octx.out and not _is_int(x) else None
        if out is not None:
            ufunc, reflected = self.into
            args = (scalar, x) if reflected else (x, scalar)
            getattr(octx.xp, ufunc)(*args, out=out, casting='unsafe')
            return [out]
        out = self.fn(octx.xp, x, scalar)
        if out.dtype != x.dtype:
            out = out.astype(x.dtype)
        return [out]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [self.grad(octx.xp, inputs[0], self.p.scalar, outputs[0], out_grads[0])]


_SCALAR = {
    'plus': (lambda xp, x, s: x + s, lambda xp, x, s, y, dy: dy, ()),
    'minus': (lambda xp, x, s: x - s, lambda xp, x, s, y, dy: dy, ()),
    'rminus': (lambda xp, x, s: s - x, lambda xp, x, s, y, dy: -dy, ()),
    'mul': (lambda xp, x, s: x * s, lambda xp, x, s, y, dy: dy * s, ()),
    'div': (lambda xp, x, s: x / s, lambda xp, x, s, y, dy: dy / s, ()),
    'rdiv': (lambda xp, x, s: s / x, lambda xp, x, s, y, dy: -dy * s / (x * x), ('inputs',)),
    'mod': (mx_mod, lambda xp, x, s, y, dy: _float_only(xp, y, dy), ('outputs',)),
    'rmod': (lambda xp, x, s: mx_mod(xp, s, x),
             lambda xp, x, s, y, dy: _float_only(xp, x, -dy * xp.floor(s / x)), ('inputs',)),
    'power': (mx_power, lambda xp, x, s, y, dy: dy * s * xp.power(x, s - 1),
              ('inputs',)),
    'rpower': (lambda xp, x, s: mx_power(xp, s, x), lambda xp, x, s, y, dy: dy * y * np.log(s),
               ('outputs',)),
    'maximum': (lambda xp, x, s: xp.maximum(x, s), lambda xp, x, s, y, dy: dy * (x >= s), ('inputs',)),
    'minimum': (lambda xp, x, s: xp.minimum(x, s), lambda xp, x, s, y, dy: dy * (x <= s), ('inputs',)),
    'hypot': (lambda xp, x, s: xp.hypot(x, s), lambda xp, x, s, y, dy: dy * x / y, ('inputs', 'outputs')),
}
_SCALAR_CMP = {
    'equal': lambda xp, x, s: x == s, 'not_equal': lambda xp, x, s: x != s,
    'greater': lambda xp, x, s: x > s, 'greater_equal': lambda xp, x, s: x >= s,
    'lesser': lambda xp, x, s: x < s, 'lesser_equal': lambda xp, x, s: x <= s,
    'logical_and': lambda xp, x, s: xp.logical_and(x, s), 'logical_or': lambda xp, x, s: xp.logical_or(x, s),
    'logical_xor': lambda xp, x, s: xp.logical_xor(x, s),
}


_SCALAR_UFUNC = {'plus': ('add', False), 'minus': ('subtract', False),
                 'rminus': ('subtract', True), 'mul': ('multiply', False),
                 'div': ('true_divide', False), 'rdiv': ('true_divide', True),
                 'power': ('power', False),
                 'rpower': ('power', True), 'maximum': ('maximum', False),
                 'minimum': ('minimum', False), 'hypot': ('hypot', False)}


def _scalar_class(key, fn, grad, uses, zero_grad=False):
    name = '_%s_scalar' % key
    camel = '_' + key.title().replace('_', '') + 'Scalar'
    if key.startswith('r') and key[1:] in _SCALAR:
        camel = '_R' + key[1:].title() + 'Scalar'
    into = _SCALAR_UFUNC.get(key)
    return register(type(name, (ScalarOp,), {
        'op_name': name, 'aliases': (camel,), 'fn': staticmethod(fn), 'grad': staticmethod(grad),
        'backward_uses': uses, 'into': into, 'writes_out': into is not None,
        'inplace_ok': into is not None, 'propagates_grad': not zero_grad}))


for _key, (_fn, _g, _uses) in _SCALAR.items():
    _scalar_class(_key, _fn, _g, _uses)
for _key, _fn in _SCALAR_CMP.items():
    _scalar_class(_key, _fn, lambda xp, x, s, y, dy: xp.zeros_like(dy), (), zero_grad=True)
