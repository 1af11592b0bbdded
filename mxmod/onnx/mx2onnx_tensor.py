"""Export conversions of the shape and indexing operators: Reshape and its codes, Flatten,
transpose, slicing, splitting, joining, broadcasting, gathering, constants and Cast."""
import numpy as np

from ..base import MXNetError
from .base import exports, onnx_dtype
from .export_graph import INT64_MAX, INT64_MIN, factor_dims


def _unsupported(node, what):
    return MXNetError('mx.onnx: cannot export %s %r: %s' % (node.op_name, node.name, what))


def target_terms(node, rule, index=0):
    """Terms (see ``factor_dims``) of the shape ``rule`` maps input ``index``'s shape to, with the
    dynamic dimensions followed through as stand-in primes."""
    marked, marks = node.markers(index)
    try:
        out = rule(tuple(marked))
    except MXNetError:
        raise _unsupported(node, 'its output shape cannot be expressed in the dynamic input '
                                 'dimensions') from None
    return factor_dims(out, marks)


def reshape_to(g, node, x, rule, out=None):
    """Reshape ``x`` (input 0 of ``node``) to ``rule(input shape)``."""
    shape = g.shape_tensor(x, target_terms(node, rule), True, node.name)
    return g.add('Reshape', [x, shape], outputs=[out or node.out()], name=node.name)


def _identity(g, node, x=None):
    return [g.add('Identity', [x or node.inputs[0]], outputs=[node.out()], name=node.name)]


@exports('Reshape')
def reshape(g, node):
    """Reshape with MXNet's codes 0, -1, -2, -3, -4 (and reverse), or the legacy target_shape:
    the operator's own shape rule is followed through the dynamic dimensions."""
    return [reshape_to(g, node, node.inputs[0], node.op._target)]  # pylint: disable=protected-access


@exports('Flatten')
def flatten(g, node):
    """Flatten to (batch, rest)."""
    return [g.add('Flatten', [node.inputs[0]], outputs=[node.out()], name=node.name, axis=1)]


@exports('reshape_like')
def reshape_like(g, node):
    """Reshape to the shape of the second input (whole shapes only)."""
    p = node.p
    if any(v is not None for v in (p.lhs_begin, p.lhs_end, p.rhs_begin, p.rhs_end)):
        if any(node.in_dynamic[1]) or any(node.in_dynamic[0]):
            raise _unsupported(node, 'lhs/rhs ranges with dynamic input shapes')
        shape = g.ints(node.out_shapes[0])
    else:
        shape = g.shape_of(node.inputs[1])
    return [g.add('Reshape', [node.inputs[0], shape], outputs=[node.out()], name=node.name)]


@exports('transpose')
def transpose(g, node):
    """Transpose (no axes: reversed)."""
    ndim = len(node.in_shapes[0])
    perm = [a % ndim for a in node.p.axes] if node.p.axes else list(range(ndim))[::-1]
    return [g.add('Transpose', [node.inputs[0]], outputs=[node.out()], name=node.name, perm=perm)]


@exports('SwapAxis')
def swap_axis(g, node):
    """Transpose exchanging dim1 and dim2."""
    ndim = len(node.in_shapes[0])
    perm = list(range(ndim))
    a, b = node.p.dim1 % ndim, node.p.dim2 % ndim
    perm[a], perm[b] = perm[b], perm[a]
    return [g.add('Transpose', [node.inputs[0]], outputs=[node.out()], name=node.name, perm=perm)]


@exports('expand_dims')
def expand_dims(g, node):
    """Unsqueeze."""
    return [g.unsqueeze(node.inputs[0], [node.p.axis % len(node.out_shapes[0])], name=node.out())]


@exports('squeeze')
def squeeze(g, node):
    """Squeeze the given (or every static size-1) axes; MXNet keeps (1,) for an all-ones input."""
    shape, ndim = node.in_shapes[0], len(node.in_shapes[0])
    if node.p.axis is None:
        axes = [k for k, d in enumerate(shape) if d == 1 and not node.in_dynamic[0][k]]
    else:
        axes = sorted(a % ndim for a in node.p.axis)
    if len(axes) == ndim:
        return [g.add('Reshape', [node.inputs[0], g.ints([1])], outputs=[node.out()],
                      name=node.name)]
    return [g.squeeze(node.inputs[0], axes, name=node.out())]


