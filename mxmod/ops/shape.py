"""Shape operators: Flatten, Reshape, transpose, SwapAxis, expand_dims, squeeze, Concat, stack,
SliceChannel, tile, repeat, Pad, reverse, Cast, reshape_like, shape_array and size_array.

Shape inference follows MXNet 1.9.1, including its partial and output-to-input inference
(0 = unknown dimension, None = unknown shape). Operators whose backward needs only shapes keep
the input shape in ``octx.saved`` and declare ``backward_uses = ()``."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from .shape_codes import reshape_partial, fill_from_size

__all__ = ['norm_axis', 'is_known', 'save_shape', 'saved_shape', 'prod']


def prod(dims):
    """Product of a sequence of ints (1 for an empty one)."""
    total = 1
    for d in dims:
        total *= int(d)
    return total


def is_known(shape):
    """True when ``shape`` is fully known (not None and no unknown 0 dim)."""
    return shape is not None and all(shape)


def norm_axis(op, axis, ndim, what='axis'):
    """Return ``axis`` in [0, ndim), counting negative values from the end."""
    if not -ndim <= axis < ndim:
        raise MXNetError('%s: %s %d is out of range for an input with %d dimensions'
                         % (op, what, axis, ndim))
    return axis + ndim if axis < 0 else axis


def save_shape(octx, *arrays):
    """Keep the shapes and dtypes of ``arrays`` for a backward that needs only those."""
    octx.saved['in_meta'] = [(tuple(a.shape), a.dtype) for a in arrays]


def saved_shape(octx, inputs, i=0):
    """(shape, dtype) of input ``i`` as kept by ``save_shape`` (or read from ``inputs``)."""
    meta = octx.saved.get('in_meta')
    if meta is not None:
        return meta[i]
    return tuple(inputs[i].shape), inputs[i].dtype


class ShapeOnly(Operator):
    """Base of operators that move data around without arithmetic: cheap to recompute."""
    mirror_cheap = True
    backward_uses = ()


# ---- reshape family ---------------------------------------------------------------------------
@register
class Flatten(ShapeOnly):
    """Collapse every axis but the first: (d0, d1, ..., dk) -> (d0, d1*...*dk)."""
    op_name = 'Flatten'
    aliases = ('flatten',)

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if not is_known(data):
            return in_shapes, out_shapes
        if not data:
            raise MXNetError('Flatten: the input must have at least one dimension')
        out = merge_shape('Flatten', 'output', out_shapes[0], (data[0], prod(data[1:])))
        return in_shapes, [out]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        save_shape(octx, x)
        return [x.reshape(x.shape[0], -1).copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [out_grads[0].reshape(saved_shape(octx, inputs)[0])]


@register
class Reshape(ShapeOnly):
    """Reshape with MXNet's special codes (see ``shape_codes``), or the legacy target_shape."""
    op_name = 'Reshape'
    aliases = ('reshape',)
    params = {'shape': Param('shape', ()), 'reverse': Param('bool', False),
              'target_shape': Param('shape', ()), 'keep_highest': Param('bool', False)}

    def _target(self, data):
        if self.p.shape:
            return reshape_partial(data, self.p.shape, self.p.reverse)
        out = list(self.p.target_shape)
        if self.p.keep_highest:
            out[0] = data[0]
        start = 1 if self.p.keep_highest else 0
        holes = [j for j in range(start, len(out)) if out[j] == 0]
        if len(holes) == 1:
            out[holes[0]] = 1
            out[holes[0]] = prod(data) // prod(out) if is_known(data) else 0
        return tuple(out)

    def infer_shape(self, in_shapes, out_shapes):
        data, out = in_shapes[0], out_shapes[0]
        if data is None:
            return in_shapes, out_shapes
        if self.p.shape or self.p.target_shape:
            out = merge_shape('Reshape', 'output', out, self._target(data))
        if is_known(out):
            data = fill_from_size(data, prod(out))
            if is_known(data) and prod(data) != prod(out):
                raise MXNetError('Reshape: cannot reshape input of shape %s into %s'
                                 % (data, out))
        return [data], [out]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        if not self.p.shape and not self.p.target_shape:
            raise MXNetError('Reshape: parameter shape is required')
        save_shape(octx, x)
        return [x.reshape(self._target(x.shape)).copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [out_grads[0].reshape(saved_shape(octx, inputs)[0])]


@register
class ReshapeLike(ShapeOnly):
    """Reshape ``lhs`` to (part of) the shape of ``rhs``."""
    op_name = 'reshape_like'
    arguments = ('lhs', 'rhs')
    params = {'lhs_begin': Param('int?', None), 'lhs_end': Param('int?', None),
              'rhs_begin': Param('int?', None), 'rhs_end': Param('int?', None)}

    @staticmethod
    def _range(side, ndim, begin, end):
        b = 0 if begin is None else (begin + ndim if begin < 0 else begin)
        e = ndim if end is None else (end + ndim if end < 0 else end)
        if not 0 <= b < e <= ndim:
            raise MXNetError('reshape_like: invalid %s_begin=%s, %s_end=%s for %d dimensions'
                             % (side, begin, side, end, ndim))
        return b, e

    def _target(self, lhs, rhs):
        lb, le = self._range('lhs', len(lhs), self.p.lhs_begin, self.p.lhs_end)
        rb, re_ = self._range('rhs', len(rhs), self.p.rhs_begin, self.p.rhs_end)
        out = tuple(lhs[:lb]) + tuple(rhs[rb:re_]) + tuple(lhs[le:])
        if not is_known(lhs) or not is_known(out) or prod(lhs) != prod(out):
            raise MXNetError('reshape_like: cannot reshape lhs of shape %s to %s (both must be '
                             'known and of one size)' % (tuple(lhs), out))
        return out

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: both shapes must be known (it compares the sizes)
        lhs, rhs = in_shapes
        if lhs is None or rhs is None:
            raise MXNetError('reshape_like: the shapes of lhs and rhs must be known, got %s and %s'
                             % (lhs, rhs))
        return in_shapes, [merge_shape('reshape_like', 'output', out_shapes[0],
                                       self._target(lhs, rhs))]

    def infer_type(self, in_types, out_types):
        if in_types[1] is None:     # as MXNet: nothing until rhs's dtype is known
            return list(in_types), list(out_types)
        dtype = in_types[0] or out_types[0]
        return [dtype, in_types[1]], [dtype]

    def forward(self, octx, inputs, aux):
        save_shape(octx, *inputs)
        return [inputs[0].reshape(self._target(inputs[0].shape, inputs[1].shape)).copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [out_grads[0].reshape(saved_shape(octx, inputs)[0]), None]


@register
class Transpose(ShapeOnly):
    """Permute the axes (reverse them when ``axes`` is empty)."""
    op_name = 'transpose'
    params = {'axes': Param('shape', ())}

    def _perm(self, ndim):
        if not self.p.axes:
            return tuple(range(ndim - 1, -1, -1))
        if len(self.p.axes) != ndim:
            raise MXNetError('transpose: axes %s do not match an input of %d dimensions'
                             % (self.p.axes, ndim))
        perm = tuple(norm_axis('transpose', a, ndim) for a in self.p.axes)
        if sorted(perm) != list(range(ndim)):
            raise MXNetError('transpose: axes %s are not a permutation' % (self.p.axes,))
        return perm

    def infer_shape(self, in_shapes, out_shapes):
        data, out = in_shapes[0], out_shapes[0]
        if data is None and out is None:
            return in_shapes, out_shapes
        if data is not None and out is not None and len(data) != len(out):
            raise MXNetError('transpose: input has %d dimensions but output %d'
                             % (len(data), len(out)))
        if data is None and not self.p.axes:     # MXNet indexes by the unknown rank and fails
            raise MXNetError('transpose: reversing the axes needs the shape of data, got only the'
                             ' output shape %s' % (tuple(out),))
        ndim = len(data if data is not None else out)
        perm = self._perm(ndim)
        if out is not None:
            back = [0] * ndim
            for i, a in enumerate(perm):
                back[a] = out[i]
            data = merge_shape('transpose', 'data', data, tuple(back))
        out = merge_shape('transpose', 'output', out, tuple(data[a] for a in perm))
        return [data], [out]

    def forward(self, octx, inputs, aux):
        return [octx.xp.ascontiguousarray(inputs[0].transpose(self._perm(inputs[0].ndim)))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        perm = self._perm(out_grads[0].ndim)
        return [out_grads[0].transpose(tuple(int(a) for a in np.argsort(perm)))]


@register
class SwapAxis(ShapeOnly):
    """Swap two axes."""
    op_name = 'SwapAxis'
    aliases = ('swapaxes',)
    params = {'dim1': Param('int', 0), 'dim2': Param('int', 0)}

    def _perm(self, ndim):
        a = norm_axis('SwapAxis', self.p.dim1, ndim, 'dim1')
        b = norm_axis('SwapAxis', self.p.dim2, ndim, 'dim2')
        perm = list(range(ndim))
        perm[a], perm[b] = perm[b], perm[a]
        return perm

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:
            return in_shapes, out_shapes
        out = tuple(data[a] for a in self._perm(len(data)))
        return in_shapes, [merge_shape('SwapAxis', 'output', out_shapes[0], out)]

    def forward(self, octx, inputs, aux):
        return [octx.xp.ascontiguousarray(inputs[0].transpose(self._perm(inputs[0].ndim)))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [out_grads[0].transpose(self._perm(out_grads[0].ndim))]


@register
class ExpandDims(ShapeOnly):
    """Insert an axis of size 1 at ``axis`` (in [-ndim-1, ndim])."""
    op_name = 'expand_dims'
    params = {'axis': Param('int')}

    def _axis(self, in_ndim):
        return norm_axis('expand_dims', self.p.axis, in_ndim + 1)

    def infer_shape(self, in_shapes, out_shapes):
        data, out = in_shapes[0], out_shapes[0]
        if data is None and out is None:
            return in_shapes, out_shapes
        ndim = len(data) if data is not None else len(out) - 1
        ax = self._axis(ndim)
        src = data if data is not None else (0,) * ndim
        out = merge_shape('expand_dims', 'output', out, tuple(src[:ax]) + (1,) + tuple(src[ax:]))
        data = merge_shape('expand_dims', 'data', data, tuple(out[:ax]) + tuple(out[ax + 1:]))
        return [data], [out]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        return [octx.xp.expand_dims(x, self._axis(x.ndim)).copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        dy = out_grads[0]
        return [dy.squeeze(axis=self._axis(dy.ndim - 1))]


@register
class Squeeze(ShapeOnly):
    """Remove axes of size 1 (all of them, or those in ``axis``)."""
    op_name = 'squeeze'
    params = {'axis': Param('shape?', None)}

    def _out(self, shape):
        ndim = len(shape)
        if self.p.axis is None:
            drop = [i for i, d in enumerate(shape) if d == 1]
        else:
            drop = [norm_axis('squeeze', a, ndim) for a in self.p.axis]
            if len(set(drop)) != len(drop):
                raise MXNetError('squeeze: duplicate value in axis %s' % (self.p.axis,))
            bad = [a for a in drop if shape[a] != 1]
            if bad:
                raise MXNetError('squeeze: cannot squeeze axis %d of size %d (shape %s)'
                                 % (bad[0], shape[bad[0]], tuple(shape)))
        out = tuple(d for i, d in enumerate(shape) if i not in drop)
        return out or (1,)

    def infer_shape(self, in_shapes, out_shapes):
        if not is_known(in_shapes[0]):
            return in_shapes, out_shapes
        return in_shapes, [merge_shape('squeeze', 'output', out_shapes[0],
                                       self._out(in_shapes[0]))]

    def forward(self, octx, inputs, aux):
        save_shape(octx, inputs[0])
        return [inputs[0].reshape(self._out(inputs[0].shape)).copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [out_grads[0].reshape(saved_shape(octx, inputs)[0])]


@register
class ShapeArray(Operator):
    """The shape of the input as a 1-D int64 array."""
    op_name = 'shape_array'
    backward_uses = ()

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        # an unknown shape: a 1-D output of unknown length, as MXNet's
        out = (0,) if data is None else (len(data),)
        return in_shapes, [merge_shape('shape_array', 'output', out_shapes[0], out)]

    def infer_type(self, in_types, out_types):
        return list(in_types), ['int64']

    def forward(self, octx, inputs, aux):
        return [octx.xp.asarray(inputs[0].shape, dtype=np.int64).reshape(-1)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [None]


@register
class SizeArray(ShapeArray):
    """The number of elements of the input as a 1-element int64 array."""
    op_name = 'size_array'

    def infer_shape(self, in_shapes, out_shapes):
        return in_shapes, [merge_shape('size_array', 'output', out_shapes[0], (1,))]

    def forward(self, octx, inputs, aux):
        return [octx.xp.asarray([inputs[0].size], dtype=np.int64)]


_CAST_TYPES = ('bool', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8')


@register
class Cast(Operator):
    """Convert to ``dtype``; the gradient is cast back to the input's dtype."""
    op_name = 'Cast'
    aliases = ('cast',)
    params = {'dtype': Param('dtype')}
    mirror_cheap = True
    backward_uses = ()

    def setup(self):
        if self.p.dtype not in _CAST_TYPES:
            raise MXNetError('Cast: invalid dtype %r; expected one of %s'
                             % (self.p.dtype, list(_CAST_TYPES)))

    def infer_type(self, in_types, out_types):
        return list(in_types), [self.p.dtype]

    def forward(self, octx, inputs, aux):
        save_shape(octx, inputs[0])
        return [inputs[0].astype(self.p.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [out_grads[0].astype(saved_shape(octx, inputs)[1])]

