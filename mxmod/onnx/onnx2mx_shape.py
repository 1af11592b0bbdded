"""Import conversions of ONNX's shape and indexing operators: Constant, Shape, Reshape, Flatten,
Transpose, (Un)Squeeze, Concat, Split, Slice, Gather, Expand, Tile, Pad, OneHot and Resize."""
import numpy as np

from .base import INT64_MAX, INT64_MIN, imports
from .onnx2mx_nn import unsupported
from .onnx2mx_tensor import leading_axes


@imports('Constant')
def constant(imp, node):
    """A known value."""
    if 'value' in node.attrs:
        return imp.onnx.numpy_helper.to_array(node.attrs['value'])
    for key, dtype in (('value_float', np.float32), ('value_int', np.int64),
                       ('value_floats', np.float32), ('value_ints', np.int64)):
        if key in node.attrs:
            return np.array(node.attrs[key], dtype=dtype)
    raise unsupported(node, 'attributes %s' % sorted(node.attrs))


@imports('Size')
def size(imp, node):
    """size_array."""
    return imp.sym.size_array(imp.symbol(node.inputs[0]), name=imp.node_name(node))


@imports('Reshape')
def reshape(imp, node):
    """Reshape (ONNX's 0 and -1 are MXNet's codes); entries taken from the data's own dimension
    at the same position become 0 (copy), so the batch size stays free."""
    target = [int(d) for d in imp.const(node.inputs[1], node, 'shape')]
    if node.attr('allowzero', 0) and 0 in target:
        raise unsupported(node, 'allowzero=1 with a zero dimension')
    sources, unknown = imp.dims.entry_sources(node.inputs[1])
    if sources is not None:
        unknown = unknown.copy()
        for k, src in enumerate(sources):
            if src == (node.inputs[0], k):
                target[k], unknown[k] = 0, False
        if unknown.any():
            if unknown.sum() > 1 or -1 in target:
                raise unsupported(node, 'a target shape with several dimensions known only at '
                                        'run time')
            target[int(np.argmax(unknown))] = -1
    return imp.sym.Reshape(imp.symbol(node.inputs[0]), shape=tuple(target),
                           name=imp.node_name(node))


@imports('Flatten')
def flatten(imp, node):
    """Flatten to 2-D around axis."""
    rank = imp.rank(node.inputs[0], node)
    axis = node.attr('axis', 1)
    axis = axis + rank if axis < 0 else axis
    x = imp.symbol(node.inputs[0])
    if axis == 1:
        return imp.sym.Flatten(x, name=imp.node_name(node))
    if axis == 0:
        return imp.sym.Reshape(x, shape=(1, -1), name=imp.node_name(node))
    dims = imp.static_shape(node.inputs[0], node)
    return imp.sym.Reshape(x, shape=(int(np.prod(dims[:axis])), -1), name=imp.node_name(node))


@imports('Transpose')
def transpose(imp, node):
    """transpose."""
    perm = node.attr('perm')
    kwargs = {'axes': tuple(perm)} if perm is not None else {}
    return imp.sym.transpose(imp.symbol(node.inputs[0]), name=imp.node_name(node), **kwargs)


def _axes_of(imp, node):
    if len(node.inputs) > 1 and node.inputs[1]:
        return [int(a) for a in imp.const(node.inputs[1], node, 'axes')]
    return node.attr('axes')


@imports('Squeeze')
def squeeze(imp, node):
    """squeeze (all size-1 axes when none are named)."""
    axes = _axes_of(imp, node)
    kwargs = {'axis': tuple(axes)} if axes else {}
    return imp.sym.squeeze(imp.symbol(node.inputs[0]), name=imp.node_name(node), **kwargs)


@imports('Unsqueeze')
def unsqueeze(imp, node):
    """expand_dims, one axis at a time in increasing order."""
    rank = imp.rank(node.inputs[0], node) + len(_axes_of(imp, node))
    x = imp.symbol(node.inputs[0])
    for axis in sorted(a % rank for a in _axes_of(imp, node)):
        x = imp.sym.expand_dims(x, axis=axis)
    return imp.sym.identity(x, name=imp.node_name(node))


