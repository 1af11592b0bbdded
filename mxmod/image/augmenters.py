"""Augmenters of ``mx.image`` (callables HWC NDArray -> HWC NDArray) and ``CreateAugmenter``, with
MXNet 1.9.1's classes, parameters and ``dumps()``; random draws use Python's ``random`` (and
numpy's for the PCA lighting) as MXNet's did."""
import json
import random

import numpy as np

from ..base import MXNetError
from ..context import Context
from ..ndarray.ndarray import NDArray, from_xp, to_numpy
from .image import (resize_short, imresize, random_crop, random_size_crop, center_crop,
                    color_normalize, _get_interp_method)

__all__ = ['Augmenter', 'SequentialAug', 'ResizeAug', 'ForceResizeAug', 'RandomCropAug',
           'RandomSizedCropAug', 'CenterCropAug', 'RandomOrderAug', 'BrightnessJitterAug',
           'ContrastJitterAug', 'SaturationJitterAug', 'HueJitterAug', 'ColorJitterAug',
           'LightingAug', 'ColorNormalizeAug', 'RandomGrayAug', 'HorizontalFlipAug', 'CastAug',
           'CreateAugmenter']

_GRAY_COEF = np.array([0.299, 0.587, 0.114], np.float32)


def _np(src):
    return to_numpy(src._data) if isinstance(src, NDArray) else np.asarray(src)


def _nd(arr, like):
    ctx = like.context if isinstance(like, NDArray) else Context('cpu', 0)
    return from_xp(np.ascontiguousarray(arr), Context('cpu', 0)).as_in_context(ctx)


class Augmenter(object):
    """Base class: keeps its keyword arguments for ``dumps()``; subclasses define ``__call__``."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for key, val in self._kwargs.items():
            if isinstance(val, NDArray):
                val = val.asnumpy()
            if isinstance(val, np.ndarray):
                self._kwargs[key] = val.tolist()

    def dumps(self):
        """JSON string ``[class name in lower case, keyword arguments]``."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, src):
        raise NotImplementedError('%s must define __call__' % type(self).__name__)


class SequentialAug(Augmenter):
    """Apply the augmenters ``ts`` in order."""

    def __init__(self, ts):
        super(SequentialAug, self).__init__()
        self.ts = ts

    def dumps(self):
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.ts]]

    def __call__(self, src):
        for aug in self.ts:
            src = aug(src)
        return src


class RandomOrderAug(SequentialAug):
    """Apply the augmenters ``ts`` in a random order."""

    def __call__(self, src):
        random.shuffle(self.ts)
        return super(RandomOrderAug, self).__call__(src)


class ResizeAug(Augmenter):
    """Resize the shorter edge to ``size``."""

    def __init__(self, size, interp=2):
        super(ResizeAug, self).__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(Augmenter):
    """Resize to ``size`` (w, h), ignoring the aspect ratio."""

    def __init__(self, size, interp=2):
        super(ForceResizeAug, self).__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, *self.size, interp=_get_interp_method(self.interp, sizes))


class RandomCropAug(Augmenter):
    """Crop ``size`` (w, h) at a random place."""

    def __init__(self, size, interp=2):
        super(RandomCropAug, self).__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        return random_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """Crop a random area and aspect ratio, resized to ``size`` (see ``random_size_crop``)."""

    def __init__(self, size, area, ratio, interp=2, **kwargs):
        super(RandomSizedCropAug, self).__init__(size=size, area=area, ratio=ratio,
                                                 interp=interp)
        self.size, self.ratio, self.interp = size, ratio, interp
        self.area = kwargs.pop('min_area', area)
        if kwargs:
            raise TypeError('RandomSizedCropAug: unexpected keyword arguments %s'
                            % sorted(kwargs))

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(Augmenter):
    """Crop ``size`` (w, h) from the centre."""

    def __init__(self, size, interp=2):
        super(CenterCropAug, self).__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        return center_crop(src, self.size, self.interp)[0]


class BrightnessJitterAug(Augmenter):
    """Scale by 1 + U(-brightness, brightness) (float images)."""

    def __init__(self, brightness):
        super(BrightnessJitterAug, self).__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        src *= 1.0 + random.uniform(-self.brightness, self.brightness)
        return src


class ContrastJitterAug(Augmenter):
    """Blend with the mean gray level by 1 + U(-contrast, contrast)."""

    def __init__(self, contrast):
        super(ContrastJitterAug, self).__init__(contrast=contrast)
        self.contrast = contrast

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        img = _np(src)
        gray = (3.0 * (1.0 - alpha) / img.size) * float((img * _GRAY_COEF).sum())
        src *= alpha
        src += gray
        return src


