"""Differentiable backward steps, for ``autograd.grad(..., create_graph=True)``.

An ordinary backward pass runs each recorded node's numpy backward. With ``create_graph`` the
gradients must themselves be recorded, so that they can be differentiated again: each node's
backward is then computed with recorded NDArray operators instead.

* Elementwise operators (unary, with a scalar, binary and broadcasting), the activations and the
  reductions reuse their own gradient formulas, evaluated on NDArrays (``_NDMath`` gives them a
  numpy-like namespace of NDArray operators).
* Shape operators, dot / batch_dot / FullyConnected, softmax / log_softmax, add_n, Concat, Cast,
  clip, Dropout, the broadcasts and gradientmultiplier have rules written here.
* Indexing and copies (Python-level steps) scatter / copy back with recorded steps whose own
  backward is again indexing / copying, so any order works.
* Any other operator's backward runs as usual; its result is recorded as a step that refuses to be
  differentiated, with MXNet's message for a backward operator without FGradient.

Inputs and outputs a rule reads are NDArrays wrapping the node's saved arrays and carrying the
node's graph entries, so gradients flow back through the original graph."""
import numpy as np

from ..base import MXNetError
from ..ops.broadcasting import unbroadcast
from ..sparse_storage import SparseStorage
from . import tape
from .ndarray import NDArray, from_xp

__all__ = ['run_node', 'linear_step']

_RULES = {}


def rule(*names):
    """Register ``fn(op, ins, outs, dys, need)`` -> input gradients (NDArray or None each)."""
    def deco(fn):
        for name in names:
            _RULES[name] = fn
        return fn
    return deco


def _nd():
    from .. import ndarray as nd  # pylint: disable=import-outside-toplevel
    return nd


class _NDMath(object):
    """The numpy functions the operators' gradient formulas use, as recorded NDArray operators.
    A formula that needs anything else raises AttributeError (and the node is not
    differentiable twice)."""
    _SAME = ('exp', 'expm1', 'log', 'log1p', 'log2', 'log10', 'sqrt', 'cbrt', 'square', 'abs',
             'sign', 'sin', 'cos', 'tan', 'arcsin', 'arccos', 'arctan', 'sinh', 'cosh', 'tanh',
             'arcsinh', 'arccosh', 'arctanh', 'negative', 'reciprocal', 'floor', 'erf',
             'zeros_like', 'ones_like')

    def __init__(self):
        nd = _nd()
        for name in self._SAME:
            setattr(self, name, getattr(nd, name))
        self._nd = nd

    def power(self, a, b):
        return self._nd.power(a, b)

    def maximum(self, a, b):
        return self._nd.maximum(a, b)

    def minimum(self, a, b):
        return self._nd.minimum(a, b)

    def where(self, cond, a, b):
        like = next(v for v in (a, b, cond) if isinstance(v, NDArray))
        a, b = (v if isinstance(v, NDArray) else self._nd.full(like.shape, v, dtype=like.dtype)
                for v in (a, b))
        return self._nd.where(cond, a, b)


_MATH = []


def _math():
    if not _MATH:
        _MATH.append(_NDMath())
    return _MATH[0]


def _wrap(data, ctx, entry=None):
    arr = from_xp(data, ctx)
    if entry is not None:
        arr._ag = entry
    return arr


def _cast_like(grad, ref):
    return grad if grad is None or grad.dtype == ref.dtype else grad.astype(ref.dtype)


