"""Export conversions of the arithmetic: elementwise, broadcast and scalar binary operators,
unary maths, reductions, argmax/argmin, sorting and the matrix products."""
import math

import numpy as np

from ..base import MXNetError
from .base import exports, onnx_dtype

_BOOL = np.dtype(np.bool_)

# binary operators: MXNet root name -> ONNX op (plus the MXNet spellings of each)
_ARITH = {'add': 'Add', 'sub': 'Sub', 'mul': 'Mul', 'div': 'Div', 'power': 'Pow',
          'maximum': 'Max', 'minimum': 'Min'}
_COMPARE = {'equal': ('Equal', False), 'not_equal': ('Equal', True),
            'greater': ('Greater', False), 'greater_equal': ('GreaterOrEqual', False),
            'lesser': ('Less', False), 'lesser_equal': ('LessOrEqual', False)}
_LOGICAL = {'logical_and': 'And', 'logical_or': 'Or', 'logical_xor': 'Xor'}
_SPELLINGS = {
    'add': ('elemwise_add', '_plus', '_add', '_Plus', 'broadcast_add', 'broadcast_plus'),
    'sub': ('elemwise_sub', '_minus', '_sub', '_Minus', 'broadcast_sub', 'broadcast_minus'),
    'mul': ('elemwise_mul', '_mul', '_Mul', 'broadcast_mul'),
    'div': ('elemwise_div', '_div', '_Div', 'broadcast_div'),
    'power': ('_power', '_pow', '_Power', 'broadcast_power'),
    'maximum': ('_maximum', '_Maximum', 'broadcast_maximum'),
    'minimum': ('_minimum', '_Minimum', 'broadcast_minimum'),
    'mod': ('_mod', '_Mod', 'broadcast_mod'), 'hypot': ('_hypot', '_Hypot', 'broadcast_hypot'),
}
for _name in list(_COMPARE) + list(_LOGICAL):
    _SPELLINGS[_name] = ('_' + _name, 'broadcast_' + _name)


def _unsupported(node, what):
    return MXNetError('mx.onnx: cannot export %s %r: %s' % (node.op_name, node.name, what))


def binary(g, kind, a, b, dtype, out, name):
    """``a <kind> b`` (MXNet semantics) for tensors of ``dtype``; returns the output name."""
    if kind in _ARITH:
        return g.add(_ARITH[kind], [a, b], outputs=[out], name=name)
    if kind == 'mod':
        if dtype.kind in 'iu':
            return g.add('Mod', [a, b], outputs=[out], name=name, fmod=0)
        floor = g.add('Floor', [g.add('Div', [a, b], name=name + '_q')])
        return g.add('Sub', [a, g.add('Mul', [floor, b])], outputs=[out], name=name)
    if kind == 'hypot':
        squares = g.add('Add', [g.add('Mul', [a, a]), g.add('Mul', [b, b])])
        return g.add('Sqrt', [squares], outputs=[out], name=name)
    if kind in _COMPARE:
        op_type, negate = _COMPARE[kind]
        test = g.add(op_type, [a, b], name=name + '_test', dtype=_BOOL)
        if negate:
            test = g.add('Not', [test], name=name + '_not', dtype=_BOOL)
        return g.add('Cast', [test], outputs=[out], name=name, to=onnx_dtype(dtype))
    bools = [g.add('Cast', [v], to=onnx_dtype(_BOOL), dtype=_BOOL) for v in (a, b)]
    test = g.add(_LOGICAL[kind], bools, name=name + '_test', dtype=_BOOL)
    return g.add('Cast', [test], outputs=[out], name=name, to=onnx_dtype(dtype))


def _binary_exporter(kind):
    def convert(g, node):
        return [binary(g, kind, node.inputs[0], node.inputs[1], node.out_dtypes[0], node.out(),
                       node.name)]
    convert.__doc__ = 'Elementwise/broadcast %s.' % kind
    return convert


def _scalar_exporter(kind, reverse):
    def convert(g, node):
        scalar = g.scalar(node.p.scalar, node.in_dtypes[0], 'scalar')
        a, b = (scalar, node.inputs[0]) if reverse else (node.inputs[0], scalar)
        return [binary(g, kind, a, b, node.out_dtypes[0], node.out(), node.name)]
    convert.__doc__ = '%s with a scalar%s.' % (kind, ' (scalar on the left)' if reverse else '')
    return convert