@imports('Concat')
def concat(imp, node):
    """Concat."""
    rank = imp.rank(node.inputs[0], node)
    parts = [imp.symbol(n) for n in node.inputs if n]
    return imp.sym.Concat(*parts, dim=node.attr('axis') % rank, num_args=len(parts),
                          name=imp.node_name(node))


@imports('Split')
def split(imp, node):
    """SliceChannel for equal parts, slice_axis for given sizes."""
    rank = imp.rank(node.inputs[0], node)
    axis = node.attr('axis', 0) % rank
    sizes = node.attr('split')
    if len(node.inputs) > 1 and node.inputs[1]:
        sizes = [int(s) for s in imp.const(node.inputs[1], node, 'split')]
    x = imp.symbol(node.inputs[0])
    count = len(node.outputs)
    if sizes is None or len(set(sizes)) == 1:
        parts = imp.sym.SliceChannel(x, num_outputs=count, axis=axis, name=imp.node_name(node))
        return [parts[k] for k in range(count)] if count > 1 else [parts]
    bounds = np.cumsum([0] + list(sizes))
    return [imp.sym.slice_axis(x, axis=axis, begin=int(b), end=int(e),
                               name=imp.node_name(node, '_%d' % k))
            for k, (b, e) in enumerate(zip(bounds[:-1], bounds[1:]))]


def _bound(value):
    value = int(value)
    return None if value >= INT64_MAX // 2 or value <= INT64_MIN // 2 else value


@imports('Slice')
def slice_op(imp, node):
    """slice over every axis (None where the slice is whole)."""
    const = lambda k, default: [int(v) for v in imp.const(node.inputs[k], node)] \
        if len(node.inputs) > k and node.inputs[k] else default
    starts, ends = const(1, node.attr('starts')), const(2, node.attr('ends'))
    rank = imp.rank(node.inputs[0], node)
    axes = [a % rank for a in const(3, node.attr('axes', list(range(len(starts)))))]
    steps = const(4, [1] * len(starts))
    begin, end, step = [None] * rank, [None] * rank, [1] * rank
    for a, s, e, st in zip(axes, starts, ends, steps):
        begin[a], end[a], step[a] = _bound(s), _bound(e), st
    last = max(axes) + 1
    return imp.sym.slice(imp.symbol(node.inputs[0]), begin=tuple(begin[:last]),
                         end=tuple(end[:last]), step=tuple(step[:last]),
                         name=imp.node_name(node))


@imports('Gather')
def gather(imp, node):
    """Embedding for a known 2-D table gathered on axis 0, take otherwise (a scalar index drops
    the axis)."""
    axis = node.attr('axis', 0) % imp.rank(node.inputs[0], node)
    index_shape = imp.shape(node.inputs[1])
    if imp.is_const(node.inputs[0]) and axis == 0 and len(imp.shape(node.inputs[0])) == 2 \
            and index_shape != ():
        table = imp.const(node.inputs[0])
        return imp.sym.Embedding(imp.symbol(node.inputs[1]), imp.parameter(table, node.inputs[0]),
                                 input_dim=table.shape[0], output_dim=table.shape[1],
                                 dtype=table.dtype.name, name=imp.node_name(node))
    data = imp.symbol(node.inputs[0])
    if index_shape == () and imp.is_const(node.inputs[1]):
        index = int(imp.const(node.inputs[1]))
        if index < 0:
            index += imp.static_shape(node.inputs[0], node)[axis]
        piece = imp.sym.slice_axis(data, axis=axis, begin=index, end=index + 1)
        return imp.sym.squeeze(piece, axis=(axis,), name=imp.node_name(node))
    return imp.sym.take(data, imp.symbol(node.inputs[1]), axis=axis, mode='wrap',
                        name=imp.node_name(node))