# ---- operators whose gradients are formulas over (xp, x, y, dy) --------------------------------
def _formula_rule(op):
    """A rule from the operator class's own gradient formula, or None."""
    from ..ops import elemwise, elemwise_scalar, reduce as reduce_ops, nn  # pylint: disable=import-outside-toplevel
    cls = type(op)
    if not op.propagates_grad:
        return lambda op, ins, outs, dys, need: [None] * len(ins)
    if isinstance(op, elemwise.Unary) and cls.backward is elemwise.Unary.backward:
        return lambda op, ins, outs, dys, need: [
            _cast_like(op.grad(_math(), ins[0], outs[0], dys[0]), dys[0])]
    if (isinstance(op, elemwise_scalar.ScalarOp)
            and cls.backward is elemwise_scalar.ScalarOp.backward):
        return lambda op, ins, outs, dys, need: [
            _cast_like(op.grad(_math(), ins[0], op.p.scalar, outs[0], dys[0]), dys[0])]
    if isinstance(op, elemwise.Binary) and cls.backward is elemwise.Binary.backward:
        def binary(op, ins, outs, dys, need):
            a, b = ins
            grads = [op.grad_a(_math(), a, b, outs[0], dys[0]) if need[0] else None,
                     op.grad_b(_math(), a, b, outs[0], dys[0]) if need[1] else None]
            if op.broadcast:
                grads = [None if g is None else unbroadcast(g, x.shape)
                         for g, x in zip(grads, ins)]
            return [_cast_like(g, dys[0]) for g in grads]
        return binary
    if isinstance(op, reduce_ops._Reduce) and cls.backward is reduce_ops._Reduce.backward and \
            op.op_name != 'mean':
        def reduction(op, ins, outs, dys, need):
            x = ins[0]
            shape = tuple(x.shape)
            axes = op._axes(len(shape))
            small = tuple(1 if i in axes else d for i, d in enumerate(shape))
            dy = dys[0].reshape(small)
            y = outs[0].reshape(small)
            grad = op.grad(_math(), x, y, dy, shape, axes)
            return [_cast_like(_nd().broadcast_to(grad, shape=shape), dys[0])]
        return reduction
    if isinstance(op, nn.Activation):
        return lambda op, ins, outs, dys, need: [
            _cast_like(op._grad(_math(), ins[0], outs[0], dys[0]), dys[0])]
    return None


# ---- rules ---------------------------------------------------------------------------------------
@rule('mean')
def _mean(op, ins, outs, dys, need):
    shape = tuple(ins[0].shape)
    axes = op._axes(len(shape))
    count = max(int(np.prod([shape[a] for a in axes], dtype=np.int64)), 1)
    small = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return [_nd().broadcast_to(dys[0].reshape(small) / count, shape=shape)]


@rule('erf')
def _erf(op, ins, outs, dys, need):
    x = ins[0]
    return [dys[0] * (_nd().exp(-(x * x)) * (2.0 / np.sqrt(np.pi)))]


@rule('erfinv')
def _erfinv(op, ins, outs, dys, need):
    y = outs[0]
    return [dys[0] * (_nd().exp(y * y) * (0.5 * np.sqrt(np.pi)))]


@rule('_contrib_quadratic')
def _quadratic(op, ins, outs, dys, need):
    return [dys[0] * (ins[0] * (2 * op.p.a) + op.p.b)]


@rule('LeakyReLU')
def _leaky_relu(op, ins, outs, dys, need):
    x, y, dy = ins[0], outs[0], dys[0]
    kind, math = op.p.act_type, _math()
    positive = x > 0
    if kind == 'leaky':
        return [dy * math.where(positive, 1.0, op.p.slope)]
    if kind == 'elu':
        return [dy * math.where(positive, 1.0, y + op.p.slope)]
    if kind == 'prelu':
        gamma = ins[1]
        from ..ops.nn import _gamma_view  # pylint: disable=import-outside-toplevel
        view = gamma.reshape(_gamma_view(np.empty(gamma.shape), x.ndim).shape)
        dx = dy * (positive + view * (1 - positive))
        dg = unbroadcast(dy * x * (1 - positive), view.shape).reshape(gamma.shape)
        return [dx if need[0] else None, dg if need[1] else None]
    raise AttributeError('LeakyReLU %s' % kind)


@rule('Reshape', 'Flatten', 'expand_dims', 'squeeze', 'reshape_like', '_contrib_gradientmultiplier')
def _reshaped(op, ins, outs, dys, need):
    dy = dys[0]
    if op.op_name == '_contrib_gradientmultiplier':
        dy = dy * op.p.scalar
    grads = [dy.reshape(ins[0].shape)]
    return grads + [None] * (len(ins) - 1)


@rule('_copy', 'identity', '_CrossDeviceCopy')
def _identity(op, ins, outs, dys, need):
    return [dys[0] + 0 if dys[0].context == ins[0].context else dys[0].copyto(ins[0].context)]