@exports('Concat')
def concat(g, node):
    """Concat along dim."""
    axis = node.p.dim % len(node.in_shapes[0])
    return [g.add('Concat', node.inputs, outputs=[node.out()], name=node.name, axis=axis)]


@exports('stack')
def stack(g, node):
    """Unsqueeze every input at axis, then Concat."""
    axis = node.p.axis % len(node.out_shapes[0])
    parts = [g.unsqueeze(x, [axis], name=node.name + '_part') for x in node.inputs]
    return [g.add('Concat', parts, outputs=[node.out()], name=node.name, axis=axis)]


@exports('SliceChannel')
def slice_channel(g, node):
    """Split into num_outputs equal parts (squeezing the axis when asked)."""
    count = node.p.num_outputs
    axis = node.p.axis % len(node.in_shapes[0])
    if not node.p.squeeze_axis:
        return g.split(node.inputs[0], axis, count, [node.out(k) for k in range(count)],
                       name=node.name)
    parts = g.split(node.inputs[0], axis, count,
                    [g.fresh('%s_part%d' % (node.name, k)) for k in range(count)], name=node.name)
    return [g.squeeze(part, [axis], name=node.out(k)) for k, part in enumerate(parts)]


def _slice(g, node, x, starts, ends, axes, steps):
    inputs = [x, g.ints(starts, 'starts'), g.ints(ends, 'ends'), g.ints(axes, 'axes')]
    if any(s != 1 for s in steps):
        inputs.append(g.ints(steps, 'steps'))
    return [g.add('Slice', inputs, outputs=[node.out()], name=node.name)]


@exports('slice')
def slice_op(g, node):
    """Slice with begin/end/step (None: the whole axis in the step's direction)."""
    begin, end = list(node.p.begin), list(node.p.end)
    steps = [1 if s is None else s for s in (list(node.p.step) or [1] * len(begin))]
    steps += [1] * (len(begin) - len(steps))
    starts = [b if b is not None else (0 if s > 0 else INT64_MAX) for b, s in zip(begin, steps)]
    ends = [e if e is not None else (INT64_MAX if s > 0 else INT64_MIN)
            for e, s in zip(end, steps)]
    return _slice(g, node, node.inputs[0], starts, ends, list(range(len(begin))), steps)


@exports('slice_axis')
def slice_axis(g, node):
    """Slice of one axis."""
    end = INT64_MAX if node.p.end is None else node.p.end
    axis = node.p.axis % len(node.in_shapes[0])
    return _slice(g, node, node.inputs[0], [node.p.begin], [end], [axis], [1])


@exports('slice_like')
def slice_like(g, node):
    """Slice the leading part of ``axes`` (all shared axes when empty) to the second input's
    sizes."""
    ndim = min(len(node.in_shapes[0]), len(node.in_shapes[1]))
    axes = [a % len(node.in_shapes[0]) for a in node.p.axes] or list(range(ndim))
    shape = g.shape_of(node.inputs[1])
    ends = g.add('Gather', [shape, g.ints(axes)], name=node.name + '_ends', axis=0)
    inputs = [node.inputs[0], g.ints([0] * len(axes)), ends, g.ints(axes)]
    return [g.add('Slice', inputs, outputs=[node.out()], name=node.name)]


@exports('reverse')
def reverse(g, node):
    """Slices with step -1 along the axes."""
    ndim = len(node.in_shapes[0])
    axes = [a % ndim for a in node.p.axis]
    n = len(axes)
    return _slice(g, node, node.inputs[0], [-1] * n, [INT64_MIN] * n, axes, [-1] * n)


# ---- broadcasting and repetition ---------------------------------------------------------------
def _expand(g, node, rule):
    shape = g.shape_tensor(node.inputs[0], target_terms(node, rule), False, node.name)
    return [g.add('Expand', [node.inputs[0], shape], outputs=[node.out()], name=node.name)]


@exports('broadcast_to')
def broadcast_to(g, node):
    """Expand to ``shape`` (0 keeps the input's dimension)."""
    target = node.p.shape
    return _expand(g, node, lambda src: tuple(s if t == 0 else t for s, t in zip(src, target)))


@exports('broadcast_axis')
def broadcast_axis(g, node):
    """Expand the size-1 ``axis`` entries to ``size``."""
    ndim = len(node.in_shapes[0])
    sizes = dict(zip((a % ndim for a in node.p.axis), node.p.size))
    return _expand(g, node, lambda src: tuple(sizes.get(k, d) for k, d in enumerate(src)))


