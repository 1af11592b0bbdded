"""The colour augmentations of the ``image`` namespace on HWC images: random_brightness,
random_contrast, random_saturation, random_hue, random_color_jitter, adjust_lighting and
random_lighting, with MXNet's formulas (its saturation uses the blue channel's weighted value as
the grey level, and hue goes through HLS) in float32 and OpenCV-style saturation for integer
images. As MXNet registers them, their gradient is the head gradient passed through."""
import numpy as np

from ..base import MXNetError
from .base import Param, register
from .image_ops import HWCAugment, check_image

_GREY = np.array([0.299, 0.587, 0.114], dtype=np.float32)
_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], dtype=np.float32)
_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def image_cast(xp, values, dtype):
    """MXNet's image ``saturate_cast``: uint8 clipped to [0, 255] then truncated, other types
    converted as C casts do (truncation toward zero for integers)."""
    dtype = np.dtype(dtype)
    if dtype == np.uint8:
        return xp.clip(values, 0, 255).astype(np.uint8)
    if dtype.kind in 'ui':
        return xp.trunc(values).astype(dtype)
    return values.astype(dtype, copy=False)


def brightness(xp, x, alpha):
    return x * np.float32(alpha)


def contrast(xp, x, alpha):
    if x.shape[2] > 1:
        grey = (x[..., :3].astype(np.float64) * xp.asarray(_GREY, dtype=np.float64)).sum()
    else:
        grey = x.astype(np.float64).sum()
    mean = np.float32(float(grey) / (x.shape[0] * x.shape[1]))
    return x * np.float32(alpha) + (1 - np.float32(alpha)) * mean


def saturation(xp, x, alpha):
    if x.shape[2] == 1:
        return x
    grey = x[..., 2:3] * _GREY[2] * (1 - np.float32(alpha))
    return grey + x * np.float32(alpha)


def _to_hls(xp, rgb):
    r, g, b = (rgb[..., i] / np.float32(255) for i in range(3))
    vmax = xp.maximum(xp.maximum(r, g), b)
    vmin = xp.minimum(xp.minimum(r, g), b)
    diff = vmax - vmin
    light = (vmax + vmin) * np.float32(0.5)
    coloured = diff > np.finfo(np.float32).eps
    safe = xp.where(coloured, diff, 1)
    sat = xp.where(light < 0.5, safe / xp.where(coloured, vmax + vmin, 1),
                   safe / xp.where(coloured, 2 - vmax - vmin, 1))
    scale = np.float32(60) / safe
    hue = xp.where(vmax == r, (g - b) * scale,
                   xp.where(vmax == g, (b - r) * scale + 120, (r - g) * scale + 240))
    hue = xp.where(hue < 0, hue + 360, hue)
    return xp.where(coloured, hue, 0), light, xp.where(coloured, sat, 0)


def _to_rgb(xp, hue, light, sat):
    p2 = xp.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    p1 = 2 * light - p2
    h = hue * (np.float32(1) / np.float32(60))
    h = h - 6 * xp.floor(h / 6)
    sector = xp.minimum(h.astype(np.int64), 5)
    frac = h - sector
    table = xp.stack([p2, p1, p1 + (p2 - p1) * (1 - frac), p1 + (p2 - p1) * frac], axis=-1)
    pick = xp.asarray(_SECTORS)[sector]                   # (..., 3): b, g, r columns
    bgr = xp.take_along_axis(table, pick, axis=-1)
    rgb = bgr[..., ::-1]
    grey = light[..., None]
    return xp.where((sat != 0)[..., None], rgb, grey) * np.float32(255)


def hue(xp, x, alpha):
    if x.shape[2] == 1:
        return x
    h, light, sat = _to_hls(xp, x[..., :3].astype(np.float32))
    return _to_rgb(xp, h + np.float32(alpha) * 360, light, sat)


def lighting(xp, x, alpha):
    if x.shape[2] == 1:
        return x
    shift = _EIG @ np.asarray(alpha, dtype=np.float32)
    return x.astype(np.float32) + xp.asarray(shift)


class _ColorOp(HWCAugment):
    """An HWC colour augmentation computed in float32."""

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        check_image(self.op_name, x.shape)
        return [image_cast(octx.xp, self.apply(octx, x.astype(np.float32)), x.dtype)]


class _RandomFactor(_ColorOp):
    """A factor drawn uniformly from [min_factor, max_factor]."""
    params = {'min_factor': Param('float'), 'max_factor': Param('float')}
    adjust = None

    def setup(self):
        for name in ('min_factor', 'max_factor'):
            if getattr(self.p, name) < 0:
                raise MXNetError('%s: %s must be >= 0, got %s'
                                 % (self.op_name, name, getattr(self.p, name)))

    def apply(self, octx, x):
        alpha = float(octx.rng.uniform(self.p.min_factor, self.p.max_factor))
        return type(self).adjust(octx.xp, x, alpha)


def _random_op(name, fn, doc):
    return register(type(name, (_RandomFactor,), {'op_name': name, 'adjust': staticmethod(fn),
                                                  '__doc__': doc}))


_random_op('_image_random_brightness', brightness, 'Scale pixel values by a random factor.')
_random_op('_image_random_contrast', contrast,
           'Blend with the mean grey level by a random factor.')
_random_op('_image_random_saturation', saturation,
           'Blend with a grey level by a random factor (MXNet\'s formula).')
_random_op('_image_random_hue', hue, 'Rotate the hue by a random fraction of a turn.')


@register
class RandomColorJitter(_ColorOp):
    """Brightness, contrast, saturation and hue jitter (each when its amount is > 0) in a random
    order, with factors 1 +- amount (hue: +- amount)."""
    op_name = '_image_random_color_jitter'
    params = {'brightness': Param('float'), 'contrast': Param('float'),
              'saturation': Param('float'), 'hue': Param('float')}

    def apply(self, octx, x):
        rng, xp = octx.rng, octx.xp
        steps = ((self.p.brightness, brightness, 1.0), (self.p.contrast, contrast, 1.0),
                 (self.p.saturation, saturation, 1.0), (self.p.hue, hue, 0.0))
        for index in rng.permutation(4):
            amount, fn, base = steps[int(index)]
            if amount > 0:
                x = fn(xp, x, base + float(rng.uniform(-amount, amount)))
        return x


@register
class AdjustLighting(_ColorOp):
    """AlexNet-style PCA lighting: add the eigenvector combination weighted by ``alpha``."""
    op_name = '_image_adjust_lighting'
    params = {'alpha': Param('floats')}

    def apply(self, octx, x):
        if len(self.p.alpha) != 3:
            raise MXNetError('adjust_lighting: alpha must have 3 values, got %s' % (self.p.alpha,))
        return lighting(octx.xp, x, self.p.alpha)


@register
class RandomLighting(_ColorOp):
    """PCA lighting with alphas drawn from N(0, alpha_std)."""
    op_name = '_image_random_lighting'
    params = {'alpha_std': Param('float', 0.05)}

    def apply(self, octx, x):
        alphas = [float(octx.rng.normal(0, self.p.alpha_std)) for _ in range(3)]
        return lighting(octx.xp, x, alphas)