def _register_binary():
    for kind, names in _SPELLINGS.items():
        exports(*names)(_binary_exporter(kind))
        scalar_root = {'add': 'plus', 'sub': 'minus'}.get(kind, kind)
        exports('_%s_scalar' % scalar_root)(_scalar_exporter(kind, False))
    reversed_ops = {'_rminus_scalar': 'sub', '_rdiv_scalar': 'div', '_rpower_scalar': 'power',
                    '_rmod_scalar': 'mod'}
    for name, kind in reversed_ops.items():
        exports(name)(_scalar_exporter(kind, True))


_register_binary()


@exports('add_n')
def add_n(g, node):
    """Sum of all inputs."""
    return [g.add('Sum', node.inputs, outputs=[node.out()], name=node.name)]


# ---- unary ------------------------------------------------------------------------------------
_UNARY = {'abs': 'Abs', 'ceil': 'Ceil', 'floor': 'Floor', 'exp': 'Exp', 'log': 'Log',
          'sqrt': 'Sqrt', 'negative': 'Neg', 'reciprocal': 'Reciprocal', 'sign': 'Sign',
          'sin': 'Sin', 'cos': 'Cos', 'tan': 'Tan', 'arcsin': 'Asin', 'arccos': 'Acos',
          'arctan': 'Atan', 'sinh': 'Sinh', 'cosh': 'Cosh', 'tanh': 'Tanh', 'arcsinh': 'Asinh',
          'arccosh': 'Acosh', 'arctanh': 'Atanh', 'sigmoid': 'Sigmoid', 'relu': 'Relu',
          'softsign': 'Softsign', 'erf': 'Erf', 'round': 'Round', 'rint': 'Round'}


def _unary_exporter(op_type):
    def convert(g, node):
        return [g.add(op_type, [node.inputs[0]], outputs=[node.out()], name=node.name)]
    convert.__doc__ = 'ONNX %s.' % op_type
    return convert


for _name, _op_type in _UNARY.items():
    exports(_name)(_unary_exporter(_op_type))


def _chain(g, node, x, steps):
    """Apply ``steps`` [(op_type, scalar or None, scalar_first)] in turn; the last one is named
    as the node's output."""
    dtype = node.in_dtypes[0]
    for k, (op_type, scalar, first) in enumerate(steps):
        inputs = [x]
        if scalar is not None:
            const = g.scalar(scalar, dtype)
            inputs = [const, x] if first else [x, const]
        last = k == len(steps) - 1
        x = g.add(op_type, inputs, outputs=[node.out()] if last else 1, name=node.name)
    return [x]


_COMPOSED = {
    'square': lambda g, n, x: _chain(g, n, x, [('Pow', 2.0, False)]),
    'rsqrt': lambda g, n, x: _chain(g, n, x, [('Sqrt', None, False), ('Reciprocal', None, False)]),
    'log1p': lambda g, n, x: _chain(g, n, x, [('Add', 1.0, False), ('Log', None, False)]),
    'expm1': lambda g, n, x: _chain(g, n, x, [('Exp', None, False), ('Sub', 1.0, False)]),
    'log2': lambda g, n, x: _chain(g, n, x, [('Log', None, False), ('Div', math.log(2), False)]),
    'log10': lambda g, n, x: _chain(g, n, x, [('Log', None, False),
                                              ('Div', math.log(10), False)]),
    'degrees': lambda g, n, x: _chain(g, n, x, [('Mul', 180 / math.pi, False)]),
    'radians': lambda g, n, x: _chain(g, n, x, [('Mul', math.pi / 180, False)]),
}


def _trunc(g, node, x):
    mag = g.add('Floor', [g.add('Abs', [x])])
    return [g.add('Mul', [g.add('Sign', [x]), mag], outputs=[node.out()], name=node.name)]


def _cbrt(g, node, x, inverse=False):
    power = g.scalar(-1 / 3.0 if inverse else 1 / 3.0, node.in_dtypes[0])
    mag = g.add('Pow', [g.add('Abs', [x]), power])
    return [g.add('Mul', [g.add('Sign', [x]), mag], outputs=[node.out()], name=node.name)]


_COMPOSED.update({'trunc': _trunc, 'fix': _trunc, 'cbrt': _cbrt,
                  'rcbrt': lambda g, n, x: _cbrt(g, n, x, True)})


def _composed_exporter(build):
    def convert(g, node):
        return build(g, node, node.inputs[0])
    return convert


