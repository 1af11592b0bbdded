"""The ``image`` operators (``mx.nd.image`` / ``mx.sym.image``): to_tensor, normalize, flips,
random flips, crop and resize on HWC images (or NHWC batches), with MXNet's shapes and checks.

Gradients: normalize, crop, to_tensor and resize have their true gradients (MXNet registers a
plain copy of the head gradient for to_tensor and resize, which cannot fit an input of another
shape); the flips pass the head gradient through unchanged, as MXNet's registered ``_copy``
gradient does. Integer images are rounded and saturated like OpenCV's ``saturate_cast``."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from . import resample


def saturate(xp, values, dtype):
    """``values`` in ``dtype``: rounded and clipped for integer dtypes."""
    dtype = np.dtype(dtype)
    if dtype.kind in 'ui':
        info = np.iinfo(dtype)
        return xp.clip(xp.rint(values), info.min, info.max).astype(dtype)
    return values.astype(dtype, copy=False)


def check_image(op, shape):
    """MXNet's ImageShape: (height, width, channels) with 1 or 3 channels."""
    if len(shape) != 3 or shape[2] not in (1, 3):
        raise MXNetError('%s: input image must have shape (height, width, channels) with 1 or 3 '
                         'channels, got %s' % (op, tuple(shape)))


def _hw_axes(op, shape):
    """The (row, column) axes of an HWC image or an NHWC batch."""
    if len(shape) not in (3, 4):
        raise MXNetError('%s: input image must have shape (height, width, channels) or (N, height, '
                         'width, channels), got %s' % (op, tuple(shape)))
    return (0, 1) if len(shape) == 3 else (1, 2)


