"""Per-element forms of the operators a compiled elementwise group holds (elemwise_jit.py): each
operator's forward and gradients as expressions on one element, written so that float32 / float64
arithmetic gives what the operator's numpy code gives (the same operations in the same order;
numpy's ``x * 0.2`` multiplies by float32(0.2), a boolean mask multiplies as 1 or 0).

``rule(op)`` gives a ``Rule`` or None (the group then runs as numpy lines, elemwise_block.py). A
rule with ``vector`` set is computed between the compiled passes by the operator's own numpy
function (tanh, sigmoid, exp, ...: numpy's vectorised functions, whose values a loop calling the C
library would not reproduce bit for bit), and only its gradient is per element.

Expressions name their operands ``a0, a1, ...``, the member's value ``y`` and its output gradient
``g``; constants are ``ONE``, ``ZERO``, ``TWO`` (in the group's dtype) and those a rule adds to
``consts`` under names ending in the member's index."""
import numpy as np

from ..ops.elemwise import Binary, Unary
from ..ops.elemwise_scalar import ScalarOp
from ..ops.indexing_values import Clip, Where
from ..ops.math_special import HardSigmoid
from ..ops.nn import Activation, mkldnn_like


class Rule(object):
    """forward: expression (None for a vector rule); grads: [(operand index, expression)]."""
    __slots__ = ('forward', 'grads', 'vector')

    def __init__(self, forward, grads, vector=False):
        self.forward, self.grads, self.vector = forward, grads, vector


# ---- forms of numpy's functions -------------------------------------------------------------
_BINARY = {
    'add': ('a0 + a1', 'g', 'g'),
    'sub': ('a0 - a1', 'g', '-g'),
    'mul': ('a0 * a1', 'g * a1', 'g * a0'),
    'div': ('a0 / a1', 'g / a1', '-g * a0 / (a1 * a1)'),
    'maximum': ('MAX(a0, a1)', 'g * (ONE if a0 >= a1 else ZERO)', 'g * (ONE if a0 < a1 else ZERO)'),
    'minimum': ('MIN(a0, a1)', 'g * (ONE if a0 <= a1 else ZERO)', 'g * (ONE if a0 > a1 else ZERO)'),
}
_SCALAR = {
    # forward with S (the scalar in the dtype), gradient with R (the scalar as numpy's weak
    # Python float meets the dtype: the same value here)
    'plus': ('a0 + S', 'g'), 'minus': ('a0 - S', 'g'), 'rminus': ('S - a0', '-g'),
    'mul': ('a0 * S', 'g * S'), 'div': ('a0 / S', 'g / S'),
    'rdiv': ('S / a0', '-g * S / (a0 * a0)'),
    'maximum': ('MAX(a0, S)', 'g * (ONE if a0 >= S else ZERO)'),
    'minimum': ('MIN(a0, S)', 'g * (ONE if a0 <= S else ZERO)'),
}
_UNARY = {
    # forward (None: computed by numpy), gradient
    'negative': ('-a0', '-g'),
    '_copy': ('a0', 'g'),
    'square': ('a0 * a0', 'TWO * a0 * g'),
    'reciprocal': ('ONE / a0', '-g * y * y'),
    'tanh': (None, 'g * (ONE - y * y)'),
    'sigmoid': (None, 'g * y * (ONE - y)'),
    'exp': (None, 'g * y'),
    'log': (None, 'g / a0'),
    'sqrt': (None, 'g / (TWO * y)'),
    'relu': (None, 'g * SIGN(y)'),
}
_ACTIVATION = {'tanh': 'g * (ONE - y * y)', 'sigmoid': 'g * y * (ONE - y)'}


def rule(op, k, dtype, ndim, consts):
    """The Rule of ``op`` (member ``k`` of a group of ``dtype`` values with ``ndim`` axes), or
    None."""
    cls = type(op)
    if isinstance(op, Binary) and cls.forward is Binary.forward:
        key = op.op_name.split('_', 1)[-1]
        if key in _BINARY and op.propagates_grad:
            fwd, ga, gb = _BINARY[key]
            return Rule(fwd, [(0, ga), (1, gb)])
    if isinstance(op, ScalarOp) and cls.forward is ScalarOp.forward:
        key = op.op_name[1:-len('_scalar')]
        if key in _SCALAR and op.propagates_grad:
            fwd, grad = _SCALAR[key]
            consts['S%d' % k] = np.dtype(dtype).type(op.p.scalar)
            return Rule(fwd.replace('S', 'S%d' % k), [(0, grad.replace('S', 'S%d' % k))])
    if isinstance(op, Unary) and cls.forward is Unary.forward and op.op_name in _UNARY:
        fwd, grad = _UNARY[op.op_name]
        return Rule(fwd, [(0, grad)], vector=fwd is None)
    if isinstance(op, Clip):
        consts['LO%d' % k] = np.dtype(dtype).type(op.p.a_min)
        consts['HI%d' % k] = np.dtype(dtype).type(op.p.a_max)
        return Rule('MIN(MAX(a0, LO%d), HI%d)' % (k, k),
                    [(0, 'g * (ONE if a0 >= LO%d and a0 <= HI%d else ZERO)' % (k, k))])
    if isinstance(op, HardSigmoid):
        consts['A%d' % k] = np.dtype(dtype).type(op.p.alpha)
        consts['B%d' % k] = np.dtype(dtype).type(op.p.beta)
        lin = '(a0 * A%d + B%d)' % (k, k)
        return Rule('MIN(MAX(%s, ZERO), ONE)' % lin,
                    [(0, 'g * A%d * (ONE if %s > ZERO and %s < ONE else ZERO)' % (k, lin, lin))])
    if isinstance(op, Where):
        return Rule('a1 if a0 != 0 else a2',
                    [(1, 'g if a0 != 0 else ZERO'), (2, 'ZERO if a0 != 0 else g')])
    if isinstance(op, Activation):
        kind = op.p.act_type
        if kind in _ACTIVATION:
            return Rule(None, [(0, _ACTIVATION[kind])], vector=True)
        if kind == 'relu':
            grad = 'g * (ONE if y > ZERO else ZERO)' if _mkldnn(dtype, ndim) else 'g * SIGN(y)'
            return Rule(None, [(0, grad)], vector=True)
    return None


def _mkldnn(dtype, ndim):
    """Activation's relu gradient form for ``dtype`` and ``ndim`` (see nn.mkldnn_like)."""
    return mkldnn_like(np, np.empty((1,) * ndim, dtype))


def helpers():
    """Source of the per-element helper functions (numpy's maximum / minimum: NaN wins, the first
    operand on ties; sign: NaN stays NaN)."""
    return '''
@njit(inline='always')
def MAX(a, b):
    return a if (a >= b or a != a) else b


@njit(inline='always')
def MIN(a, b):
    return a if (a <= b or a != a) else b


@njit(inline='always')
def SIGN(a):
    if a > 0:
        return ONE
    if a < 0:
        return -ONE
    return a if a != a else ZERO
'''
