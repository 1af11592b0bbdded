"""im2col and col2im as operators: sliding blocks of an (N, C, *spatial) image as columns
(N, C*prod(kernel), L) and their sum back into an image. Each is the other's gradient."""
import math

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from . import convutil


def _sliding_params():
    return {'kernel': Param('shape'), 'stride': Param('shape', ()),
            'dilate': Param('shape', ()), 'pad': Param('shape', ())}


class _Sliding(Operator):
    """Kernel/stride/dilate/pad of 1 to 3 spatial axes, as for Convolution."""
    backward_uses = ()

    def setup(self):
        nd = len(self.p.kernel or ())
        if not 1 <= nd <= 3 or min(self.p.kernel) <= 0:
            raise MXNetError('%s: kernel must have 1 to 3 positive sizes, got %s'
                             % (self.op_name, self.p.kernel))
        self.stride = convutil.expand(self.op_name, 'stride', self.p.stride, nd, 1)
        self.dilate = convutil.expand(self.op_name, 'dilate', self.p.dilate, nd, 1)
        self.pad = convutil.expand(self.op_name, 'pad', self.p.pad, nd, 0)
        if min(self.stride) <= 0 or min(self.dilate) <= 0:
            raise MXNetError('%s: stride %s and dilate %s must be positive'
                             % (self.op_name, self.stride, self.dilate))

    def out_size(self, spatial):
        """Number of sliding positions along each spatial axis."""
        out = []
        for size, k, s, d, p in zip(spatial, self.p.kernel, self.stride, self.dilate, self.pad):
            span = d * (k - 1) + 1
            if span > size + 2 * p:
                raise MXNetError('%s: the dilated kernel %s exceeds the padded input %s'
                                 % (self.op_name, self.p.kernel, tuple(spatial)))
            out.append((size + 2 * p - span) // s + 1)
        return tuple(out)

    def columns(self, xp, image):
        """(N, C, *spatial) -> (N, C*K, L)."""
        n, c = image.shape[:2]
        out = self.out_size(image.shape[2:])
        padded = convutil.pad_spatial(xp, image, self.pad)
        view = convutil.window_view(xp, padded, self.p.kernel, self.stride, self.dilate, out)
        cols = xp.empty(view.shape, dtype=image.dtype)
        cols[...] = view
        return cols.reshape(n, -1, math.prod(out))

    def image(self, xp, cols, spatial):
        """(N, C*K, L) -> (N, C, *spatial), overlapping entries summed."""
        n = cols.shape[0]
        k = math.prod(self.p.kernel)
        out = self.out_size(spatial)
        c = cols.shape[1] // k
        batch_last = cols.reshape((n, c, k) + out).transpose((1, 2) + tuple(range(3, 3 + len(out)))
                                                             + (0,))
        padded = (n, c) + tuple(s + 2 * p for s, p in zip(spatial, self.pad))
        return convutil.col2im(xp, batch_last, padded, self.p.kernel, self.stride, self.dilate,
                               self.pad)


@register
class Im2col(_Sliding):
    """Columns of the sliding blocks of ``data`` (N, C, *spatial): (N, C*prod(kernel), L)."""
    op_name = 'im2col'
    params = _sliding_params()

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None or 0 in data:
            return in_shapes, out_shapes
        if len(data) != len(self.p.kernel) + 2:
            raise MXNetError('im2col: data of shape %s does not match kernel %s'
                             % (tuple(data), self.p.kernel))
        out = (data[0], data[1] * math.prod(self.p.kernel),
               math.prod(self.out_size(data[2:])))
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def forward(self, octx, inputs, aux):
        octx.saved['spatial'] = tuple(inputs[0].shape[2:])
        return [self.columns(octx.xp, inputs[0])]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [self.image(octx.xp, out_grads[0], octx.saved['spatial'])]


@register
class Col2im(_Sliding):
    """Sum columns (N, C*prod(kernel), L) back into an image (N, C, *output_size)."""
    op_name = 'col2im'
    params = dict(output_size=Param('shape'), **_sliding_params())

    def setup(self):
        super().setup()
        if len(self.p.output_size) != len(self.p.kernel):
            raise MXNetError('col2im: output_size %s must have as many dimensions as kernel %s'
                             % (self.p.output_size, self.p.kernel))

    def _check(self, cols):
        k = math.prod(self.p.kernel)
        blocks = math.prod(self.out_size(self.p.output_size))
        if len(cols) != 3 or (cols[1] and cols[1] % k) or (cols[2] and cols[2] != blocks):
            raise MXNetError('col2im: columns must have shape (N, C*%d, %d), got %s'
                             % (k, blocks, tuple(cols)))
        return k

    def infer_shape(self, in_shapes, out_shapes):
        cols = in_shapes[0]
        if cols is None or 0 in cols:
            return in_shapes, out_shapes
        k = self._check(cols)
        out = (cols[0], cols[1] // k) + tuple(self.p.output_size)
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def forward(self, octx, inputs, aux):
        self._check(inputs[0].shape)
        return [self.image(octx.xp, inputs[0], tuple(self.p.output_size))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [self.columns(octx.xp, out_grads[0])]
