"""Export conversions of the neural-network layers: FullyConnected, Convolution, Deconvolution,
Pooling, the normalisations, activations and Dropout."""
import math

import numpy as np

from ..base import MXNetError
from .base import exports

_CHANNEL_LAST = ('NWC', 'NHWC', 'NDHWC')


def _unsupported(node, what):
    return MXNetError('mx.onnx: cannot export %s %r: %s' % (node.op_name, node.name, what))


def _to_cf(g, x, ndim, layout):
    """``x`` in channel-first order (a Transpose for the channel-last layouts)."""
    if layout not in _CHANNEL_LAST:
        return x
    return g.add('Transpose', [x], perm=[0, ndim - 1] + list(range(1, ndim - 1)))


def _from_cf(g, x, ndim, layout, out):
    if layout not in _CHANNEL_LAST:
        return g.add('Identity', [x], outputs=[out]) if x != out else x
    return g.add('Transpose', [x], outputs=[out], perm=[0] + list(range(2, ndim)) + [1])


def _channel_vector(g, name, size, ndim, axis=1):
    """A per-channel vector reshaped to broadcast over ``axis`` of an ``ndim``-D tensor."""
    shape = [1] * ndim
    shape[axis] = size
    value = g.value(name)
    if value is not None:
        return g.const(value.reshape(shape), hint=name + '_bcast')
    return g.add('Reshape', [name, g.ints(shape)], name=name + '_bcast')


# ---- dense and convolution --------------------------------------------------------------------
@exports('FullyConnected')
def fully_connected(g, node):
    """Gemm for 2-D data; Flatten first (flatten=True) or MatMul over the last axis."""
    x, w = node.inputs[0], node.inputs[1]
    bias = None if node.p.no_bias else node.inputs[2]
    if bias is not None and len(node.in_shapes[2]) != 1:
        bias = g.add('Reshape', [bias, g.ints([-1])], name=node.name + '_bias')
    ndim = len(node.in_shapes[0])
    if node.p.flatten and ndim > 2:
        x = g.add('Flatten', [x], name=node.name + '_flatten', axis=1)
        ndim = 2
    if ndim == 2:
        inputs = [x, w] + ([bias] if bias is not None else [])
        return [g.add('Gemm', inputs, outputs=[node.out()], name=node.name, transB=1)]
    wt = g.add('Transpose', [w], name=node.name + '_wT', perm=[1, 0])
    if bias is None:
        return [g.add('MatMul', [x, wt], outputs=[node.out()], name=node.name)]
    y = g.add('MatMul', [x, wt], name=node.name + '_matmul')
    return [g.add('Add', [y, bias], outputs=[node.out()], name=node.name)]


def _conv_attrs(op):
    return dict(kernel_shape=list(op.kernel), strides=list(op.stride), dilations=list(op.dilate),
                group=op.p.num_group)


@exports('Convolution')
def convolution(g, node):
    """Conv (channel-last layouts transposed around it)."""
    op, ndim = node.op, len(node.in_shapes[0])
    x = _to_cf(g, node.inputs[0], ndim, op.layout)
    w = _to_cf(g, node.inputs[1], ndim, op.layout)
    inputs = [x, w] + ([] if op.p.no_bias else [node.inputs[2]])
    y = g.add('Conv', inputs, name=node.name, pads=list(op.pad) * 2, **_conv_attrs(op))
    return [_from_cf(g, y, ndim, op.layout, node.out())]


