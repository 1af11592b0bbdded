"""Indexing operators: slice (with its assignment forms), slice_axis, slice_like, take and pick;
one_hot, where and clip are in indexing_values.py, gather_nd and scatter_nd in indexing_nd.py.

Shape inference follows MXNet 1.9.1 (0 = unknown dimension, None = unknown shape). Integer-valued
index inputs get no gradient (None); gradients flowing into data are scatter-added."""
import numpy as np

from ..base import MXNetError, DeferredOpError
from .base import Operator, Param, register, merge_shape
from .shape import ShapeOnly, is_known, norm_axis, prod, save_shape, saved_shape


def typed_like_first(in_types, out_types, data=0, wait=False):
    """Output dtype = dtype of input ``data``; the other inputs keep their own dtypes. With
    ``wait`` (the ``*_like`` operators, as MXNet's) nothing is inferred while input 1's dtype is
    unknown. (MXNet's take and pick raise then; mxmod waits too, because its simple_bind infers
    before it gives untyped variables float32, where MXNet's gives them float32 first.)"""
    if wait and in_types[1] is None:
        return list(in_types), list(out_types)
    dtype = in_types[data] or out_types[0]
    ins = list(in_types)
    ins[data] = dtype
    return ins, [dtype]


def as_index(xp, idx):
    """Index values as int64 (floats truncate toward zero, as a C cast does)."""
    return idx.astype(np.int64) if idx.dtype.kind != 'i' else idx


def scatter_rows(xp, nrows, rows, values):
    """Sum the rows of ``values`` (k, m) into an (nrows, m) array at positions ``rows`` (k,)."""
    if (xp is np and values.dtype in (np.float32, np.float64) and values.ndim == 2 and rows.size
            and rows.dtype.kind in 'iu' and values.shape[1] > 1):
        from . import jit  # pylint: disable=import-outside-toplevel
        rows = rows.reshape(-1)
        if jit.enabled() and 0 <= rows.min() and rows.max() < nrows:
            from . import index_kernels  # pylint: disable=import-outside-toplevel
            return index_kernels.scatter_rows(nrows, rows, values)
    width = values.shape[1]
    flat = (rows.reshape(-1, 1) * width + xp.arange(width)).reshape(-1)
    summed = xp.bincount(flat, weights=values.reshape(-1).astype(np.float64),
                         minlength=nrows * width)
    return summed.reshape(nrows, width).astype(values.dtype)


# ---- slicing ----------------------------------------------------------------------------------
class _Slicer(ShapeOnly):
    """Base of operators that copy out one rectangular, strided region of the input."""

    def _slices(self, shape, *others):
        raise NotImplementedError

    def forward(self, octx, inputs, aux):
        save_shape(octx, *inputs)
        return [inputs[0][self._slices(*[x.shape for x in inputs])].copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shapes = [saved_shape(octx, inputs, i)[0] for i in range(len(self.list_arguments()))]
        grad = octx.xp.zeros(shapes[0], dtype=out_grads[0].dtype)
        grad[self._slices(*shapes)] = out_grads[0]
        return [grad] + [None] * (len(shapes) - 1)


@register
class Slice(_Slicer):
    """``data[begin:end:step]`` per leading axis; None entries take the default bound."""
    op_name = 'slice'
    aliases = ('crop',)
    params = {'begin': Param('shape'), 'end': Param('shape'), 'step': Param('shape', ())}

    def setup(self):
        if len(self.p.begin) != len(self.p.end):
            raise MXNetError('slice: begin %s and end %s must have the same length'
                             % (self.p.begin, self.p.end))
        if self.p.step and len(self.p.step) != len(self.p.begin):
            raise MXNetError('slice: step %s and begin %s must have the same length'
                             % (self.p.step, self.p.begin))
        if any(s == 0 for s in self.p.step):
            raise MXNetError('slice: step cannot be 0, got %s' % (self.p.step,))

    def _slices(self, shape):
        if len(self.p.begin) > len(shape):
            raise MXNetError('slice: begin %s has more axes than the input shape %s'
                             % (self.p.begin, tuple(shape)))
        step = self.p.step or (None,) * len(self.p.begin)
        return tuple(slice(b, e, s) for b, e, s in zip(self.p.begin, self.p.end, step))

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:
            return in_shapes, out_shapes
        return in_shapes, [merge_shape('slice', 'output', out_shapes[0], self.region(data))]

    def region(self, data):
        """The shape of ``data[begin:end:step]`` (unknown where data's dim is unknown)."""
        out = list(data)
        for i, sl in enumerate(self._slices(data)):
            out[i] = len(range(*sl.indices(data[i]))) if data[i] else 0
        return tuple(out)


class _SliceAssignBase(Operator):
    """Shared part of ``_slice_assign`` and ``_slice_assign_scalar``: a copy of the first input
    with the region ``begin:end:step`` replaced (MXNet writes it in place when ``out`` is the
    input). MXNet registers no gradient for either."""
    differentiable = False
    params = {'begin': Param('shape'), 'end': Param('shape'), 'step': Param('shape', ())}

    def setup(self):
        Slice.setup(self)

    def _slices(self, shape):
        return Slice._slices(self, shape)

    def _region_shape(self, shape):
        return Slice.region(self, shape)

    def backward(self, octx, out_grads, inputs, outputs, aux):
        raise MXNetError("Operator %s is non-differentiable because it didn't register "
                         "FGradient attribute." % self.op_name)


@register
class SliceAssign(_SliceAssignBase):
    """``lhs`` with ``lhs[begin:end:step] = rhs`` (``rhs`` has the region's shape)."""
    op_name = '_slice_assign'
    aliases = ('_crop_assign',)
    arguments = ('lhs', 'rhs')

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: from lhs forwards only (rhs is the region, unknown where lhs is)
        lhs, rhs = in_shapes
        if lhs is None:
            return list(in_shapes), list(out_shapes)
        rhs = merge_shape(self.op_name, 'rhs', rhs, self._region_shape(lhs))
        return [lhs, rhs], [lhs]

    def forward(self, octx, inputs, aux):
        lhs, rhs = inputs
        region = self._region_shape(lhs.shape)
        if tuple(rhs.shape) != region:
            raise MXNetError('%s: Shape inconsistent, Provided = %s, inferred shape=%s (rhs must '
                             'have the shape of the region begin=%s end=%s step=%s of lhs %s)'
                             % (self.op_name, list(rhs.shape), list(region), self.p.begin,
                                self.p.end, self.p.step, tuple(lhs.shape)))
        out = lhs.copy()
        out[self._slices(lhs.shape)] = rhs
        return [out]


@register
class SliceAssignScalar(_SliceAssignBase):
    """``data`` with ``data[begin:end:step] = scalar``."""
    op_name = '_slice_assign_scalar'
    aliases = ('_crop_assign_scalar',)
    params = dict(_SliceAssignBase.params, scalar=Param('float', 0.0))

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]     # as MXNet: from a fully known data forwards only
        if not is_known(data):
            return list(in_shapes), list(out_shapes)
        return [data], [data]

    def forward(self, octx, inputs, aux):
        out = inputs[0].copy()
        out[self._slices(out.shape)] = self.p.scalar
        return [out]


