"""Import conversions of ONNX's neural-network operators: Conv, ConvTranspose, Gemm, MatMul,
pooling, the normalisations and activations."""
from ..base import MXNetError
from .base import imports


def unsupported(node, what):
    """The error for an ONNX node whose attributes have no MXNet equivalent."""
    return MXNetError('mx.onnx.import_model: cannot import %s %r: %s'
                      % (node.op_type, node.name, what))


def _symmetric_pads(node, pads, nd):
    pads = list(pads or [0] * (2 * nd))
    begin, end = pads[:nd], pads[nd:]
    return begin, end


def _auto_pads(imp, node, kernel, strides, dilations):
    """Explicit (begin, end) pads of an auto_pad SAME_* / VALID node (static spatial sizes)."""
    mode = node.attr('auto_pad', 'NOTSET')
    nd = len(kernel)
    if mode in ('NOTSET', ''):
        return _symmetric_pads(node, node.attr('pads'), nd)
    if mode == 'VALID':
        return [0] * nd, [0] * nd
    spatial = imp.static_shape(node.inputs[0], node)[2:]
    begin, end = [], []
    for n, k, s, d in zip(spatial, kernel, strides, dilations):
        out = -(-n // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - n)
        small = total // 2
        begin.append(small if mode == 'SAME_UPPER' else total - small)
        end.append(total - begin[-1])
    return begin, end


def _padded_input(imp, node, x, begin, end, value=0.0):
    """``x`` with asymmetric padding applied explicitly; returns (x, pad). MXNet pads 4-D and
    5-D data, so 3-D data gains a trailing axis meanwhile."""
    if begin == end:
        return x, tuple(begin)
    width = [0, 0, 0, 0]
    for b, e in zip(begin, end):
        width += [b, e]
    one_d = len(begin) == 1
    if one_d:
        x = imp.sym.expand_dims(x, axis=-1)
        width += [0, 0]
    if len(width) not in (8, 10):
        raise unsupported(node, 'asymmetric pads on %d-D data' % (len(width) // 2))
    x = imp.sym.Pad(x, mode='constant', pad_width=tuple(width), constant_value=value,
                    name=imp.node_name(node, '_pad'))
    if one_d:
        x = imp.sym.squeeze(x, axis=(-1,))
    return x, (0,) * len(begin)


def _geometry(imp, node, kernel):
    nd = len(kernel)
    strides = list(node.attr('strides', [1] * nd))
    dilations = list(node.attr('dilations', [1] * nd))
    begin, end = _auto_pads(imp, node, kernel, strides, dilations)
    return strides, dilations, begin, end


@imports('Conv')
def conv(imp, node):
    """Convolution (asymmetric pads as an explicit Pad)."""
    weight_shape = imp.shape(node.inputs[1])
    kernel = list(node.attr('kernel_shape', weight_shape[2:]))
    strides, dilations, begin, end = _geometry(imp, node, kernel)
    x, pad = _padded_input(imp, node, imp.symbol(node.inputs[0]), begin, end)
    has_bias = len(node.inputs) > 2 and node.inputs[2]
    inputs = [x, imp.symbol(node.inputs[1])] + ([imp.symbol(node.inputs[2])] if has_bias else [])
    return imp.sym.Convolution(*inputs, kernel=tuple(kernel), stride=tuple(strides),
                               dilate=tuple(dilations), pad=pad, num_filter=weight_shape[0],
                               num_group=node.attr('group', 1), no_bias=not has_bias,
                               name=imp.node_name(node))


@imports('ConvTranspose')
def conv_transpose(imp, node):
    """Deconvolution; output_shape becomes target_shape, asymmetric pads a crop."""
    weight_shape = imp.shape(node.inputs[1])
    kernel = list(node.attr('kernel_shape', weight_shape[2:]))
    nd = len(kernel)
    strides = list(node.attr('strides', [1] * nd))
    dilations = list(node.attr('dilations', [1] * nd))
    if node.attr('auto_pad', 'NOTSET') not in ('NOTSET', '', 'VALID'):
        raise unsupported(node, 'auto_pad=%s' % node.attr('auto_pad'))
    begin, end = _symmetric_pads(node, node.attr('pads'), nd)
    group = node.attr('group', 1)
    has_bias = len(node.inputs) > 2 and node.inputs[2]
    inputs = [imp.symbol(node.inputs[0]), imp.symbol(node.inputs[1])] + \
        ([imp.symbol(node.inputs[2])] if has_bias else [])
    common = dict(kernel=tuple(kernel), stride=tuple(strides), dilate=tuple(dilations),
                  num_filter=weight_shape[1] * group, num_group=group, no_bias=not has_bias)
    if node.attr('output_shape'):
        return imp.sym.Deconvolution(*inputs, target_shape=tuple(node.attr('output_shape')),
                                     name=imp.node_name(node), **common)
    adj = tuple(node.attr('output_padding', [0] * nd))
    low = [min(b, e) for b, e in zip(begin, end)]
    y = imp.sym.Deconvolution(*inputs, pad=tuple(low), adj=adj, name=imp.node_name(node),
                              **common)
    if begin == end:
        return y
    starts = [None, None] + [b - l for b, l in zip(begin, low)]
    stops = [None, None] + [-(e - l) if e > l else None for e, l in zip(end, low)]
    return imp.sym.slice(y, begin=tuple(starts), end=tuple(stops),
                         name=imp.node_name(node, '_crop'))


@imports('Gemm')
def gemm(imp, node):
    """FullyConnected when B is the weight (alpha = beta = 1, C a vector), else dot + scaling."""
    alpha, beta = node.attr('alpha', 1.0), node.attr('beta', 1.0)
    trans_a, trans_b = node.attr('transA', 0), node.attr('transB', 0)
    a = imp.symbol(node.inputs[0])
    if trans_a:
        a = imp.sym.transpose(a)
    has_c = len(node.inputs) > 2 and node.inputs[2]
    if imp.is_const(node.inputs[1]) and alpha == 1.0 and beta == 1.0:
        w = imp.const(node.inputs[1])
        weight = imp.parameter(w if trans_b else w.T, node.inputs[1])
        c_vector = has_c and len(imp.shape(node.inputs[2])) == 1
        if not has_c or c_vector:
            inputs = [a, weight] + ([imp.symbol(node.inputs[2])] if has_c else [])
            return imp.sym.FullyConnected(*inputs, num_hidden=weight_rows(w, trans_b),
                                          no_bias=not has_c, name=imp.node_name(node))
    y = imp.sym.dot(a, imp.symbol(node.inputs[1]), transpose_b=bool(trans_b),
                    name=imp.node_name(node, '_dot'))
    if alpha != 1.0:
        y = y * alpha
    if has_c:
        c = imp.symbol(node.inputs[2])
        y = imp.sym.broadcast_add(y, c * beta if beta != 1.0 else c)
    return y


def weight_rows(w, trans_b):
    """The number of outputs of a Gemm weight."""
    return w.shape[0] if trans_b else w.shape[1]


@imports('MatMul')
def matmul(imp, node):
    """FullyConnected over the last axis for a constant 2-D right side, dot for 2-D operands,
    batch_dot (with reshapes to 3-D) otherwise."""
    a_rank, b_rank = imp.rank(node.inputs[0], node), imp.rank(node.inputs[1], node)
    if imp.is_const(node.inputs[1]) and b_rank == 2 and a_rank >= 2:
        w = imp.const(node.inputs[1])
        return imp.sym.FullyConnected(imp.symbol(node.inputs[0]), imp.parameter(w.T,
                                                                                node.inputs[1]),
                                      num_hidden=w.shape[1], no_bias=True, flatten=False,
                                      name=imp.node_name(node))
    a, b = imp.symbol(node.inputs[0]), imp.symbol(node.inputs[1])
    if a_rank >= 2 and b_rank == 2:
        return imp.sym.dot(a, b, name=imp.node_name(node))
    if a_rank == b_rank == 3:
        return imp.sym.batch_dot(a, b, name=imp.node_name(node))
    if a_rank == b_rank and a_rank > 3:
        a3 = imp.sym.Reshape(a, shape=(-1, 0, 0), reverse=True)
        b3 = imp.sym.Reshape(b, shape=(-1, 0, 0), reverse=True)
        prod = imp.sym.batch_dot(a3, b3)
        return imp.sym.reshape_like(prod, _matmul_like(imp, a, b), name=imp.node_name(node))
    raise unsupported(node, 'operands of ranks %d and %d' % (a_rank, b_rank))


def _matmul_like(imp, a, b):
    """A symbol with the shape of a batched a @ b (a's leading dims, a's rows, b's columns)."""
    cols = imp.sym.slice_axis(b, axis=-2, begin=0, end=1)
    rows = imp.sym.slice_axis(a, axis=-1, begin=0, end=1)
    return imp.sym.broadcast_mul(rows, cols)


# ---- pooling ----------------------------------------------------------------------------------
def _pool(imp, node, pool_type):
    kernel = list(node.attr('kernel_shape'))
    if any(d != 1 for d in node.attr('dilations', [1] * len(kernel))):
        raise unsupported(node, 'dilated pooling')
    strides, _, begin, end = _geometry(imp, node, kernel)
    include = bool(node.attr('count_include_pad', 0))
    x = imp.symbol(node.inputs[0])
    convention = 'full' if node.attr('ceil_mode', 0) else 'valid'
    pad = tuple(begin)
    if begin != end:
        if (pool_type == 'max' or not include) and not node.attr('ceil_mode', 0) and \
                _end_pad_is_full(imp, node, kernel, strides, begin, end):
            convention = 'full'
        else:
            fill = -3.4e38 if pool_type == 'max' else 0.0
            x, pad = _padded_input(imp, node, x, begin, end, fill)
    extra = {} if pool_type == 'max' else {'count_include_pad': include}
    return imp.sym.Pooling(x, kernel=tuple(kernel), stride=tuple(strides), pad=pad,
                           pool_type=pool_type, pooling_convention=convention,
                           name=imp.node_name(node), **extra)


def _end_pad_is_full(imp, node, kernel, strides, begin, end):
    """True when extra end padding only completes the last windows, as MXNet's 'full'
    convention does (for max, and for averages over the valid elements)."""
    shape = imp.shape(node.inputs[0])
    if shape is None or any(d is None for d in shape[2:]):
        return False
    for n, k, s, b, e in zip(shape[2:], kernel, strides, begin, end):
        onnx_out = (n + b + e - k) // s + 1
        full_out = 1 + -(-(n + 2 * b - k) // s)
        if e < b or onnx_out != full_out or (onnx_out - 1) * s >= n + b:
            return False
    return True


@imports('MaxPool')
def max_pool(imp, node):
    """Pooling max (ceil_mode: the 'full' convention)."""
    if len(node.outputs) > 1 and node.outputs[1]:
        raise unsupported(node, 'the Indices output')
    return _pool(imp, node, 'max')


@imports('AveragePool')
def average_pool(imp, node):
    """Pooling avg with count_include_pad."""
    return _pool(imp, node, 'avg')


@imports('LpPool')
def lp_pool(imp, node):
    """Pooling lp (p-th root of the summed p-th powers)."""
    kernel = list(node.attr('kernel_shape'))
    strides, _, begin, end = _geometry(imp, node, kernel)
    if begin != end:
        raise unsupported(node, 'asymmetric pads')
    return imp.sym.Pooling(imp.symbol(node.inputs[0]), kernel=tuple(kernel),
                           stride=tuple(strides), pad=tuple(begin), pool_type='lp',
                           p_value=node.attr('p', 2), name=imp.node_name(node))


@imports('GlobalAveragePool', 'GlobalMaxPool', 'GlobalLpPool')
def global_pool(imp, node):
    """Pooling with global_pool."""
    kind = {'GlobalAveragePool': 'avg', 'GlobalMaxPool': 'max', 'GlobalLpPool': 'lp'}
    extra = {'p_value': node.attr('p', 2)} if node.op_type == 'GlobalLpPool' else {}
    nd = imp.rank(node.inputs[0], node) - 2
    return imp.sym.Pooling(imp.symbol(node.inputs[0]), kernel=(1,) * nd, global_pool=True,
                           pool_type=kind[node.op_type], name=imp.node_name(node), **extra)


# ---- normalisation ----------------------------------------------------------------------------
@imports('BatchNormalization')
def batch_norm(imp, node):
    """BatchNorm (gamma learned, running statistics as auxiliary states)."""
    if len(node.outputs) > 1 and any(node.outputs[1:]):
        raise unsupported(node, 'training-mode outputs')
    inputs = [imp.symbol(n) for n in node.inputs[:5]]
    return imp.sym.BatchNorm(*inputs, eps=node.attr('epsilon', 1e-5),
                             momentum=node.attr('momentum', 0.9), fix_gamma=False,
                             name=imp.node_name(node))


@imports('InstanceNormalization')
def instance_norm(imp, node):
    """InstanceNorm."""
    inputs = [imp.symbol(n) for n in node.inputs[:3]]
    return imp.sym.InstanceNorm(*inputs, eps=node.attr('epsilon', 1e-5), name=imp.node_name(node))


@imports('LayerNormalization')
def layer_norm(imp, node):
    """LayerNorm over the last axis (the only form MXNet has)."""
    rank = imp.rank(node.inputs[0], node)
    if node.attr('axis', -1) % rank != rank - 1 or len(node.inputs) < 3 or not node.inputs[2]:
        raise unsupported(node, 'normalisation over several axes or without a bias')
    if len(node.outputs) > 1 and any(node.outputs[1:]):
        raise unsupported(node, 'the mean/inv_std outputs')
    inputs = [imp.symbol(n) for n in node.inputs[:3]]
    return imp.sym.LayerNorm(*inputs, axis=-1, eps=node.attr('epsilon', 1e-5),
                             name=imp.node_name(node))


@imports('LRN')
def lrn(imp, node):
    """LRN (bias is knorm)."""
    return imp.sym.LRN(imp.symbol(node.inputs[0]), alpha=node.attr('alpha', 1e-4),
                       beta=node.attr('beta', 0.75), knorm=node.attr('bias', 1.0),
                       nsize=node.attr('size'), name=imp.node_name(node))


# ---- activations ------------------------------------------------------------------------------
_ACTIVATIONS = {'Relu': 'relu', 'Sigmoid': 'sigmoid', 'Tanh': 'tanh', 'Softplus': 'softrelu',
                'Softsign': 'softsign'}


@imports(*_ACTIVATIONS)
def activation(imp, node):
    """Activation."""
    return imp.sym.Activation(imp.symbol(node.inputs[0]), act_type=_ACTIVATIONS[node.op_type],
                              name=imp.node_name(node))


@imports('LeakyRelu', 'Elu')
def leaky_relu(imp, node):
    """LeakyReLU leaky / elu."""
    kind = 'leaky' if node.op_type == 'LeakyRelu' else 'elu'
    default = 0.01 if kind == 'leaky' else 1.0
    return imp.sym.LeakyReLU(imp.symbol(node.inputs[0]), act_type=kind,
                             slope=node.attr('alpha', default), name=imp.node_name(node))


@imports('Selu')
def selu(imp, node):
    """LeakyReLU selu (ONNX's default constants are MXNet's)."""
    if abs(node.attr('alpha', 1.67326) - 1.67326) > 1e-4 or \
            abs(node.attr('gamma', 1.0507) - 1.0507) > 1e-4:
        raise unsupported(node, 'non-default alpha/gamma')
    return imp.sym.LeakyReLU(imp.symbol(node.inputs[0]), act_type='selu',
                             name=imp.node_name(node))


@imports('Gelu')
def gelu(imp, node):
    """LeakyReLU gelu (the exact, erf form)."""
    if node.attr('approximate', 'none') != 'none':
        raise unsupported(node, "approximate='tanh'")
    return imp.sym.LeakyReLU(imp.symbol(node.inputs[0]), act_type='gelu',
                             name=imp.node_name(node))


@imports('PRelu')
def prelu(imp, node):
    """LeakyReLU prelu with the slope as a per-channel vector."""
    x = imp.symbol(node.inputs[0])
    if imp.is_const(node.inputs[1]):
        slope = imp.const(node.inputs[1]).reshape(-1)
        gamma = imp.parameter(slope, node.inputs[1])
    else:
        gamma = imp.sym.Reshape(imp.symbol(node.inputs[1]), shape=(-1,))
    return imp.sym.LeakyReLU(x, gamma, act_type='prelu', name=imp.node_name(node))


@imports('HardSigmoid')
def hard_sigmoid(imp, node):
    """clip(alpha x + beta, 0, 1)."""
    x = imp.symbol(node.inputs[0]) * node.attr('alpha', 0.2) + node.attr('beta', 0.5)
    return imp.sym.clip(x, a_min=0.0, a_max=1.0, name=imp.node_name(node))


@imports('Dropout', 'Identity')
def identity(imp, node):
    """Identity (Dropout in inference)."""
    if node.op_type == 'Dropout' and len(node.outputs) > 1 and node.outputs[1]:
        raise unsupported(node, 'the mask output')
    return imp.sym.identity(imp.symbol(node.inputs[0]), name=imp.node_name(node))

