"""Export conversions of UpSampling (nearest: Resize; bilinear: a depthwise ConvTranspose) and of
the variable-length sequence operators SequenceMask, SequenceLast and SequenceReverse."""
import numpy as np

from .base import exports
from .export_graph import INT64_MAX


@exports('UpSampling')
def upsampling(g, node):
    """Nearest: every input resized to the output size and concatenated or summed; bilinear: the
    Deconvolution MXNet runs, with the weight input as its kernel."""
    s = node.p.scale
    if node.p.sample_type == 'bilinear':
        channels = node.in_shapes[0][1]
        return [g.add('ConvTranspose', node.inputs[:2], outputs=[node.out()], name=node.name,
                      kernel_shape=[2 * s - s % 2] * 2, strides=[s, s], pads=[s // 2] * 4,
                      group=channels)]
    out_h = node.out_shapes[0][2]
    parts = []
    for x, shape in zip(node.inputs, node.in_shapes):
        factor = float(out_h // shape[2])
        scales = g.const(np.array([1, 1, factor, factor], dtype=np.float32), hint='scales')
        last = len(node.inputs) == 1
        parts.append(g.add('Resize', [x, '', scales], outputs=[node.out()] if last else 1,
                           name=node.name, mode='nearest', nearest_mode='floor',
                           coordinate_transformation_mode='asymmetric'))
    if len(parts) == 1:
        return parts
    if node.p.multi_input_mode == 'sum':
        return [g.add('Sum', parts, outputs=[node.out()], name=node.name)]
    return [g.add('Concat', parts, outputs=[node.out()], name=node.name, axis=1)]


def _lengths(g, node, steps):
    """The sequence lengths as int64, clipped to [0, steps]."""
    lengths = g.cast(node.inputs[1], np.int64)
    return g.add('Clip', [lengths, g.scalar(0, np.int64), steps], name=node.name + '_lengths')


def _time_size(g, node):
    axis = node.p.axis
    if node.in_dynamic[0][axis]:
        size = g.add('Gather', [g.shape_of(node.inputs[0]), g.ints([axis])], axis=0)
        return g.add('Squeeze', [size, g.ints([0])], name=node.name + '_steps')
    return g.scalar(node.in_shapes[0][axis], np.int64, 'steps')


def _step_grid(g, node, steps, lengths, compare):
    """Bool (T, N) or (N, T) grid of ``step <compare> length``, broadcast to the data's rank."""
    rng = g.add('Range', [g.scalar(0, np.int64), steps, g.scalar(1, np.int64)],
                name=node.name + '_range')
    if node.p.axis == 0:
        grid = g.add(compare, [g.unsqueeze(rng, [1]), g.unsqueeze(lengths, [0])],
                     name=node.name + '_grid')
    else:
        grid = g.add(compare, [g.unsqueeze(rng, [0]), g.unsqueeze(lengths, [1])],
                     name=node.name + '_grid')
    extra = len(node.in_shapes[0]) - 2
    return g.unsqueeze(grid, list(range(2, 2 + extra))) if extra else grid


@exports('SequenceMask')
def sequence_mask(g, node):
    """Steps at or beyond each length set to value."""
    if not node.p.use_sequence_length:
        return [g.add('Identity', [node.inputs[0]], outputs=[node.out()], name=node.name)]
    steps = _time_size(g, node)
    valid = _step_grid(g, node, steps, _lengths(g, node, steps), 'Less')
    value = g.scalar(node.p.value, node.in_dtypes[0], 'value')
    return [g.add('Where', [valid, node.inputs[0], value], outputs=[node.out()], name=node.name)]


@exports('SequenceLast')
def sequence_last(g, node):
    """The step at max(length - 1, 0) of every sequence (the last step without lengths)."""
    axis = node.p.axis
    if not node.p.use_sequence_length:
        last = g.add('Slice', [node.inputs[0], g.ints([-1]), g.ints([INT64_MAX]), g.ints([axis])],
                     name=node.name + '_last')
        return [g.squeeze(last, [axis], name=node.out())]
    steps = _time_size(g, node)
    lengths = _lengths(g, node, steps)
    index = g.add('Max', [g.add('Sub', [lengths, g.scalar(1, np.int64)]),
                          g.scalar(0, np.int64)], name=node.name + '_index')
    picked = _step_grid(g, node, steps, index, 'Equal')
    zero = g.scalar(0, node.in_dtypes[0], 'zero')
    masked = g.add('Where', [picked, node.inputs[0], zero], name=node.name + '_masked')
    return [g.reduce('ReduceSum', masked, [axis], False, name=node.out())]


@exports('SequenceReverse')
def sequence_reverse(g, node):
    """ReverseSequence over the valid lengths (the whole time axis without lengths)."""
    if not node.p.use_sequence_length:
        inputs = [node.inputs[0], g.ints([-1]), g.ints([np.iinfo(np.int64).min]), g.ints([0]),
                  g.ints([-1])]
        return [g.add('Slice', inputs, outputs=[node.out()], name=node.name)]
    steps = _time_size(g, node)
    lengths = _lengths(g, node, steps)
    return [g.add('ReverseSequence', [node.inputs[0], lengths], outputs=[node.out()],
                  name=node.name, batch_axis=1, time_axis=0)]