@register
class ToTensor(Operator):
    """HWC (or NHWC) image -> CHW (NCHW) float32 divided by 255."""
    op_name = '_image_to_tensor'
    backward_uses = ()

    def infer_shape(self, in_shapes, out_shapes):
        s = in_shapes[0]
        if s is None or 0 in s:     # as MXNet: from a fully known image only
            return in_shapes, out_shapes
        _hw_axes(self.op_name, s)
        out = (s[2], s[0], s[1]) if len(s) == 3 else (s[0], s[3], s[1], s[2])
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def infer_type(self, in_types, out_types):
        return in_types, ['float32']

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        _hw_axes(self.op_name, x.shape)
        octx.saved['in_dtype'] = x.dtype
        order = (2, 0, 1) if x.ndim == 3 else (0, 3, 1, 2)
        return [octx.xp.ascontiguousarray(x.transpose(order)).astype(np.float32) / np.float32(255)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        dy = out_grads[0]
        order = (1, 2, 0) if dy.ndim == 3 else (0, 2, 3, 1)
        grad = dy.transpose(order) / np.float32(255)
        return [octx.xp.ascontiguousarray(grad).astype(octx.saved['in_dtype'], copy=False)]


@register
class Normalize(Operator):
    """``(x - mean[c]) / std[c]`` over the channels of a CHW (NCHW) tensor with 1 or 3 channels;
    ``mean``/``std`` have one value or one per channel."""
    op_name = '_image_normalize'
    params = {'mean': Param('floats', (0.0, 0.0, 0.0, 0.0)),
              'std': Param('floats', (1.0, 1.0, 1.0, 1.0))}
    backward_uses = ()

    def _stats(self, shape):
        if len(shape) not in (3, 4):
            raise MXNetError('_image_normalize: input tensor must have shape (channels, height, '
                             'width) or (N, channels, height, width), got %s' % (tuple(shape),))
        chans = shape[0] if len(shape) == 3 else shape[1]
        if chans not in (1, 3):
            raise MXNetError('_image_normalize: the channel dimension must have 1 or 3 elements, '
                             'got shape %s' % (tuple(shape),))
        for name, vals in (('mean', self.p.mean), ('std', self.p.std)):
            if len(vals) not in (1, chans):
                raise MXNetError('_image_normalize: invalid %s %s for input with shape %s: it '
                                 'must have 1 or %d elements' % (name, vals, tuple(shape), chans))
        view = (-1, 1, 1)
        mean = np.broadcast_to(np.float32(self.p.mean), (chans,)).reshape(view)
        std = np.broadcast_to(np.float32(self.p.std), (chans,)).reshape(view)
        return mean, std

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: forwards only; the rank and the channel count must be known
        shape = in_shapes[0]
        if shape is None:
            raise MXNetError('_image_normalize: the shape of data must be known')
        self._stats(shape)
        return [shape], [shape]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        mean, std = self._stats(x.shape)
        xp = octx.xp
        return [((x - xp.asarray(mean, x.dtype)) / xp.asarray(std, x.dtype)).astype(x.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        dy = out_grads[0]
        _, std = self._stats(dy.shape)
        return [(dy / octx.xp.asarray(std, dy.dtype)).astype(dy.dtype)]


class HWCAugment(Operator):
    """Base of the augmentations of one HWC image (1 or 3 channels) into the same shape; their
    gradient is the head gradient passed through, as MXNet registers it."""
    backward_uses = ()

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: forwards only; an HWC shape with a known channel count (1 or 3) is needed
        shape = in_shapes[0]
        if shape is None:
            raise MXNetError('%s: input image must have shape (height, width, channels), got an '
                             'unknown shape' % self.op_name)
        check_image(self.op_name, shape)
        return [shape], [shape]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [out_grads[0]]


class _Flip(HWCAugment):
    """Flip an HWC image along ``axis``."""
    axis = 1
    randomized = False

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        check_image(self.op_name, x.shape)
        if self.randomized and octx.rng.random_sample() < 0.5:
            return [x.copy()]
        return [octx.xp.flip(x, axis=self.axis).copy()]


@register
class FlipLeftRight(_Flip):
    """Mirror an HWC image horizontally."""
    op_name = '_image_flip_left_right'


@register
class FlipTopBottom(_Flip):
    """Mirror an HWC image vertically."""
    op_name = '_image_flip_top_bottom'
    axis = 0


@register
class RandomFlipLeftRight(_Flip):
    """Mirror an HWC image horizontally with probability 1/2."""
    op_name = '_image_random_flip_left_right'
    randomized = True


@register
class RandomFlipTopBottom(_Flip):
    """Mirror an HWC image vertically with probability 1/2."""
    op_name = '_image_random_flip_top_bottom'
    axis = 0
    randomized = True


@register
class ImageCrop(Operator):
    """The ``height`` x ``width`` window at column ``x``, row ``y`` of an HWC image (NHWC batch)."""
    op_name = '_image_crop'
    params = {'x': Param('int'), 'y': Param('int'), 'width': Param('int'), 'height': Param('int')}
    backward_uses = ()

    def _window(self, shape):
        rows, cols = _hw_axes(self.op_name, shape)
        p = self.p
        if p.width <= 0 or p.height <= 0 or p.x < 0 or p.y < 0 or \
                p.x + p.width > shape[cols] or p.y + p.height > shape[rows]:
            raise MXNetError('_image_crop: the window x=%d y=%d width=%d height=%d does not fit '
                             'an image of shape %s' % (p.x, p.y, p.width, p.height, tuple(shape)))
        index = [slice(None)] * len(shape)
        index[rows], index[cols] = slice(p.y, p.y + p.height), slice(p.x, p.x + p.width)
        return tuple(index)

    def infer_shape(self, in_shapes, out_shapes):
        shape = in_shapes[0]
        if shape is None or (len(shape) in (3, 4) and shape[-1] not in (1, 3)):
            raise MXNetError('_image_crop: expects an HWC image or NHWC batch with 1 or 3 channels,'
                             ' got %s' % ('an unknown shape' if shape is None else tuple(shape),))
        self._window(shape)
        out = list(shape)
        rows, cols = _hw_axes(self.op_name, shape)
        out[rows], out[cols] = self.p.height, self.p.width
        return in_shapes, [merge_shape(self.op_name, 'output', tuple(out), out_shapes[0])]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        octx.saved['in_meta'] = (tuple(x.shape), x.dtype)
        return [x[self._window(x.shape)].copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape, dtype = octx.saved['in_meta']
        grad = octx.xp.zeros(shape, dtype=out_grads[0].dtype)
        grad[self._window(shape)] = out_grads[0]
        return [grad]


@register
class ImageResize(Operator):
    """Resize an HWC image (NHWC batch) to ``size`` = (width, height), or to a square / the
    short edge (``keep_ratio``) for one size, with OpenCV's ``interp`` (0 nearest, 1 bilinear,
    2 bicubic, 3 area, 4 lanczos4)."""
    op_name = '_image_resize'
    params = {'size': Param('shape', ()), 'keep_ratio': Param('bool', False),
              'interp': Param('int', 1)}
    backward_uses = ()

    def _target(self, h, w):
        size = self.p.size or ()
        if len(size) not in (1, 2) or min(size) <= 0:
            raise MXNetError('_image_resize: size must be one or two positive sizes, got %s'
                             % (size,))
        if len(size) == 2:
            return size[1], size[0]
        if not self.p.keep_ratio:
            return size[0], size[0]
        if h > w:
            return int(h * size[0] / w), size[0]
        return size[0], int(w * size[0] / h)

    def infer_shape(self, in_shapes, out_shapes):
        shape = in_shapes[0]
        if shape is None:   # MXNet checks the rank (3 or 4) of an unknown shape, and fails
            raise MXNetError('_image_resize: the shape of the image must be known')
        rows, cols = _hw_axes(self.op_name, shape)
        out = list(shape)
        out[rows], out[cols] = self._target(shape[rows], shape[cols])
        return in_shapes, [merge_shape(self.op_name, 'output', tuple(out), out_shapes[0])]

    def _matrices(self, shape):
        rows, cols = _hw_axes(self.op_name, shape)
        oh, ow = self._target(shape[rows], shape[cols])
        return (resample.opencv_matrix(oh, shape[rows], self.p.interp),
                resample.opencv_matrix(ow, shape[cols], self.p.interp), (rows, cols))

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        if x.dtype == np.float16:
            raise MXNetError('_image_resize does not support float16 images')
        mat_h, mat_w, axes = self._matrices(x.shape)
        octx.saved['in_meta'] = (tuple(x.shape), x.dtype)
        work = x if x.dtype.kind == 'f' else x.astype(np.float64)
        return [saturate(octx.xp, resample.apply(octx.xp, work, mat_h, mat_w, axes), x.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape, dtype = octx.saved['in_meta']
        mat_h, mat_w, axes = self._matrices(shape)
        dy = out_grads[0]
        return [resample.apply(octx.xp, dy, mat_h.T, mat_w.T, axes).astype(dtype, copy=False)]