for _name, _build in _COMPOSED.items():
    exports(_name)(_composed_exporter(_build))


# ---- reductions -------------------------------------------------------------------------------
_REDUCE = {'sum': 'ReduceSum', 'mean': 'ReduceMean', 'max': 'ReduceMax', 'min': 'ReduceMin',
           'prod': 'ReduceProd', 'nansum': 'ReduceSum', 'nanprod': 'ReduceProd',
           '_square_sum': 'ReduceSumSquare'}


def finish_reduce(g, node, y):
    """MXNet gives shape (1,) where ONNX reduced to a scalar."""
    if len(node.out_shapes[0]) == 1 and node.out_shapes[0][0] == 1 and \
            not node.p.keepdims and len(node.in_shapes[0]) > 0:
        reduced_all = len(node.op._axes(len(node.in_shapes[0]))) == len(node.in_shapes[0])  # pylint: disable=protected-access
        if reduced_all:
            return g.add('Reshape', [y, g.ints([1])], outputs=[node.out()], name=node.name)
    return g.add('Identity', [y], outputs=[node.out()], name=node.name)


@exports(*_REDUCE)
def reduction(g, node):
    """Reduce* over MXNet's axes (exclude honoured); nansum/nanprod skip NaNs."""
    x, dtype = node.inputs[0], node.in_dtypes[0]
    if node.op_name in ('nansum', 'nanprod'):
        fill = g.scalar(0 if node.op_name == 'nansum' else 1, dtype)
        x = g.add('Where', [g.add('IsNaN', [x]), fill, x], name=node.name + '_nonan')
    axes = list(node.op._axes(len(node.in_shapes[0])))  # pylint: disable=protected-access
    y = g.reduce(_REDUCE[node.op_name], x, axes, node.p.keepdims, name=node.name + '_reduce')
    return [finish_reduce(g, node, y)]


@exports('norm')
def norm(g, node):
    """ReduceL1 / ReduceL2, cast to out_dtype."""
    axes = list(node.op._axes(len(node.in_shapes[0])))  # pylint: disable=protected-access
    op_type = 'ReduceL1' if node.p.ord == 1 else 'ReduceL2'
    y = g.reduce(op_type, node.inputs[0], axes, node.p.keepdims, name=node.name + '_reduce')
    if node.out_dtypes[0] != node.in_dtypes[0]:
        y = g.add('Cast', [y], name=node.name + '_cast', to=onnx_dtype(node.out_dtypes[0]))
    return [finish_reduce(g, node, y)]


@exports('argmax', 'argmin', 'argmax_channel')
def arg_search(g, node):
    """ArgMax/ArgMin, returned in the input's dtype as MXNet does."""
    x, ndim = node.inputs[0], len(node.in_shapes[0])
    op_type = 'ArgMin' if node.op_name == 'argmin' else 'ArgMax'
    axis = -1 if node.op_name == 'argmax_channel' else node.p.axis
    keep = 0 if node.op_name == 'argmax_channel' else int(node.p.keepdims)
    if axis is None or ndim == 1:
        flat = g.add('Reshape', [x, g.ints([-1])], name=node.name + '_flat')
        idx = g.add(op_type, [flat], name=node.name + '_index', axis=0, keepdims=1)
        if keep and ndim > 1:
            idx = g.add('Reshape', [idx, g.ints([1] * ndim)], name=node.name + '_index')
    else:
        idx = g.add(op_type, [x], name=node.name + '_index', axis=axis % ndim, keepdims=keep)
    return [g.add('Cast', [idx], outputs=[node.out()], name=node.name,
                  to=onnx_dtype(node.out_dtypes[0]))]


def _top_k(g, node, x, axis, k, largest, outputs):
    ndim = len(node.in_shapes[0])
    if axis is None:
        x = g.add('Reshape', [x, g.ints([-1])], name=node.name + '_flat')
        axis, ndim = 0, 1
    axis %= ndim
    if k is None:
        if node.in_dynamic[0][axis] and node.p.axis is not None:
            size = g.add('Gather', [g.shape_of(x), g.ints([axis])], axis=0)
        else:
            size = g.ints([int(np.prod(node.in_shapes[0])) if node.p.axis is None
                           else node.in_shapes[0][axis]])
    else:
        size = g.ints([k])
    return g.add('TopK', [x, size], outputs=outputs, name=node.name, axis=axis,
                 largest=int(largest), sorted=1)


