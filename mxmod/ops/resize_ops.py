"""contrib.BilinearResize2D and contrib.AdaptiveAvgPooling2D on NCHW data: both are separable
linear maps of the two spatial axes (``resample``), so the gradient is the transposed map."""
from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from . import resample

_MODES = ('size', 'odd_scale', 'like', 'to_even_down', 'to_even_up', 'to_odd_down', 'to_odd_up')


def _check_4d(op, shape):
    if shape is not None and len(shape) != 4:
        raise MXNetError('%s: data must be 4-D (batch, channel, height, width), got %s'
                         % (op, tuple(shape)))


class _SpatialMap(Operator):
    """An (N, C, H, W) -> (N, C, H', W') separable linear map given by ``matrices(shape)``."""
    backward_uses = ()

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        _check_4d(self.op_name, x.shape)
        mat_h, mat_w = self.matrices(x.shape, [a.shape for a in inputs[1:]])
        octx.saved['in_meta'] = [(tuple(a.shape), a.dtype) for a in inputs]
        return [resample.apply(octx.xp, x, mat_h, mat_w, (2, 3))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        meta = octx.saved['in_meta']
        mat_h, mat_w = self.matrices(meta[0][0], [m[0] for m in meta[1:]])
        grad = resample.apply(octx.xp, out_grads[0], mat_h.T, mat_w.T, (2, 3))
        return [grad.astype(meta[0][1], copy=False)] + [octx.xp.zeros(s, d) for s, d in meta[1:]]

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None or 0 in data:   # as MXNet: from a fully known data only
            return in_shapes, out_shapes
        _check_4d(self.op_name, data)
        if any(s is None for s in in_shapes[1:]):
            return in_shapes, out_shapes
        h, w = self.out_size(data, list(in_shapes[1:]))
        return in_shapes, [merge_shape(self.op_name, 'output', tuple(data[:2]) + (h, w),
                                       out_shapes[0])]


@register
class BilinearResize2D(_SpatialMap):
    """Bilinear resize to (height, width), to scales, to the size of ``like``, or to the nearest
    even/odd size (``mode``); ``align_corners`` as in MXNet (default True)."""
    op_name = '_contrib_BilinearResize2D'
    params = {'height': Param('int', 1), 'width': Param('int', 1),
              'scale_height': Param('float?', None), 'scale_width': Param('float?', None),
              'mode': Param('str', 'size', _MODES), 'align_corners': Param('bool', True)}

    def list_arguments(self):
        return ['data', 'like'] if self.p.mode == 'like' else ['data']

    def out_size(self, shape, others):
        p, h, w = self.p, shape[2], shape[3]
        if p.mode == 'size':
            if p.scale_height is not None:     # MXNet keys both on scale_height
                return int(p.scale_height * h), int((p.scale_width or 0) * w)
            return p.height, p.width
        if p.mode == 'odd_scale':
            if p.scale_height is None or p.scale_width is None:
                raise MXNetError('BilinearResize2D: mode odd_scale needs scale_height and '
                                 'scale_width')
            return tuple(int(n * s) if n % 2 == 0 else int((n - 1) * s) + 1
                         for n, s in ((h, p.scale_height), (w, p.scale_width)))
        if p.mode == 'like':
            return tuple(others[0][2:4])
        adjust = {'to_even_down': lambda n: n - n % 2, 'to_even_up': lambda n: n + n % 2,
                  'to_odd_down': lambda n: n - (1 - n % 2), 'to_odd_up': lambda n: n + (1 - n % 2)}
        return adjust[p.mode](h), adjust[p.mode](w)

    def matrices(self, shape, others):
        oh, ow = self.out_size(shape, others)
        if oh <= 0 or ow <= 0:
            raise MXNetError('BilinearResize2D: the output size (%d, %d) must be positive'
                             % (oh, ow))
        return (resample.bilinear_resize_matrix(oh, shape[2], self.p.align_corners),
                resample.bilinear_resize_matrix(ow, shape[3], self.p.align_corners))


@register
class AdaptiveAvgPooling2D(_SpatialMap):
    """Average pooling to ``output_size`` (one size for both axes, (height, width), or 1x1 when
    empty) with bins floor(i * in / out) .. ceil((i + 1) * in / out)."""
    op_name = '_contrib_AdaptiveAvgPooling2D'
    params = {'output_size': Param('shape', ())}

    def out_size(self, shape, others):
        size = self.p.output_size or ()
        if len(size) > 2:
            raise MXNetError('AdaptiveAvgPooling2D: output_size must have 1 or 2 entries, got %s'
                             % (size,))
        if not size:
            return 1, 1
        return (size[0], size[0]) if len(size) == 1 else tuple(size)

    def matrices(self, shape, others):
        oh, ow = self.out_size(shape, others)
        return (resample.adaptive_pool_matrix(oh, shape[2]),
                resample.adaptive_pool_matrix(ow, shape[3]))
