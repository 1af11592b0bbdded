"""The elementwise operators a fused elementwise group may hold (elemwise_block.py), and how each
one's forward and backward is written out: as a call of the same functions the operator itself
calls, so that the values are bit for bit those of the separate step.

``kind_of(op)`` gives the kind of an operator instance, or None for one that cannot be fused. A
kind writes expressions in the names of the generated function: ``OP<k>`` is member k's operator,
``CTX<k>`` an OpContext of its own, ``np`` numpy; it adds the constants it needs to ``consts``.
``backward_exprs`` gives (lines to run first, [(input position, gradient expression)])."""
import numpy as np

from ..ops.elemwise import Binary, Unary
from ..ops.elemwise_scalar import ScalarOp
from ..ops.indexing_values import Clip, Where
from ..ops.math_special import HardSigmoid
from ..ops.nn import Activation

_BINARY_KEYS = ('add', 'sub', 'mul', 'div', 'maximum', 'minimum')
_SCALAR_KEYS = ('plus', 'minus', 'rminus', 'mul', 'div', 'rdiv', 'maximum', 'minimum')
_UNARY = ('relu', 'sigmoid', 'tanh', 'softsign', 'exp', 'log', 'sqrt', 'square', 'abs',
          'negative', 'reciprocal', '_copy', 'expm1', 'log1p')


class _Kind(object):
    """Forward and backward of one family of operators written as expressions."""

    @staticmethod
    def reads_inputs(op):
        return 'inputs' in op.backward_uses

    @staticmethod
    def reads_output(op):
        return 'outputs' in op.backward_uses

    @staticmethod
    def broadcasts(op):  # pylint: disable=unused-argument
        return False


class _BinaryKind(_Kind):
    """elemwise_* and broadcast_* of add, sub, mul, div, maximum, minimum: ``fn`` forward,
    ``grad_a`` / ``grad_b`` backward, broadcast gradients summed back (``UB``)."""

    @staticmethod
    def broadcasts(op):
        return op.broadcast

    @staticmethod
    def forward_expr(op, k, args, dtype, consts):
        consts['F%d' % k] = op.fn
        return 'F%d(np, %s, %s)' % (k, args[0], args[1])

    @staticmethod
    def backward_exprs(op, k, values, out, grad, consts):
        consts['GA%d' % k], consts['GB%d' % k] = op.grad_a, op.grad_b
        call = '(np, %s, %s, %s, %s)' % (values[0], values[1], out, grad)
        return [], [(0, 'GA%d%s' % (k, call)), (1, 'GB%d%s' % (k, call))]


class _ScalarKind(_Kind):
    """_plus_scalar, _rminus_scalar, _mul_scalar, ...: the scalar in the array's dtype forward,
    as given backward (as ScalarOp does)."""

    @staticmethod
    def forward_expr(op, k, args, dtype, consts):
        consts['F%d' % k] = op.fn
        consts['S%d' % k] = np.dtype(dtype).type(op.p.scalar)
        return 'F%d(np, %s, S%d)' % (k, args[0], k)

    @staticmethod
    def backward_exprs(op, k, values, out, grad, consts):
        consts['G%d' % k] = op.grad
        consts['R%d' % k] = op.p.scalar
        return [], [(0, 'G%d(np, %s, R%d, %s, %s)' % (k, values[0], k, out, grad))]


class _UnaryKind(_Kind):
    """Unary math (tanh, sigmoid, relu, exp, ...): ``fn`` forward, ``grad`` backward."""

    @staticmethod
    def forward_expr(op, k, args, dtype, consts):
        consts['F%d' % k] = op.fn
        return 'F%d(np, %s)' % (k, args[0])

    @staticmethod
    def backward_exprs(op, k, values, out, grad, consts):
        consts['G%d' % k] = op.grad
        return [], [(0, 'G%d(np, %s, %s, %s)' % (k, values[0], out, grad))]


class _MethodKind(_Kind):
    """Operators run through their own ``forward`` / ``backward`` (clip, where, Activation,
    hard_sigmoid): a call more than the arithmetic, the same values."""

    @staticmethod
    def forward_expr(op, k, args, dtype, consts):
        return 'OP%d.forward(CTX%d, [%s], [])[0]' % (k, k, ', '.join(args))

    @staticmethod
    def backward_exprs(op, k, values, out, grad, consts):
        call = 'OP%d.backward(CTX%d, [%s], [%s], [%s], [])' % (k, k, grad, ', '.join(values), out)
        n = len(values)
        if n == 1:
            return [], [(0, call + '[0]')]
        return ['r = ' + call], [(i, 'r[%d]' % i) for i in range(n) if _differentiable(op, i)]


def _differentiable(op, i):
    """Whether input ``i`` of ``op`` gets a gradient (where's condition does not)."""
    return not (isinstance(op, Where) and i == 0)


BINARY, SCALAR, UNARY, METHOD = _BinaryKind(), _ScalarKind(), _UnaryKind(), _MethodKind()


def kind_of(op):
    """The kind of ``op`` (an operator instance), or None when it cannot be fused."""
    cls = type(op)
    if isinstance(op, Binary) and cls.forward is Binary.forward and \
            cls.backward is Binary.backward and op.propagates_grad and \
            op.op_name.split('_', 1)[-1] in _BINARY_KEYS:
        return BINARY
    if isinstance(op, ScalarOp) and cls.forward is ScalarOp.forward and \
            cls.backward is ScalarOp.backward and op.propagates_grad and \
            op.op_name[1:-len('_scalar')] in _SCALAR_KEYS:
        return SCALAR
    if isinstance(op, Unary) and cls.forward is Unary.forward and \
            cls.backward is Unary.backward and op.op_name in _UNARY:
        return UNARY
    if isinstance(op, (Clip, Where, HardSigmoid)) or \
            (isinstance(op, Activation) and op.p.act_type in ('relu', 'sigmoid', 'tanh',
                                                              'softrelu', 'softsign')):
        return METHOD
    return None
