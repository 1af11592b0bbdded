"""Import conversions of ONNX's tensor operators: arithmetic with numpy broadcasting, unary
maths, reductions, softmax, and the shape, slicing and gathering operators."""
import numpy as np

from .base import imports, numpy_dtype
from .onnx2mx_nn import unsupported


def leading_axes(imp, sym, count):
    """``sym`` with ``count`` new size-1 leading axes."""
    for _ in range(count):
        sym = imp.sym.expand_dims(sym, axis=0)
    return sym


def _aligned(imp, node, names):
    """Symbols of ``names`` reshaped (leading size-1 axes) to one rank, for MXNet's broadcasts."""
    ranks = [imp.rank(n, node) for n in names]
    top = max(ranks)
    out = []
    for name, rank in zip(names, ranks):
        if rank < top and imp.is_const(name):
            value = imp.const(name)
            out.append(imp.parameter(value.reshape((1,) * (top - rank) + value.shape), name))
            continue
        sym = imp.symbol(name)
        out.append(leading_axes(imp, sym, top - rank))
    return out


def _scalar_of(imp, name):
    """The Python scalar of a known single-element tensor, else None."""
    if imp.is_const(name) and imp.const(name).size == 1:
        return imp.const(name).reshape(-1)[0].item()
    return None


_BINARY = {'Add': 'broadcast_add', 'Sub': 'broadcast_sub', 'Mul': 'broadcast_mul',
           'Div': 'broadcast_div', 'Pow': 'broadcast_power', 'Equal': 'broadcast_equal',
           'Greater': 'broadcast_greater', 'Less': 'broadcast_lesser',
           'GreaterOrEqual': 'broadcast_greater_equal', 'LessOrEqual': 'broadcast_lesser_equal',
           'And': 'broadcast_logical_and', 'Or': 'broadcast_logical_or',
           'Xor': 'broadcast_logical_xor'}
_SCALAR = {'Add': lambda x, s: x + s, 'Sub': lambda x, s: x - s, 'Mul': lambda x, s: x * s,
           'Div': lambda x, s: x / s, 'Pow': lambda x, s: x ** s}


@imports(*_BINARY)
def binary(imp, node):
    """broadcast_* operators (a known scalar right side becomes a scalar operator)."""
    scalar = _scalar_of(imp, node.inputs[1])
    if scalar is not None and node.op_type in _SCALAR and imp.shape(node.inputs[1]) in ((), (1,)):
        rank = imp.rank(node.inputs[0], node)
        if rank >= 1:
            return _SCALAR[node.op_type](imp.symbol(node.inputs[0]), scalar)
    a, b = _aligned(imp, node, node.inputs[:2])
    return getattr(imp.sym, _BINARY[node.op_type])(a, b, name=imp.node_name(node))


@imports('Max', 'Min', 'Sum', 'Mean')
def variadic(imp, node):
    """Elementwise max/min/sum/mean of several inputs (broadcast)."""
    fn = {'Max': imp.sym.broadcast_maximum, 'Min': imp.sym.broadcast_minimum}.get(
        node.op_type, imp.sym.broadcast_add)
    parts = _aligned(imp, node, node.inputs)
    out = parts[0]
    for part in parts[1:]:
        out = fn(out, part)
    if node.op_type == 'Mean':
        out = out / float(len(parts))
    return imp.sym.identity(out, name=imp.node_name(node))


@imports('Mod')
def mod(imp, node):
    """broadcast_mod (Python's sign rule; fmod=1 on floats is C's)."""
    a, b = _aligned(imp, node, node.inputs[:2])
    if node.attr('fmod', 0):
        # C fmod: a - trunc(a / b) * b
        return imp.sym.broadcast_sub(a, imp.sym.broadcast_mul(imp.sym.trunc(
            imp.sym.broadcast_div(a, b)), b), name=imp.node_name(node))
    return imp.sym.broadcast_mod(a, b, name=imp.node_name(node))


@imports('IsNaN')
def is_nan(imp, node):
    """x != x."""
    x = imp.symbol(node.inputs[0])
    return imp.sym.broadcast_not_equal(x, x, name=imp.node_name(node))


@imports('Not')
def logical_not(imp, node):
    """x == 0."""
    return imp.sym.identity(imp.symbol(node.inputs[0]) == 0, name=imp.node_name(node))


_UNARY = {'Abs': 'abs', 'Neg': 'negative', 'Exp': 'exp', 'Log': 'log', 'Sqrt': 'sqrt',
          'Reciprocal': 'reciprocal', 'Floor': 'floor', 'Ceil': 'ceil', 'Round': 'rint',
          'Sign': 'sign', 'Sin': 'sin', 'Cos': 'cos', 'Tan': 'tan', 'Asin': 'arcsin',
          'Acos': 'arccos', 'Atan': 'arctan', 'Sinh': 'sinh', 'Cosh': 'cosh', 'Asinh': 'arcsinh',
          'Acosh': 'arccosh', 'Atanh': 'arctanh', 'Erf': 'erf'}


@imports(*_UNARY)
def unary(imp, node):
    """The elementwise maths functions."""
    fn = getattr(imp.sym, _UNARY[node.op_type], None)
    if fn is None:
        raise unsupported(node, 'mxmod has no %s operator' % _UNARY[node.op_type])
    return fn(imp.symbol(node.inputs[0]), name=imp.node_name(node))


