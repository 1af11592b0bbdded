"""Array layout operators: _eye, _split_v2, ravel_multi_index / unravel_index and
depth_to_space / space_to_depth, with MXNet's shapes, checks and gradients."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from .shape import ShapeOnly, norm_axis


@register
class Eye(Operator):
    """A 2-D array with ones on diagonal ``k`` (N rows, M columns; M=0 means N)."""
    op_name = '_eye'
    arguments = ()
    backward_uses = ()
    params = {'N': Param('int'), 'M': Param('int', 0), 'k': Param('int', 0), 'ctx': Param('str', ''),
              'dtype': Param('dtype', 'float32', ('float16', 'float32', 'float64', 'int32',
                                                  'int64', 'int8', 'uint8'))}

    def _shape(self):
        return (self.p.N, self.p.M or self.p.N)

    def infer_shape(self, in_shapes, out_shapes):
        return in_shapes, [self._shape()]

    def infer_type(self, in_types, out_types):
        return in_types, [self.p.dtype]

    def forward(self, octx, inputs, aux):
        rows, cols = self._shape()
        return [octx.xp.eye(rows, cols, k=self.p.k, dtype=self.p.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return []


@register
class SplitV2(ShapeOnly):
    """Split along ``axis`` at ``indices`` (each output starts at one index and ends at the
    next, the last at the end of the axis) or into ``sections`` equal parts; with
    ``squeeze_axis`` the parts (each of length one) lose the axis."""
    op_name = '_split_v2'
    params = {'indices': Param('shape'), 'axis': Param('int', 1),
              'squeeze_axis': Param('bool', False), 'sections': Param('int', 0)}

    def _count(self):
        return self.p.sections if self.p.sections > 0 else len(self.p.indices)

    def list_outputs(self):
        return ['output%d' % i for i in range(self._count())]

    def _bounds(self, size):
        if self.p.sections > 0:
            if size % self.p.sections:
                raise MXNetError('_split_v2: axis of length %d cannot be split into %d equal '
                                 'sections' % (size, self.p.sections))
            step = size // self.p.sections
            starts = [i * step for i in range(self.p.sections)]
        else:
            starts = list(self.p.indices)
        ends = starts[1:] + [size]
        for start, end in zip(starts, ends):
            if not 0 <= start <= end <= size:
                raise MXNetError('_split_v2: indices %s must be increasing and within the axis '
                                 'length %d' % (tuple(starts), size))
            if self.p.squeeze_axis and end - start != 1:
                raise MXNetError('_split_v2: squeeze_axis=True needs every part to have length 1, '
                                 'got indices %s for length %d' % (tuple(starts), size))
        return starts, ends

    def _part_shape(self, shape, axis, length):
        rest = () if self.p.squeeze_axis else (length,)
        return tuple(shape[:axis]) + rest + tuple(shape[axis + 1:])

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None or not data:
            return in_shapes, out_shapes
        axis = norm_axis(self.op_name, self.p.axis, len(data))
        if not data[axis]:      # MXNet checks the split points against it (-1) and fails
            raise MXNetError('%s: the size of axis %d of data %s must be known to split it'
                             % (self.op_name, axis, tuple(data)))
        starts, ends = self._bounds(data[axis])
        outs = [merge_shape(self.op_name, 'output%d' % i,
                            self._part_shape(data, axis, e - s), out_shapes[i])
                for i, (s, e) in enumerate(zip(starts, ends))]
        return in_shapes, outs

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        axis = norm_axis(self.op_name, self.p.axis, x.ndim)
        octx.saved['in_meta'] = (tuple(x.shape), x.dtype)
        starts, ends = self._bounds(x.shape[axis])
        lead = (slice(None),) * axis
        outs = [x[lead + (slice(s, e),)] for s, e in zip(starts, ends)]
        if self.p.squeeze_axis:
            outs = [o.squeeze(axis) for o in outs]
        return [octx.xp.ascontiguousarray(o) for o in outs]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        shape, dtype = octx.saved['in_meta']
        axis = norm_axis(self.op_name, self.p.axis, len(shape))
        grad = xp.zeros(shape, dtype=dtype)
        lead = (slice(None),) * axis
        for g, s, e in zip(out_grads, *self._bounds(shape[axis])):
            if g is not None:
                grad[lead + (slice(s, e),)] = g.reshape(shape[:axis] + (e - s,) + shape[axis + 1:])
        return [grad]


def _strides(shape):
    """Row-major element strides of ``shape`` (its first entry may be -1: unknown)."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


class _Ravel(Operator):
    """Shared parameter and gradient of ravel_multi_index / unravel_index (zero gradient)."""
    params = {'shape': Param('shape?', None)}
    backward_uses = ()

    def setup(self):
        if not self.p.shape:
            raise MXNetError('%s: the shape parameter is required' % self.op_name)

    def infer_type(self, in_types, out_types):
        dtype = in_types[0] or out_types[0]
        return [dtype], [dtype]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape, dtype = octx.saved['in_meta']
        return [octx.xp.zeros(shape, dtype=dtype)]