@register
class SliceAxis(_Slicer):
    """``data[begin:end]`` along one axis (end None = to the end)."""
    op_name = 'slice_axis'
    params = {'axis': Param('int'), 'begin': Param('int'), 'end': Param('int?')}

    def _range(self, shape):
        axis = norm_axis('slice_axis', self.p.axis, len(shape))
        size = shape[axis]
        begin = self.p.begin + size if self.p.begin < 0 else self.p.begin
        end = size if self.p.end is None else (self.p.end + size if self.p.end < 0 else self.p.end)
        if size and not 0 <= begin < end <= size:
            raise MXNetError('slice_axis: invalid begin=%s, end=%s for axis %d of size %d'
                             % (self.p.begin, self.p.end, axis, size))
        return axis, begin, end

    def _slices(self, shape):
        axis, begin, end = self._range(shape)
        return (slice(None),) * axis + (slice(begin, end),)

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:
            return in_shapes, out_shapes
        axis, begin, end = self._range(data)
        out = tuple(end - begin if i == axis and d else d for i, d in enumerate(data))
        return in_shapes, [merge_shape('slice_axis', 'output', out_shapes[0], out)]


@register
class SliceLike(_Slicer):
    """Slice ``data`` to the shape of ``shape_like`` on ``axes`` (all axes when empty)."""
    op_name = 'slice_like'
    arguments = ('data', 'shape_like')
    params = {'axes': Param('shape', ())}

    def _axes(self, data, like):
        if not self.p.axes:
            if len(data) != len(like):
                raise MXNetError('slice_like: inputs of shapes %s and %s differ in ndim'
                                 % (tuple(data), tuple(like)))
            return range(len(data))
        axes = [norm_axis('slice_like', a, len(data)) for a in self.p.axes]
        if any(a >= len(like) for a in axes):
            raise MXNetError('slice_like: axes %s exceed shape_like %s' % (self.p.axes, like))
        return axes

    def _out(self, data, like):
        out = list(data)
        for a in self._axes(data, like):
            # compared as MXNet compares them: an unknown size is -1 there
            if like[a] and (not data[a] or like[a] > data[a]):
                raise MXNetError('slice_like: axis %d of size %d exceeds the input size %d'
                                 % (a, like[a], data[a]))
            out[a] = like[a]
        return tuple(out)

    def _slices(self, shape, *others):
        self._out(shape, others[0])
        axes = set(self._axes(shape, others[0]))
        return tuple(slice(0, others[0][a]) if a in axes else slice(None)
                     for a in range(len(shape)))

    def infer_shape(self, in_shapes, out_shapes):
        data, like = in_shapes
        if data is None or like is None:
            return in_shapes, out_shapes
        return in_shapes, [merge_shape('slice_like', 'output', out_shapes[0],
                                       self._out(data, like))]

    def infer_type(self, in_types, out_types):
        return typed_like_first(in_types, out_types, wait=True)