@imports('Clip')
def clip(imp, node):
    """clip with known bounds (missing: unbounded)."""
    if len(node.inputs) > 1:
        low = _scalar_of(imp, node.inputs[1]) if node.inputs[1] else None
        high = _scalar_of(imp, node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] \
            else None
    else:
        low, high = node.attr('min'), node.attr('max')
    low = -3.4e38 if low is None else low
    high = 3.4e38 if high is None else high
    return imp.sym.clip(imp.symbol(node.inputs[0]), a_min=low, a_max=high,
                        name=imp.node_name(node))


@imports('Cast')
def cast(imp, node):
    """Cast; a cast to bool is ``x != 0`` in the input's type (MXNet has no bool tensors)."""
    dtype = numpy_dtype(node.attr('to'))
    if dtype == np.bool_:
        return imp.sym.identity(imp.symbol(node.inputs[0]) != 0, name=imp.node_name(node))
    return imp.sym.Cast(imp.symbol(node.inputs[0]), dtype=dtype.name, name=imp.node_name(node))


@imports('Where')
def where(imp, node):
    """where, with the three operands broadcast to one shape."""
    parts = _aligned(imp, node, node.inputs[:3])
    shape = imp.shape(node.outputs[0])
    if shape is not None and all(d is not None for d in shape):
        cond, x, y = [imp.sym.broadcast_to(p, shape=tuple(shape)) for p in parts]
    else:
        zeros = [imp.sym.zeros_like(p) for p in parts]
        target = imp.sym.broadcast_add(imp.sym.broadcast_add(zeros[0], zeros[1]), zeros[2])
        cond, x, y = [imp.sym.broadcast_like(p, target) for p in parts]
    return imp.sym.where(cond, x, y, name=imp.node_name(node))


# ---- softmax and reductions --------------------------------------------------------------------
@imports('Softmax', 'LogSoftmax')
def softmax(imp, node):
    """softmax / log_softmax along axis (before opset 13: over the flattened trailing axes)."""
    fn = imp.sym.softmax if node.op_type == 'Softmax' else imp.sym.log_softmax
    x = imp.symbol(node.inputs[0])
    rank = imp.rank(node.inputs[0], node)
    if imp.opset >= 13:
        return fn(x, axis=node.attr('axis', -1), name=imp.node_name(node))
    axis = node.attr('axis', 1) % rank
    if axis == rank - 1:
        return fn(x, axis=-1, name=imp.node_name(node))
    flat = imp.sym.Reshape(x, shape=(0,) * axis + (-1,))
    return imp.sym.reshape_like(fn(flat, axis=-1), x, name=imp.node_name(node))


_REDUCE = {'ReduceSum': 'sum', 'ReduceMean': 'mean', 'ReduceMax': 'max', 'ReduceMin': 'min',
           'ReduceProd': 'prod', 'ReduceL1': 'norm', 'ReduceL2': 'norm',
           'ReduceSumSquare': 'sum'}


def _axes(imp, node):
    """Axes from the attribute or (newer opsets) the second input; None means all."""
    if len(node.inputs) > 1 and node.inputs[1]:
        return [int(a) for a in imp.const(node.inputs[1], node, 'axes')]
    axes = node.attr('axes')
    return None if axes is None else list(axes)


@imports(*_REDUCE)
def reduce_op(imp, node):
    """sum/mean/max/min/prod/norm over the axes (every axis when none are given)."""
    axes = _axes(imp, node)
    x = imp.symbol(node.inputs[0])
    if not axes:
        if node.attr('noop_with_empty_axes', 0):
            return imp.sym.identity(x, name=imp.node_name(node))
        axes = list(range(imp.rank(node.inputs[0], node)))
    keep = bool(node.attr('keepdims', 1))
    if node.op_type == 'ReduceSumSquare':
        x = imp.sym.square(x)
    extra = {'ord': 1 if node.op_type == 'ReduceL1' else 2} if node.op_type in (
        'ReduceL1', 'ReduceL2') else {}
    fn = getattr(imp.sym, _REDUCE[node.op_type])
    return fn(x, axis=tuple(axes), keepdims=keep, name=imp.node_name(node), **extra)


@imports('ArgMax', 'ArgMin')
def arg_search(imp, node):
    """argmax/argmin, cast to int64 as ONNX returns."""
    if node.attr('select_last_index', 0):
        raise unsupported(node, 'select_last_index=1')
    fn = imp.sym.argmax if node.op_type == 'ArgMax' else imp.sym.argmin
    idx = fn(imp.symbol(node.inputs[0]), axis=node.attr('axis', 0),
             keepdims=bool(node.attr('keepdims', 1)))
    return imp.sym.Cast(idx, dtype='int64', name=imp.node_name(node))


@imports('TopK')
def topk(imp, node):
    """topk returning values and int64 indices."""
    k = int(imp.const(node.inputs[1], node, 'k').reshape(-1)[0])
    values, indices = imp.sym.topk(imp.symbol(node.inputs[0]), axis=node.attr('axis', -1), k=k,
                                   ret_typ='both', is_ascend=not node.attr('largest', 1),
                                   dtype='int64', name=imp.node_name(node))
    return [values, indices]