class SaturationJitterAug(Augmenter):
    """Blend with the gray image by 1 + U(-saturation, saturation)."""

    def __init__(self, saturation):
        super(SaturationJitterAug, self).__init__(saturation=saturation)
        self.saturation = saturation

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        gray = (_np(src) * _GRAY_COEF).sum(axis=2, keepdims=True) * (1.0 - alpha)
        src *= alpha
        src += _nd(gray.astype(_np(src).dtype), src)
        return src


class HueJitterAug(Augmenter):
    """Rotate the hue by U(-hue, hue) * 180 degrees in YIQ space."""

    def __init__(self, hue):
        super(HueJitterAug, self).__init__(hue=hue)
        self.hue = hue
        self.tyiq = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321],
                              [0.211, -0.523, 0.311]])
        self.ityiq = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647],
                               [1.0, -1.107, 1.705]])

    def __call__(self, src):
        alpha = random.uniform(-self.hue, self.hue)
        cos_a, sin_a = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        rot = np.array([[1.0, 0.0, 0.0], [0.0, cos_a, -sin_a], [0.0, sin_a, cos_a]])
        mat = np.dot(np.dot(self.ityiq, rot), self.tyiq).T
        img = _np(src)
        return _nd(np.dot(img, mat.astype(img.dtype)), src)


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter in a random order."""

    def __init__(self, brightness, contrast, saturation):
        augs = []
        if brightness > 0:
            augs.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            augs.append(ContrastJitterAug(contrast))
        if saturation > 0:
            augs.append(SaturationJitterAug(saturation))
        super(ColorJitterAug, self).__init__(augs)


class LightingAug(Augmenter):
    """AlexNet-style PCA lighting noise with standard deviation ``alphastd``."""

    def __init__(self, alphastd, eigval, eigvec):
        super(LightingAug, self).__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd, self.eigval, self.eigvec = alphastd, eigval, eigvec

    def __call__(self, src):
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        rgb = np.dot(np.asarray(self.eigvec) * alpha, np.asarray(self.eigval))
        src += _nd(rgb.astype(_np(src).dtype), src)
        return src


class ColorNormalizeAug(Augmenter):
    """Subtract ``mean`` and divide by ``std`` per channel."""

    def __init__(self, mean, std):
        super(ColorNormalizeAug, self).__init__(mean=mean, std=std)
        self.mean = None if mean is None else _nd(np.asarray(_np(mean), np.float32), None)
        self.std = None if std is None else _nd(np.asarray(_np(std), np.float32), None)

    def __call__(self, src):
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """Turn the image gray (3 channels kept) with probability ``p``."""

    def __init__(self, p):
        super(RandomGrayAug, self).__init__(p=p)
        self.p = p
        self.mat = np.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]])

    def __call__(self, src):
        if random.random() < self.p:
            img = _np(src)
            src = _nd(np.dot(img, self.mat.astype(img.dtype)), src)
        return src


class HorizontalFlipAug(Augmenter):
    """Mirror left-right with probability ``p``."""

    def __init__(self, p):
        super(HorizontalFlipAug, self).__init__(p=p)
        self.p = p

    def __call__(self, src):
        if random.random() < self.p:
            src = _nd(_np(src)[:, ::-1], src)
        return src


class CastAug(Augmenter):
    """Cast to ``typ`` (default float32)."""

    def __init__(self, typ='float32'):
        super(CastAug, self).__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


def _check_stat(value, name, default):
    if value is True:
        return np.array(default, np.float32)
    if value is not None:
        if not isinstance(value, (np.ndarray, NDArray)) or value.shape[0] not in (1, 3):
            raise MXNetError('CreateAugmenter: %s must be True, None or an array of 1 or 3 '
                             'values, got %r' % (name, value))
    return value


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False, rand_mirror=False,
                    mean=None, std=None, brightness=0, contrast=0, saturation=0, hue=0,
                    pca_noise=0, rand_gray=0, inter_method=2):
    # pylint: disable=invalid-name
    """Build MXNet's standard augmenter list for ``data_shape`` (C, H, W): resize, crop (centre,
    random, or random-sized with ``rand_resize``), mirror, cast to float32, colour jitter, hue,
    PCA lighting, random gray, and normalization (``mean``/``std`` True: ImageNet's values).

    Returns
    -------
    list of Augmenter
    """
    auglist = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        if not rand_crop:
            raise MXNetError('CreateAugmenter: rand_resize needs rand_crop=True')
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        eigval = np.array([55.46, 4.794, 1.148])
        eigvec = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                           [-0.5836, -0.6948, 0.4203]])
        auglist.append(LightingAug(pca_noise, eigval, eigvec))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    mean = _check_stat(mean, 'mean', [123.68, 116.28, 103.53])
    std = _check_stat(std, 'std', [58.395, 57.12, 57.375])
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist
