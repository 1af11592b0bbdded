"""Export conversions of the softmax family and the loss layers (in their inference form: a
network ending in SoftmaxOutput exports as softmax, its label dropped)."""
import numpy as np

from ..base import MXNetError
from .base import exports, onnx_dtype


def _unsupported(node, what):
    return MXNetError('mx.onnx: cannot export %s %r: %s' % (node.op_name, node.name, what))


def _softmax_over_rest(g, node, x, op_type='Softmax'):
    """Softmax over every axis but the first (data flattened to 2-D and shaped back)."""
    if len(node.in_shapes[0]) == 2:
        return g.add(op_type, [x], outputs=[node.out()], name=node.name, axis=1)
    flat = g.add('Flatten', [x], name=node.name + '_flat', axis=1)
    soft = g.add(op_type, [flat], name=node.name + '_flat_softmax', axis=1)
    return g.add('Reshape', [soft, g.shape_of(x)], outputs=[node.out()], name=node.name)


@exports('softmax', 'log_softmax', 'softmin')
def softmax(g, node):
    """Softmax / LogSoftmax along axis (softmin negates), with temperature and dtype."""
    p = node.p
    if p.use_length:
        raise _unsupported(node, 'use_length=True')
    x, dtype = node.inputs[0], node.in_dtypes[0]
    if node.out_dtypes[0] != dtype:
        x = g.add('Cast', [x], name=node.name + '_cast', to=onnx_dtype(node.out_dtypes[0]))
        dtype = node.out_dtypes[0]
    if p.temperature is not None and p.temperature != 1.0:
        x = g.add('Div', [x, g.scalar(p.temperature, dtype, 'temperature')],
                  name=node.name + '_scaled')
    if node.op_name == 'softmin':
        x = g.add('Neg', [x], name=node.name + '_neg')
    op_type = 'LogSoftmax' if node.op_name == 'log_softmax' else 'Softmax'
    axis = p.axis % len(node.in_shapes[0])
    return [g.add(op_type, [x], outputs=[node.out()], name=node.name, axis=axis)]


@exports('SoftmaxActivation')
def softmax_activation(g, node):
    """Softmax over the last axis (instance) or the channel axis."""
    axis = 1 if node.p.mode == 'channel' else -1
    return [g.add('Softmax', [node.inputs[0]], outputs=[node.out()], name=node.name, axis=axis)]


@exports('SoftmaxOutput')
def softmax_output(g, node):
    """The forward of SoftmaxOutput: softmax over axis 1 (multi_output), the last axis
    (preserve_shape), or all non-batch axes; the label is not needed."""
    x = node.inputs[0]
    if node.p.multi_output:
        return [g.add('Softmax', [x], outputs=[node.out()], name=node.name, axis=1)]
    if node.p.preserve_shape:
        return [g.add('Softmax', [x], outputs=[node.out()], name=node.name, axis=-1)]
    return [_softmax_over_rest(g, node, x)]


@exports('LogisticRegressionOutput')
def logistic_regression_output(g, node):
    """Sigmoid."""
    return [g.add('Sigmoid', [node.inputs[0]], outputs=[node.out()], name=node.name)]


@exports('smooth_l1')
def smooth_l1(g, node):
    """0.5 (sigma x)^2 where |x| < 1/sigma^2, else |x| - 0.5/sigma^2."""
    x, dtype = node.inputs[0], node.in_dtypes[0]
    sigma2 = node.p.scalar ** 2
    absx = g.add('Abs', [x], name=node.name + '_abs')
    small = g.add('Less', [absx, g.scalar(1.0 / sigma2, dtype)], name=node.name + '_small')
    quad = g.add('Mul', [g.add('Mul', [x, x]), g.scalar(0.5 * sigma2, dtype)])
    lin = g.add('Sub', [absx, g.scalar(0.5 / sigma2, dtype)])
    return [g.add('Where', [small, quad, lin], outputs=[node.out()], name=node.name)]


@exports('softmax_cross_entropy')
def softmax_cross_entropy(g, node):
    """-sum(log_softmax(data)[label]) over the batch, shape (1,)."""
    logp = g.add('LogSoftmax', [node.inputs[0]], name=node.name + '_logp', axis=1)
    label = g.add('Cast', [node.inputs[1]], name=node.name + '_label', to=onnx_dtype(np.int64))
    label = g.unsqueeze(label, [1], name=node.name + '_label')
    picked = g.add('GatherElements', [logp, label], name=node.name + '_picked', axis=1)
    total = g.reduce('ReduceSum', picked, None, False, name=node.name + '_sum')
    neg = g.add('Neg', [total], name=node.name + '_neg')
    return [g.add('Reshape', [neg, g.ints([1])], outputs=[node.out()], name=node.name)]