@register
class RavelMultiIndex(_Ravel):
    """Flat indices of the coordinates in rows of ``data`` (ndim, ...) for an array of
    ``shape`` (the first dimension may be -1)."""
    op_name = '_ravel_multi_index'
    aliases = ('ravel_multi_index',)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: data (len(shape), N) <-> output (N,), either way
        data, out = in_shapes[0], out_shapes[0]
        if data is None:
            if out is None:
                return in_shapes, out_shapes
            return [(len(self.p.shape), out[0])], out_shapes
        if len(data) != 2 or data[0] != len(self.p.shape):
            raise MXNetError('ravel_multi_index: data must have shape (%d, N) for shape %s, '
                             'got %s' % (len(self.p.shape), self.p.shape, tuple(data)))
        return in_shapes, [merge_shape(self.op_name, 'output', (data[1],), out)]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        octx.saved['in_meta'] = (tuple(x.shape), x.dtype)
        strides = octx.xp.asarray(np.array(_strides(self.p.shape), dtype=np.int64))
        coords = x.astype(np.int64).reshape(len(self.p.shape), -1)
        flat = (coords * strides[:, None]).sum(axis=0)
        return [flat.reshape(x.shape[1:]).astype(x.dtype)]


@register
class UnravelIndex(_Ravel):
    """Coordinates (ndim, ...) of the flat indices ``data`` in an array of ``shape`` (the first
    coordinate is what remains after the others, so -1 as first dimension works)."""
    op_name = '_unravel_index'
    aliases = ('unravel_index',)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: data (N,) <-> output (len(shape), N), either way (MXNet reads only the
        # first dim of data)
        data, out = in_shapes[0], out_shapes[0]
        if data is None:
            if out is None:
                return in_shapes, out_shapes
            if len(out) != 2 or out[0] != len(self.p.shape):
                raise MXNetError('unravel_index: the output must have shape (%d, N), got %s'
                                 % (len(self.p.shape), tuple(out)))
            return [(out[1],)], out_shapes
        out = (len(self.p.shape), data[0])
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        octx.saved['in_meta'] = (tuple(x.shape), x.dtype)
        rest = x.astype(np.int64)
        coords = []
        for dim in reversed(self.p.shape[1:]):
            coords.append(rest % dim)
            rest = rest // dim
        coords.append(rest)
        return [octx.xp.stack(coords[::-1]).astype(x.dtype)]


def _depth_to_space(x, b):
    n, c, h, w = x.shape
    t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return t.reshape(n, c // (b * b), h * b, w * b)


def _space_to_depth(x, b):
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


class _BlockMove(ShapeOnly):
    """Shared checks of depth_to_space / space_to_depth on 4-D NCHW inputs; each one's gradient
    is the other's forward."""
    params = {'block_size': Param('int')}
    move = inverse = None

    def _check(self, shape):
        block = self.p.block_size
        if len(shape) != 4:
            raise MXNetError('%s requires a 4-D input, got shape %s' % (self.op_name, tuple(shape)))
        if block <= 0:
            raise MXNetError('%s: block_size must be a positive integer, got %d'
                             % (self.op_name, block))
        if any(d == 0 for d in shape):
            raise MXNetError('%s: no dimension of the input may be 0, got shape %s'
                             % (self.op_name, tuple(shape)))
        return block

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: the rank must be known (4), and every size but the batch's (MXNet's
        # arithmetic on an unknown -1 fails there)
        data = in_shapes[0]
        if data is None or len(data) != 4 or not all(data[1:]):
            raise MXNetError('%s requires a 4-D input whose non-batch sizes are known, got %s'
                             % (self.op_name, 'an unknown shape' if data is None
                                else tuple(data)))
        if not data[0]:
            out = self.out_shape((1,) + tuple(data[1:]))
            return in_shapes, [merge_shape(self.op_name, 'output', (0,) + out[1:],
                                           out_shapes[0])]
        out = self.out_shape(tuple(data))
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def forward(self, octx, inputs, aux):
        self.out_shape(inputs[0].shape)
        return [octx.xp.ascontiguousarray(self.move(inputs[0], self.p.block_size))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [octx.xp.ascontiguousarray(self.inverse(out_grads[0], self.p.block_size))]


@register
class DepthToSpace(_BlockMove):
    """(N, C, H, W) -> (N, C/b^2, H*b, W*b): blocks of channels become b x b spatial blocks."""
    op_name = 'depth_to_space'
    move = staticmethod(_depth_to_space)
    inverse = staticmethod(_space_to_depth)

    def out_shape(self, shape):
        b = self._check(shape)
        n, c, h, w = shape
        if c % (b * b):
            raise MXNetError('depth_to_space: the channel dimension %d must be a multiple of '
                             'block_size^2 = %d' % (c, b * b))
        return (n, c // (b * b), h * b, w * b)


@register
class SpaceToDepth(_BlockMove):
    """(N, C, H, W) -> (N, C*b^2, H/b, W/b): b x b spatial blocks become blocks of channels."""
    op_name = 'space_to_depth'
    move = staticmethod(_space_to_depth)
    inverse = staticmethod(_depth_to_space)

    def out_shape(self, shape):
        b = self._check(shape)
        n, c, h, w = shape
        if h % b or w % b:
            raise MXNetError('space_to_depth: height %d and width %d must be multiples of '
                             'block_size %d' % (h, w, b))
        return (n, c * b * b, h // b, w // b)