# ---- gathering by index -----------------------------------------------------------------------
@register
class Take(Operator):
    """Gather slices of ``a`` along ``axis`` at ``indices`` (mode clip, wrap or raise)."""
    op_name = 'take'
    arguments = ('a', 'indices')
    params = {'axis': Param('int', 0), 'mode': Param('str', 'clip', ('clip', 'raise', 'wrap'))}
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        data, idx = in_shapes
        if not is_known(idx):
            return in_shapes, out_shapes
        if data is None:        # MXNet checks axis against the unknown rank and fails
            raise MXNetError('take: the shape of a must be known once indices\' is')
        axis = norm_axis('take', self.p.axis, len(data))
        out = tuple(data[:axis]) + tuple(idx) + tuple(data[axis + 1:])
        return in_shapes, [merge_shape('take', 'output', out_shapes[0], out)]

    def infer_type(self, in_types, out_types):
        return typed_like_first(in_types, out_types, wait=True)

    def _index(self, xp, idx, size):
        idx = as_index(xp, idx)
        if self.p.mode == 'clip':
            return xp.clip(idx, 0, size - 1)
        if self.p.mode == 'wrap':
            return xp.mod(idx, size)
        if bool(((idx < 0) | (idx >= size)).any()):
            raise DeferredOpError('take: indices out of bound [0, %d) for axis %d (mode raise)'
                                  % (size, self.p.axis))
        return idx

    def forward(self, octx, inputs, aux):
        data, idx = inputs
        axis = norm_axis('take', self.p.axis, data.ndim)
        return [octx.xp.take(data, self._index(octx.xp, idx, data.shape[axis]), axis=axis)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        data, idx = inputs
        axis = norm_axis('take', self.p.axis, data.ndim)
        size = data.shape[axis]
        rows = self._index(xp, idx, size).reshape(-1)
        pre, post = prod(data.shape[:axis]), prod(data.shape[axis + 1:])
        dy = out_grads[0].reshape(pre, rows.size, post).transpose(1, 0, 2)
        grad = scatter_rows(xp, size, rows, dy.reshape(rows.size, pre * post))
        grad = grad.reshape(size, pre, post).transpose(1, 0, 2).reshape(data.shape)
        return [grad, None]


@register
class Pick(Operator):
    """Pick one element per position along ``axis``: out[i] = data[i, index[i]]."""
    op_name = 'pick'
    aliases = ('choose_element_0index',)
    arguments = ('data', 'index')
    params = {'axis': Param('int?', -1), 'keepdims': Param('bool', False),
              'mode': Param('str', 'clip', ('clip', 'wrap'))}
    backward_uses = ('inputs',)

    def setup(self):
        if self.p.axis is None:
            raise MXNetError('pick: axis=None is not supported; give an axis')

    def infer_shape(self, in_shapes, out_shapes):
        data, idx = in_shapes
        if data is None:
            return in_shapes, out_shapes
        axis = norm_axis('pick', self.p.axis, len(data))
        kept = tuple(1 if i == axis else d for i, d in enumerate(data))
        dropped = tuple(d for i, d in enumerate(data) if i != axis)
        out = merge_shape('pick', 'output', out_shapes[0], kept if self.p.keepdims else dropped)
        idx = merge_shape('pick', 'index', idx,
                          kept if idx is not None and len(idx) == len(data) else dropped)
        return [data, idx], [out]

    def infer_type(self, in_types, out_types):
        return typed_like_first(in_types, out_types, wait=True)

    def _positions(self, xp, data, idx):
        axis = norm_axis('pick', self.p.axis, data.ndim)
        size = data.shape[axis]
        idx = as_index(xp, idx)
        idx = xp.clip(idx, 0, size - 1) if self.p.mode == 'clip' else xp.mod(idx, size)
        if idx.ndim != data.ndim:
            idx = xp.expand_dims(idx, axis)
        return axis, idx

    def forward(self, octx, inputs, aux):
        data, idx = inputs
        axis, idx = self._positions(octx.xp, data, idx)
        out = octx.xp.take_along_axis(data, idx, axis=axis)
        return [out if self.p.keepdims else out.squeeze(axis)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        data, idx = inputs
        axis, idx = self._positions(xp, data, idx)
        dy = out_grads[0].reshape(idx.shape)
        shape = [1] * data.ndim
        shape[axis] = data.shape[axis]
        hit = xp.arange(data.shape[axis]).reshape(shape) == idx
        return [xp.where(hit, dy, xp.zeros((), dtype=dy.dtype)), None]
