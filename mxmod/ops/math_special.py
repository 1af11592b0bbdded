"""Unary special functions and small elementwise operators: erf, erfinv, gamma, gammaln,
hard_sigmoid and logical_not.

The special functions are evaluated in float64 (``specfun``) and cast back to the input's dtype;
their gradients are MXNet's: ``2/sqrt(pi) exp(-x^2)``, ``sqrt(pi)/2 exp(erfinv(x)^2)``,
``gamma(x) psi(x)`` and ``psi(x)``."""
import math

from .base import Param, register
from .elemwise import Unary
from . import specfun


class _Special(Unary):
    """A unary special function computed in float64 and returned in the input's dtype."""
    writes_out = False
    inplace_ok = False
    value = None        # specfun function (xp, x) -> float64 array
    slope = None        # (xp, x, y) -> dy/dx in float64

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        return [self.value(octx.xp, x).astype(x.dtype, copy=False)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        dy = out_grads[0]
        slope = self.slope(octx.xp, inputs[0], outputs[0])
        return [(dy * slope).astype(dy.dtype, copy=False)]


def _special(name, value, slope, uses, doc):
    return register(type(name, (_Special,), {
        'op_name': name, 'value': staticmethod(value), 'slope': staticmethod(slope),
        'backward_uses': uses, '__doc__': doc}))


def _erf_slope(xp, x, y):
    x = x.astype('float64')
    return (2.0 / math.sqrt(math.pi)) * xp.exp(-x * x)


def _erfinv_slope(xp, x, y):
    y = y.astype('float64')
    return (0.5 * math.sqrt(math.pi)) * xp.exp(y * y)


def _gamma_slope(xp, x, y):
    return y.astype('float64') * specfun.digamma(xp, x)


_special('erf', specfun.erf, _erf_slope, ('inputs',), 'The Gauss error function, elementwise.')
_special('erfinv', specfun.erfinv, _erfinv_slope, ('outputs',),
         'The inverse error function, elementwise (+-inf at +-1).')
_special('gamma', specfun.gamma, _gamma_slope, ('inputs', 'outputs'),
         'The gamma function, elementwise.')
_special('gammaln', specfun.gammaln, lambda xp, x, y: specfun.digamma(xp, x), ('inputs',),
         'The log of the absolute value of the gamma function, elementwise.')


@register
class HardSigmoid(Unary):
    """``clip(alpha * x + beta, 0, 1)``; the gradient is ``alpha`` where the clip is inactive."""
    op_name = 'hard_sigmoid'
    params = {'alpha': Param('float', 0.2), 'beta': Param('float', 0.5)}
    backward_uses = ('inputs',)

    def _linear(self, x):
        return x * x.dtype.type(self.p.alpha) + x.dtype.type(self.p.beta)

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        return [octx.xp.clip(self._linear(x), 0, 1).astype(x.dtype, copy=False)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        dy = out_grads[0]
        lin = self._linear(inputs[0])
        inside = (lin > 0) & (lin < 1)
        return [(dy * dy.dtype.type(self.p.alpha) * inside).astype(dy.dtype, copy=False)]


@register
class LogicalNot(Unary):
    """``1`` where the input is zero, else ``0``, in the input's dtype; the gradient is zero."""
    op_name = 'logical_not'
    backward_uses = ()

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        return [(x == 0).astype(x.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [octx.xp.zeros_like(out_grads[0])]