@exports('topk')
def topk(g, node):
    """TopK: values, indices (as dtype) or both."""
    kind = node.p.ret_typ
    if kind == 'mask':
        raise _unsupported(node, "ret_typ='mask'")
    k = node.p.k if node.p.k > 0 else None
    values, indices = g.fresh(node.name + '_values'), g.fresh(node.name + '_indices')
    _top_k(g, node, node.inputs[0], node.p.axis, k, not node.p.is_ascend, [values, indices])
    if kind == 'value':
        return [g.add('Identity', [values], outputs=[node.out()], name=node.name)]
    dtype = node.out_dtypes[1] if kind == 'both' else node.out_dtypes[0]
    cast = g.add('Cast', [indices], outputs=[node.out(1 if kind == 'both' else 0)],
                 name=node.name, to=onnx_dtype(dtype))
    if kind == 'both':
        return [g.add('Identity', [values], outputs=[node.out()], name=node.name), cast]
    return [cast]


@exports('sort', 'argsort')
def sort(g, node):
    """TopK over the whole axis (values for sort, indices in dtype for argsort)."""
    values, indices = g.fresh(node.name + '_values'), g.fresh(node.name + '_indices')
    _top_k(g, node, node.inputs[0], node.p.axis, None, not node.p.is_ascend, [values, indices])
    if node.op_name == 'sort':
        return [g.add('Identity', [values], outputs=[node.out()], name=node.name)]
    return [g.add('Cast', [indices], outputs=[node.out()], name=node.name,
                  to=onnx_dtype(node.out_dtypes[0]))]


# ---- matrix products --------------------------------------------------------------------------
def _swap_last(g, x, ndim, name):
    perm = list(range(ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return g.add('Transpose', [x], name=name, perm=perm)


def _batch_matmul(g, node, out):
    a, b = node.inputs
    if node.p.transpose_a:
        a = _swap_last(g, a, len(node.in_shapes[0]), node.name + '_aT')
    if node.p.transpose_b:
        b = _swap_last(g, b, len(node.in_shapes[1]), node.name + '_bT')
    return g.add('MatMul', [a, b], outputs=[out], name=node.name)


@exports('batch_dot')
def batch_dot(g, node):
    """Batched MatMul with optional transposes of the last two axes."""
    return [_batch_matmul(g, node, node.out())]


@exports('_linalg_gemm2')
def linalg_gemm2(g, node):
    """alpha * op(A) op(B) over the last two axes."""
    if node.p.axis not in (-2, len(node.in_shapes[0]) - 2):
        raise _unsupported(node, 'axis=%d' % node.p.axis)
    if node.p.alpha == 1.0:
        return [_batch_matmul(g, node, node.out())]
    y = _batch_matmul(g, node, g.fresh(node.name + '_product'))
    alpha = g.scalar(node.p.alpha, node.in_dtypes[0], 'alpha')
    return [g.add('Mul', [y, alpha], outputs=[node.out()], name=node.name)]


@exports('dot')
def dot(g, node):
    """dot: a's last axis against b's first (transposes reverse 2-D operands)."""
    a, b = node.inputs
    nd_a, nd_b = len(node.in_shapes[0]), len(node.in_shapes[1])
    if node.p.transpose_a:
        if nd_a != 2:
            raise _unsupported(node, 'transpose_a with a %d-D lhs' % nd_a)
        a = g.add('Transpose', [a], name=node.name + '_aT', perm=[1, 0])
    if node.p.transpose_b:
        if nd_b != 2:
            raise _unsupported(node, 'transpose_b with a %d-D rhs' % nd_b)
        b = g.add('Transpose', [b], name=node.name + '_bT', perm=[1, 0])
    if nd_b <= 2:
        return [g.add('MatMul', [a, b], outputs=[node.out()], name=node.name)]
    if any(node.in_dynamic[1]):
        raise _unsupported(node, 'a dynamic rhs of more than 2 dimensions')
    rows = g.add('Reshape', [b, g.ints([node.in_shapes[1][0], -1])], name=node.name + '_rhs')
    flat = g.add('MatMul', [a, rows], name=node.name + '_flat')
    tail = list(node.in_shapes[1][1:])
    lead = [0] * (nd_a - 1) if nd_a > 1 else []
    return [g.add('Reshape', [flat, g.ints(lead + tail)], outputs=[node.out()], name=node.name)]