@rule('transpose')
def _transpose(op, ins, outs, dys, need):
    perm = op._perm(dys[0].ndim)
    return [_nd().transpose(dys[0], axes=tuple(int(a) for a in np.argsort(perm)))]


@rule('SwapAxis')
def _swapaxis(op, ins, outs, dys, need):
    return [_nd().swapaxes(dys[0], dim1=op.p.dim1, dim2=op.p.dim2)]


@rule('broadcast_to', 'broadcast_axis', 'broadcast_like')
def _broadcast(op, ins, outs, dys, need):
    grads = [unbroadcast(dys[0], ins[0].shape)]
    return grads + [None] * (len(ins) - 1)


@rule('add_n')
def _add_n(op, ins, outs, dys, need):
    return [dys[0] if n else None for n in need]


@rule('Cast', 'amp_cast')
def _cast(op, ins, outs, dys, need):
    return [dys[0].astype(ins[0].dtype)]


@rule('clip')
def _clip(op, ins, outs, dys, need):
    x = ins[0]
    inside = (x >= op.p.a_min) * (x <= op.p.a_max)
    return [dys[0] * inside]


@rule('Dropout')
def _dropout(op, ins, outs, dys, need):
    mask = from_xp(outs[1]._data, outs[1].context)     # a constant of the recorded call
    return [dys[0] * mask]


@rule('Concat')
def _concat(op, ins, outs, dys, need):
    from ..ops.shape import norm_axis  # pylint: disable=import-outside-toplevel
    axis = norm_axis('Concat', op.p.dim, dys[0].ndim, 'dim')
    grads, start = [], 0
    for x, wanted in zip(ins, need):
        stop = start + x.shape[axis]
        grads.append(_nd().slice_axis(dys[0], axis=axis, begin=start, end=stop) if wanted else None)
        start = stop
    return grads


@rule('softmax', 'log_softmax', 'softmin')
def _softmax(op, ins, outs, dys, need):
    if op.p.use_length or op.p.dtype is not None:
        raise AttributeError('softmax with use_length or dtype')
    axis = op.p.axis % ins[0].ndim
    y, dy = outs[0], dys[0]
    if op.log:
        dx = dy - _nd().exp(y) * dy.sum(axis=axis, keepdims=True)
    else:
        dx = y * (dy - (dy * y).sum(axis=axis, keepdims=True))
    if op.negate:
        dx = -dx
    if op._temp() != 1.0:
        dx = dx / op._temp()
    return [dx]


def _matrix_grads(a_op, lhs_m, rhs_m, dy, ta, tb):
    """Gradients of ``a_op(lhs_m, rhs_m, transpose_a=ta, transpose_b=tb)`` (dot or batch_dot)
    given its output gradient, as the same operator with other flags."""
    da = a_op(rhs_m, dy, transpose_a=tb, transpose_b=True) if ta else \
        a_op(dy, rhs_m, transpose_b=not tb)
    db = a_op(dy, lhs_m, transpose_a=True, transpose_b=ta) if tb else \
        a_op(lhs_m, dy, transpose_a=not ta)
    return da, db


@rule('dot')
def _dot(op, ins, outs, dys, need):
    lhs, rhs = ins
    lview, rview, _ = op._views(lhs.shape, rhs.shape)
    size = lambda dims: int(np.prod(dims, dtype=np.int64))  # noqa: E731
    a = lhs.reshape((size(lview[0]), size(lview[1])))
    b = rhs.reshape((size(rview[0]), size(rview[1])))
    ta, tb = op.p.transpose_a, op.p.transpose_b
    rows = a.shape[1] if ta else a.shape[0]
    cols = b.shape[0] if tb else b.shape[1]
    da, db = _matrix_grads(_nd().dot, a, b, dys[0].reshape((rows, cols)), ta, tb)
    return [da.reshape(lhs.shape) if need[0] else None, db.reshape(rhs.shape) if need[1] else None]


@rule('batch_dot')
def _batch_dot(op, ins, outs, dys, need):
    lhs, rhs = ins
    da, db = _matrix_grads(_nd().batch_dot, lhs, rhs, dys[0], op.p.transpose_a,
                           op.p.transpose_b)
    return [da if need[0] else None, db if need[1] else None]