@exports('Deconvolution')
def deconvolution(g, node):
    """ConvTranspose; with target_shape, the pad and output_padding MXNet derives from it."""
    op, ndim = node.op, len(node.in_shapes[0])
    spatial = list(node.in_shapes[0][2:]) if op.layout not in _CHANNEL_LAST else \
        list(node.in_shapes[0][1:-1])
    pad, adj = list(op.pad), list(op.adj)
    if any(op.target):
        if any(node.in_dynamic[0][1:]):
            raise _unsupported(node, 'target_shape with dynamic spatial dimensions')
        pad, adj = [], []
        for x, s, k, t in zip(spatial, op.stride, op.dk, op.target):
            total = s * (x - 1) + k - t
            pad.append((total + 1) // 2)
            adj.append(total % 2)
    x = _to_cf(g, node.inputs[0], ndim, op.layout)
    w = _to_cf(g, node.inputs[1], ndim, op.layout)
    inputs = [x, w] + ([] if op.p.no_bias else [node.inputs[2]])
    y = g.add('ConvTranspose', inputs, name=node.name, pads=pad * 2,
              output_padding=adj if any(adj) else None, **_conv_attrs(op))
    return [_from_cf(g, y, ndim, op.layout, node.out())]


# ---- pooling ----------------------------------------------------------------------------------
def _pool_geometry(node, spatial):
    """(kernel, stride, pad_begin, pad_end) of a Pooling node; 'full' and 'same' become explicit
    end padding, computed from the static shapes."""
    kernel = list(node.p.kernel)
    nd = len(kernel)
    stride = list(node.p.stride or (1,) * nd)[:nd]
    pad = list(node.p.pad or (0,) * nd)[:nd]
    out = node.out_shapes[0][2:]
    end = list(pad)
    if node.p.pooling_convention != 'valid':
        for k, (n, o, s, kk, p) in enumerate(zip(spatial, out, stride, kernel, pad)):
            end[k] = p + max(0, (o - 1) * s + kk - (n + 2 * p))
    return kernel, stride, pad, end


def _sum_pool(g, node, x, channels, geometry, out):
    """Sum pooling as a depthwise convolution with a kernel of ones (exact at every border)."""
    kernel, stride, pad, end = geometry
    dtype = node.in_dtypes[0]
    ones = g.const(np.ones([channels, 1] + kernel, dtype=dtype), hint=node.name + '_ones')
    return g.add('Conv', [x, ones], outputs=[out], name=node.name, kernel_shape=kernel,
                 strides=stride, pads=pad + end, group=channels)


def _global_pool(g, node, x, out):
    kind, ndim = node.p.pool_type, len(node.in_shapes[0])
    if kind == 'max':
        return g.add('GlobalMaxPool', [x], outputs=[out], name=node.name)
    if kind == 'avg':
        return g.add('GlobalAveragePool', [x], outputs=[out], name=node.name)
    axes = list(range(2, ndim))
    if kind == 'lp':
        return _lp_root(g, node, g.reduce('ReduceSum', _lp_power(g, node, x), axes, True), out)
    return g.reduce('ReduceSum', x, axes, True, name=out)


def _lp_power(g, node, x):
    power = node.p.p_value or 1
    if power == 1:
        return x
    return g.add('Pow', [x, g.scalar(power, node.in_dtypes[0])], name=node.name + '_pow')


def _lp_root(g, node, summed, out):
    """The p-th root of summed p-th powers, as mxmod computes lp pooling."""
    power = node.p.p_value or 1
    if power == 1:
        return g.add('Identity', [summed], outputs=[out], name=node.name)
    root = g.scalar(1.0 / power, node.in_dtypes[0])
    return g.add('Pow', [summed, root], outputs=[out], name=node.name)


@exports('Pooling')
def pooling(g, node):
    """MaxPool, AveragePool or their global forms; sum (and lp: of p-th powers) pooling as a
    depthwise convolution with a kernel of ones."""
    ndim = len(node.in_shapes[0])
    layout = node.p.layout
    x = _to_cf(g, node.inputs[0], ndim, layout)
    final = node.out() if layout not in _CHANNEL_LAST else g.fresh(node.name + '_cf')
    if node.p.global_pool:
        y = _global_pool(g, node, x, final)
        return [_from_cf(g, y, ndim, layout, node.out())]
    cf_in = node.in_shapes[0] if layout not in _CHANNEL_LAST else \
        (node.in_shapes[0][0], node.in_shapes[0][-1]) + tuple(node.in_shapes[0][1:-1])
    if any(node.in_dynamic[0][2:]) and node.p.pooling_convention != 'valid':
        raise _unsupported(node, "pooling_convention=%r with dynamic spatial dimensions"
                           % node.p.pooling_convention)
    geometry = _pool_geometry(node, cf_in[2:])
    kernel, stride, pad, end = geometry
    kind = node.p.pool_type
    if kind == 'sum':
        y = _sum_pool(g, node, x, cf_in[1], geometry, final)
    elif kind == 'max':
        y = g.add('MaxPool', [x], outputs=[final], name=node.name, kernel_shape=kernel,
                  strides=stride, pads=pad + end)
    elif kind == 'lp':
        summed = _sum_pool(g, node, _lp_power(g, node, x), cf_in[1], geometry,
                           g.fresh(node.name + '_sum'))
        y = _lp_root(g, node, summed, final)
    else:
        y = _avg_pool(g, node, x, geometry, final)
    return [_from_cf(g, y, ndim, layout, node.out())]


def _avg_pool(g, node, x, geometry, out):
    """AveragePool; where a 'full' window runs past the padding MXNet divides by the part inside
    the padded input, which is a sum pool divided by a constant map of window sizes."""
    kernel, stride, pad, end = geometry
    include = node.p.count_include_pad is not False
    overhang = any(e != p for e, p in zip(end, pad))
    if not overhang or not include:
        return g.add('AveragePool', [x], outputs=[out], name=node.name, kernel_shape=kernel,
                     strides=stride, pads=pad + end, count_include_pad=int(include))
    summed = _sum_pool(g, node, x, node.in_shapes[0][1], geometry, g.fresh(node.name + '_sum'))
    spatial, outs = node.in_shapes[0][2:], node.out_shapes[0][2:]
    div = np.ones([1, 1] + list(outs), dtype=node.in_dtypes[0])
    for ax, (n, k, s, p, o) in enumerate(zip(spatial, kernel, stride, pad, outs)):
        start = np.arange(o) * s - p
        size = np.minimum(start + k, n + p) - start
        div = div * size.reshape([-1 if i == ax + 2 else 1 for i in range(div.ndim)])
    return g.add('Div', [summed, g.const(div.astype(node.in_dtypes[0]), hint=node.name + '_div')],
                 outputs=[out], name=node.name)


# ---- normalisation ----------------------------------------------------------------------------
def _bn_formula(g, node, scale, axis):
    """BatchNorm over a non-channel axis: (x - mean) / sqrt(var + eps) * gamma + beta."""
    ndim, size = len(node.in_shapes[0]), node.in_shapes[0][axis]
    mean, var, beta = [_channel_vector(g, t, size, ndim, axis)
                       for t in (node.inputs[3], node.inputs[4], node.inputs[2])]
    scale = _channel_vector(g, scale, size, ndim, axis)
    eps = g.scalar(node.p.eps, node.in_dtypes[4] or np.float32)
    std = g.add('Sqrt', [g.add('Add', [var, eps])])
    centred = g.add('Sub', [node.inputs[0], mean])
    y = g.add('Mul', [g.add('Div', [centred, std]), scale])
    return [g.add('Add', [y, beta], outputs=[node.out()], name=node.name)]


@exports('BatchNorm')
def batch_norm(g, node):
    """BatchNormalization in inference form (moving statistics); fix_gamma uses a scale of 1."""
    if node.p.output_mean_var:
        raise _unsupported(node, 'output_mean_var=True (the batch statistics are training '
                                 'outputs)')
    scale = node.inputs[1]
    channels = node.in_shapes[1][0]
    if node.p.fix_gamma:
        scale = g.const(np.ones(channels, dtype=node.in_dtypes[1]), hint=node.name + '_gamma1')
    axis = node.p.axis % len(node.in_shapes[0])
    if axis != 1:
        return _bn_formula(g, node, scale, axis)
    inputs = [node.inputs[0], scale, node.inputs[2], node.inputs[3], node.inputs[4]]
    return [g.add('BatchNormalization', inputs, outputs=[node.out()], name=node.name,
                  epsilon=node.p.eps)]


@exports('InstanceNorm')
def instance_norm(g, node):
    """InstanceNormalization."""
    return [g.add('InstanceNormalization', node.inputs[:3], outputs=[node.out()], name=node.name,
                  epsilon=node.p.eps)]


@exports('LayerNorm')
def layer_norm(g, node):
    """LayerNormalization (opset 17+, last axis) or its formula over the one axis."""
    if node.p.output_mean_var:
        raise _unsupported(node, 'output_mean_var=True')
    ndim = len(node.in_shapes[0])
    axis = node.p.axis % ndim
    if axis == ndim - 1 and g.opset >= 17:
        return [g.add('LayerNormalization', node.inputs[:3], outputs=[node.out()],
                      name=node.name, axis=-1, epsilon=node.p.eps)]
    x = node.inputs[0]
    mean = g.reduce('ReduceMean', x, [axis], True, name=node.name + '_mean')
    centred = g.add('Sub', [x, mean])
    var = g.reduce('ReduceMean', g.add('Mul', [centred, centred]), [axis], True)
    eps = g.scalar(node.p.eps, node.in_dtypes[0])
    normed = g.add('Div', [centred, g.add('Sqrt', [g.add('Add', [var, eps])])])
    size = node.in_shapes[0][axis]
    gamma = _channel_vector(g, node.inputs[1], size, ndim, axis)
    beta = _channel_vector(g, node.inputs[2], size, ndim, axis)
    return [g.add('Add', [g.add('Mul', [normed, gamma]), beta], outputs=[node.out()],
                  name=node.name)]


@exports('LRN')
def lrn(g, node):
    """LRN across channels (same formula: x / (knorm + alpha/nsize * sum x^2)^beta)."""
    return [g.add('LRN', [node.inputs[0]], outputs=[node.out()], name=node.name,
                  alpha=node.p.alpha, beta=node.p.beta, bias=node.p.knorm, size=node.p.nsize)]


@exports('L2Normalization')
def l2_normalization(g, node):
    """x / sqrt(sum x^2 + eps) over the instance, channel or spatial axes."""
    ndim = len(node.in_shapes[0])
    axes = {'instance': list(range(1, ndim)), 'channel': [1],
            'spatial': list(range(2, ndim))}[node.p.mode]
    sq = g.reduce('ReduceSumSquare', node.inputs[0], axes, True, name=node.name + '_sumsq')
    eps = g.scalar(node.p.eps, node.in_dtypes[0])
    norm = g.add('Sqrt', [g.add('Add', [sq, eps])], name=node.name + '_norm')
    return [g.add('Div', [node.inputs[0], norm], outputs=[node.out()], name=node.name)]


# ---- activations ------------------------------------------------------------------------------
_ACTIVATIONS = {'relu': 'Relu', 'sigmoid': 'Sigmoid', 'tanh': 'Tanh', 'softrelu': 'Softplus',
                'softsign': 'Softsign'}


@exports('Activation')
def activation(g, node):
    """Relu, Sigmoid, Tanh, Softplus (softrelu) or Softsign."""
    kind = node.p.act_type
    if kind in _ACTIVATIONS:
        return [g.add(_ACTIVATIONS[kind], [node.inputs[0]], outputs=[node.out()], name=node.name)]
    if kind == 'log_sigmoid':
        neg = g.add('Neg', [node.inputs[0]])
        return [g.add('Neg', [g.add('Softplus', [neg])], outputs=[node.out()], name=node.name)]
    if kind == 'mish':
        soft = g.add('Tanh', [g.add('Softplus', [node.inputs[0]])])
        return [g.add('Mul', [node.inputs[0], soft], outputs=[node.out()], name=node.name)]
    raise _unsupported(node, 'act_type %r' % kind)


def gelu(g, x, dtype, out, name):
    """Exact GELU: Gelu at opset 20+, else 0.5 x (1 + erf(x / sqrt 2))."""
    if g.opset >= 20:
        return g.add('Gelu', [x], outputs=[out], name=name)
    scaled = g.add('Mul', [x, g.scalar(1 / math.sqrt(2), dtype)])
    erf1 = g.add('Add', [g.add('Erf', [scaled]), g.scalar(1, dtype)])
    half = g.add('Mul', [x, g.scalar(0.5, dtype)])
    return g.add('Mul', [half, erf1], outputs=[out], name=name)


@exports('LeakyReLU')
def leaky_relu(g, node):
    """LeakyRelu, Elu, Selu, Gelu, PRelu (gamma along the channel axis), and rrelu in inference
    (the mean slope of its range)."""
    kind, x, out = node.p.act_type, node.inputs[0], node.out()
    if kind == 'leaky':
        return [g.add('LeakyRelu', [x], outputs=[out], name=node.name, alpha=node.p.slope)]
    if kind == 'rrelu':
        slope = (node.p.lower_bound + node.p.upper_bound) / 2.0
        value = g.onnx.numpy_helper.from_array(np.array([slope], dtype=node.in_dtypes[0]))
        mask = g.add('ConstantOfShape', [g.shape_of(x)], outputs=[node.out(1)],
                     name=node.name + '_mask', value=value)
        return [g.add('LeakyRelu', [x], outputs=[out], name=node.name, alpha=slope), mask]
    if kind == 'elu':
        return [g.add('Elu', [x], outputs=[out], name=node.name, alpha=node.p.slope)]
    if kind == 'selu':
        return [g.add('Selu', [x], outputs=[out], name=node.name)]
    if kind == 'gelu':
        return [gelu(g, x, node.in_dtypes[0], out, node.name)]
    ndim, size = len(node.in_shapes[0]), int(np.prod(node.in_shapes[1]))
    gamma = node.inputs[1]
    if size > 1 and ndim > 2:
        gamma = _channel_vector(g, gamma, size, ndim - 1, axis=0)
    return [g.add('PRelu', [x, gamma], outputs=[out], name=node.name)]


@exports('Dropout')
def dropout(g, node):
    """Identity in inference; mode='always' keeps dropping (ONNX Dropout in training mode)."""
    if node.p.mode != 'always' or node.p.p == 0:
        return [g.add('Identity', [node.inputs[0]], outputs=[node.out()], name=node.name)]
    if node.p.axes:
        raise _unsupported(node, "mode='always' with axes (variational dropout)")
    ratio = g.scalar(node.p.p, node.in_dtypes[0])
    training = g.const(np.array(True), hint='training_mode')
    return [g.add('Dropout', [node.inputs[0], ratio, training], outputs=[node.out()],
                  name=node.name)]