@exports('broadcast_like')
def broadcast_like(g, node):
    """Expand to the second input's shape (or its ``rhs_axes`` sizes at ``lhs_axes``)."""
    rhs_shape = g.shape_of(node.inputs[1])
    if node.p.lhs_axes is None:
        shape = rhs_shape
    else:
        ndim = len(node.in_shapes[0])
        pieces = []
        pairs = {l % ndim: r % len(node.in_shapes[1])
                 for l, r in zip(node.p.lhs_axes, node.p.rhs_axes)}
        for k in range(ndim):
            if k in pairs:
                pieces.append(g.add('Gather', [rhs_shape, g.ints([pairs[k]])], axis=0))
            else:
                pieces.append(g.ints([1]))
        shape = g.add('Concat', pieces, name=node.name + '_shape', axis=0)
    return [g.add('Expand', [node.inputs[0], shape], outputs=[node.out()], name=node.name)]


@exports('tile')
def tile(g, node):
    """Tile (reps and rank aligned as MXNet does: missing leading entries are 1)."""
    x, ndim, reps = node.inputs[0], len(node.in_shapes[0]), list(node.p.reps)
    if len(reps) > ndim:
        x = g.unsqueeze(x, list(range(len(reps) - ndim)), name=node.name + '_rank')
    reps = [1] * (ndim - len(reps)) + reps
    return [g.add('Tile', [x, g.ints(reps, 'reps')], outputs=[node.out()], name=node.name)]


@exports('repeat')
def repeat(g, node):
    """Repeat each element ``repeats`` times along ``axis`` (flattened input when None)."""
    x, r = node.inputs[0], node.p.repeats
    if node.p.axis is None:
        x = g.add('Reshape', [x, g.ints([-1])], name=node.name + '_flat')
        axis, ndim = 0, 1
    else:
        ndim = len(node.in_shapes[0])
        axis = node.p.axis % ndim
    wide = g.unsqueeze(x, [axis + 1], name=node.name + '_wide')
    reps = [1] * (ndim + 1)
    reps[axis + 1] = r
    tiled = g.add('Tile', [wide, g.ints(reps, 'reps')], name=node.name + '_tiled')
    if node.p.axis is None:
        return [g.add('Reshape', [tiled, g.ints([-1])], outputs=[node.out()], name=node.name)]
    return [reshape_to(g, node, tiled, lambda s: tuple(
        d * r if k == axis else d for k, d in enumerate(s)))]


# ---- gathering ---------------------------------------------------------------------------------
def _clipped_indices(g, node, index, size, mode='clip'):
    idx = g.cast(node.inputs[index], np.int64)
    if mode == 'clip':
        return g.add('Clip', [idx, g.scalar(0, np.int64), g.scalar(size - 1, np.int64)],
                     name=node.name + '_index')
    if mode == 'wrap':
        return g.add('Mod', [idx, g.scalar(size, np.int64)], name=node.name + '_index')
    return idx


@exports('Embedding')
def embedding(g, node):
    """Gather rows of the weight (indices clipped to the table, as MXNet does)."""
    idx = _clipped_indices(g, node, 0, node.p.input_dim)
    return [g.add('Gather', [node.inputs[1], idx], outputs=[node.out()], name=node.name, axis=0)]


@exports('take')
def take(g, node):
    """Gather along axis with MXNet's clip/wrap index modes."""
    axis = node.p.axis % len(node.in_shapes[0])
    idx = _clipped_indices(g, node, 1, node.in_shapes[0][axis], node.p.mode)
    return [g.add('Gather', [node.inputs[0], idx], outputs=[node.out()], name=node.name,
                  axis=axis)]


@exports('pick')
def pick(g, node):
    """GatherElements of one index per position along axis."""
    ndim = len(node.in_shapes[0])
    axis = (-1 if node.p.axis is None else node.p.axis) % ndim
    idx = _clipped_indices(g, node, 1, node.in_shapes[0][axis], node.p.mode)
    idx = g.unsqueeze(idx, [axis], name=node.name + '_index')
    picked = g.add('GatherElements', [node.inputs[0], idx], name=node.name + '_picked',
                   axis=axis)
    if node.p.keepdims:
        return _identity(g, node, picked)
    return [g.squeeze(picked, [axis], name=node.out())]