@rule('FullyConnected')
def _fully_connected(op, ins, outs, dys, need):
    nd = _nd()
    x, w = ins[0], ins[1]
    flat = x.reshape((x.shape[0], -1)) if op.p.flatten else x.reshape((-1, x.shape[-1]))
    dy = dys[0].reshape((-1, w.shape[0]))
    grads = [nd.dot(dy, w).reshape(x.shape) if need[0] else None,
             nd.dot(dy, flat, transpose_a=True) if need[1] else None]
    if not op.p.no_bias:
        grads.append(dy.sum(axis=0).reshape(ins[2].shape) if need[2] else None)
    return grads


# ---- Python-level linear steps (indexing, copies) --------------------------------------------------
def linear_step(source, result_xp, ctx, adjoint):
    """Record ``result = L(source)`` for a linear map L computed as ``result_xp`` (an xp array),
    whose adjoint ``adjoint(g)`` (NDArray in, NDArray out, recorded) gives its gradient; returns
    the result NDArray."""
    result = from_xp(result_xp, ctx)

    def backward(out_grads, need):
        del need
        with tape_paused():
            return [adjoint(from_xp(out_grads[0], ctx))._data]

    tape.record_function(backward, [source], [result], graph_backward=lambda dys: [adjoint(dys[0])])
    return result


class tape_paused(object):  # pylint: disable=invalid-name
    """Recording off inside (a plain backward computing an adjoint)."""

    def __enter__(self):
        self._prev = tape.set_recording(False)

    def __exit__(self, *exc):
        tape.set_recording(self._prev)


# ---- driver ----------------------------------------------------------------------------------------
def _refusing_step(name, sources, results):
    """Record ``results`` as computed from ``sources`` by a backward without a gradient."""
    def refuse(out_grads, need):
        raise MXNetError("Operator _backward_%s is non-differentiable because it didn't register "
                         "FGradient attribute." % name)
    outs = [r for r in results if r is not None]
    if outs:
        tape.record_function(refuse, sources, outs)


def run_node(node, out_grads, need):
    """Input gradients (NDArrays or None) of a recorded node given its output gradients
    (NDArrays), computed with recorded operators."""
    if node.kind == 'function':
        if node.graph_backward is not None:
            return node.graph_backward(out_grads)
        # an autograd.Function: its gradient is no recorded computation; stand-ins carry the
        # inputs' graph entries so that differentiating it again reaches the refusal
        stand_ins = [_wrap(node.xp.zeros(()), node.ctx, e) for e in node.inputs]
        return _opaque(node, stand_ins, out_grads, need, 'CustomFunction')
    op = node.op
    ctx = node.ctx
    ins = [_wrap(d, ctx, e) for d, e in zip(node.in_data, node.inputs)]
    dense = not any(isinstance(v, SparseStorage)
                    for v in list(node.in_data) + list(node.out_data) + list(node.aux_data))
    fn = _RULES.get(op.op_name) if dense else None
    if fn is None and dense:
        fn = _formula_rule(op)
    if fn is not None:
        outs = [_wrap(d, ctx, (node, i)) for i, d in enumerate(node.out_data)]
        try:
            grads = fn(op, ins, outs, out_grads, need)
        except AttributeError:
            grads = None            # a formula outside what _NDMath offers
        if grads is not None:
            return [_in_graph(g, ins) if n else None for g, n in zip(grads, need)]
    return _opaque(node, ins, out_grads, need, op.op_name)


def _zero_backward(out_grads, need):
    del out_grads
    return [None] * len(need)


def _in_graph(grad, ins):
    """``grad``, tied to the node's inputs when it does not depend on them (a constant
    derivative): as in MXNet it is then still a recorded result, whose gradient is zero."""
    if grad is None or tape.in_graph(grad):
        return grad
    tied = from_xp(grad._data, grad.context)
    tape.record_function(_zero_backward, ins, [tied])
    return tied


def _opaque(node, ins, out_grads, need, name):
    values = node.run_backward([g._data for g in out_grads], need)
    results = [None if v is None else from_xp(v, node.ctx) for v in values]
    _refusing_step(name, list(ins) + list(out_grads), results)
    return results