@imports('GatherElements')
def gather_elements(imp, node):
    """pick, for one index per position along the axis (index size 1 on that axis)."""
    rank = imp.rank(node.inputs[0], node)
    axis = node.attr('axis', 0) % rank
    index_shape = imp.shape(node.inputs[1])
    if index_shape is None or index_shape[axis] != 1:
        raise unsupported(node, 'more than one index per position along the axis')
    index = imp.sym.squeeze(imp.symbol(node.inputs[1]), axis=(axis,))
    return imp.sym.pick(imp.symbol(node.inputs[0]), index, axis=axis, keepdims=True,
                        mode='wrap', name=imp.node_name(node))


@imports('Expand')
def expand(imp, node):
    """broadcast_to (target 1s keep the input's dims; a lower-rank input gains leading axes)."""
    target = [int(d) for d in imp.const(node.inputs[1], node, 'shape')]
    rank = imp.rank(node.inputs[0], node)
    x = imp.symbol(node.inputs[0])
    x = leading_axes(imp, x, len(target) - rank)
    return imp.sym.broadcast_to(x, shape=tuple(0 if d == 1 else d for d in target),
                                name=imp.node_name(node))


@imports('Tile')
def tile(imp, node):
    """tile."""
    reps = [int(r) for r in imp.const(node.inputs[1], node, 'repeats')]
    return imp.sym.tile(imp.symbol(node.inputs[0]), reps=tuple(reps), name=imp.node_name(node))


@imports('Pad')
def pad(imp, node):
    """Pad (constant, edge, reflect) of 4-D/5-D data."""
    pads = node.attr('pads')
    if len(node.inputs) > 1 and node.inputs[1]:
        pads = [int(p) for p in imp.const(node.inputs[1], node, 'pads')]
    value = 0.0
    if len(node.inputs) > 2 and node.inputs[2]:
        value = float(imp.const(node.inputs[2], node, 'constant_value').reshape(-1)[0])
    rank = len(pads) // 2
    if rank not in (4, 5):
        raise unsupported(node, 'padding of %d-D data (MXNet pads 4-D and 5-D)' % rank)
    width = []
    for b, e in zip(pads[:rank], pads[rank:]):
        width += [b, e]
    return imp.sym.Pad(imp.symbol(node.inputs[0]), mode=node.attr('mode', 'constant'),
                       pad_width=tuple(width), constant_value=value, name=imp.node_name(node))


@imports('OneHot')
def one_hot(imp, node):
    """one_hot along the last axis with the (off, on) values."""
    if node.attr('axis', -1) != -1:
        raise unsupported(node, 'axis other than -1')
    depth = int(imp.const(node.inputs[1], node, 'depth').reshape(-1)[0])
    off, on = imp.const(node.inputs[2], node, 'values').reshape(-1)
    return imp.sym.one_hot(imp.symbol(node.inputs[0]), depth=depth, on_value=float(on),
                           off_value=float(off), name=imp.node_name(node))


@imports('Resize', 'Upsample')
def resize(imp, node):
    """UpSampling nearest by one integer factor on the spatial axes."""
    if node.attr('mode', 'nearest') != 'nearest':
        raise unsupported(node, "mode %r (only 'nearest' has an MXNet form)" % node.attr('mode'))
    scales = None
    if node.op_type == 'Upsample':
        scales = imp.const(node.inputs[1], node, 'scales') if len(node.inputs) > 1 \
            else node.attr('scales')
    elif len(node.inputs) > 2 and node.inputs[2]:
        scales = imp.const(node.inputs[2], node, 'scales')
    if (scales is None or not len(scales)) and len(node.inputs) > 3 and node.inputs[3]:
        sizes = imp.const(node.inputs[3], node, 'sizes')
        scales = np.array(sizes, dtype=np.float64) / np.array(
            imp.static_shape(node.inputs[0], node))
    scales = [float(s) for s in scales]
    factor = scales[2]
    if scales[:2] != [1.0, 1.0] or any(s != factor for s in scales[2:]) or factor != int(factor):
        raise unsupported(node, 'scales %s (one integer factor on the spatial axes is needed)'
                          % scales)
    return imp.sym.UpSampling(imp.symbol(node.inputs[0]), scale=int(factor),
                              sample_type='nearest', num_args=1, name=imp.node_name(node))