@exports('one_hot')
def one_hot(g, node):
    """OneHot with on/off values, cast to dtype."""
    dtype = node.out_dtypes[0]
    values = g.const(np.array([node.p.off_value, node.p.on_value], dtype=dtype), hint='values')
    idx = g.cast(node.inputs[0], np.int64)
    return [g.add('OneHot', [idx, g.ints([node.p.depth], 'depth'), values], outputs=[node.out()],
                  name=node.name, axis=-1)]


@exports('where')
def where(g, node):
    """Where on a non-zero condition; a 1-D condition selects whole rows."""
    cond = g.add('Cast', [node.inputs[0]], name=node.name + '_cond', to=onnx_dtype(np.bool_))
    ndim = len(node.in_shapes[1])
    if len(node.in_shapes[0]) == 1 and ndim > 1:
        cond = g.unsqueeze(cond, list(range(1, ndim)), name=node.name + '_rows')
    return [g.add('Where', [cond, node.inputs[1], node.inputs[2]], outputs=[node.out()],
                  name=node.name)]


# ---- constants, copies and casts ----------------------------------------------------------------
@exports('_zeros', '_ones', '_full')
def filled(g, node):
    """A constant; dimensions that vary with a dynamic input are 1 (they broadcast)."""
    value = {'_zeros': 0, '_ones': 1}.get(node.op_name)
    if value is None:
        value = node.p.value
    shape = [1 if d else s for s, d in zip(node.out_shapes[0], node.out_dynamic[0])]
    return [g.const(np.full(shape, value, dtype=node.out_dtypes[0]), hint=node.name)]


@exports('zeros_like', 'ones_like')
def filled_like(g, node):
    """ConstantOfShape of the input's shape."""
    value = np.array([0 if node.op_name == 'zeros_like' else 1], dtype=node.out_dtypes[0])
    tensor = g.onnx.numpy_helper.from_array(value)
    return [g.add('ConstantOfShape', [g.shape_of(node.inputs[0])], outputs=[node.out()],
                  name=node.name, value=tensor)]


@exports('_arange')
def arange(g, node):
    """A constant range (start, stop, step, repeat)."""
    p = node.p
    if p.infer_range:
        raise _unsupported(node, 'infer_range=True')
    start, stop = (0.0, p.start) if p.stop is None else (p.start, p.stop)
    values = np.repeat(np.arange(start, stop, p.step), p.repeat).astype(node.out_dtypes[0])
    return [g.const(values, hint=node.name)]


@exports('shape_array')
def shape_array(g, node):
    """Shape (int64)."""
    return [g.add('Shape', [node.inputs[0]], outputs=[node.out()], name=node.name)]


@exports('size_array')
def size_array(g, node):
    """Size as a 1-element int64 vector."""
    size = g.add('Size', [node.inputs[0]], name=node.name + '_size')
    return [g.add('Reshape', [size, g.ints([1])], outputs=[node.out()], name=node.name)]


@exports('Cast', 'amp_cast')
def cast(g, node):
    """Cast to dtype."""
    return [g.add('Cast', [node.inputs[0]], outputs=[node.out()], name=node.name,
                  to=onnx_dtype(node.out_dtypes[0]))]


@exports('_copy', 'identity', 'BlockGrad', 'stop_gradient', 'MakeLoss', 'make_loss',
         '_CrossDeviceCopy', 'LinearRegressionOutput', 'MAERegressionOutput', 'SVMOutput',
         '_identity_with_attr_like_rhs')
def identity(g, node):
    """Identity: copies, gradient stops and the pass-through loss layers."""
    return _identity(g, node)


@exports('clip')
def clip(g, node):
    """Clip with min and max of the input's dtype."""
    dtype = node.in_dtypes[0]
    bounds = [g.scalar(node.p.a_min, dtype, 'min'), g.scalar(node.p.a_max, dtype, 'max')]
    return [g.add('Clip', [node.inputs[0]] + bounds, outputs=[node.out()], name=node.name)]


@exports('Pad')
def pad(g, node):
    """Pad (constant, edge or reflect) with MXNet's (before, after) pairs per axis."""
    widths = list(node.p.pad_width)
    pads = widths[0::2] + widths[1::2]
    inputs = [node.inputs[0], g.ints(pads, 'pads')]
    if node.p.mode == 'constant':
        inputs.append(g.scalar(node.p.constant_value, node.in_dtypes[0], 'value'))
    return [g.add('Pad', inputs, outputs=[node.out()], name=node.name, mode=node.p.mode)]
