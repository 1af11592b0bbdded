"""Random crops and pads of detection samples (MXNet 1.9.1's DetRandomCropAug and
DetRandomPadAug, keeping the boxes that stay in the picture) and the factories building a
detection augmenter list."""
import math
import random

import numpy as np

from ..base import numeric_types
from ..ndarray.ndarray import NDArray
from .augmenters import (ResizeAug, ForceResizeAug, CastAug, ColorJitterAug, HueJitterAug,
                         LightingAug, RandomGrayAug, ColorNormalizeAug)
from .det_augmenters import (DetAugmenter, DetBorrowAug, DetRandomSelectAug,
                             DetHorizontalFlipAug, _ArgumentTypeError, _ArgumentValueError,
                             _InvalidRangeError, _as_pair, _box_areas, _label_array,
                             _BORDER_ISOLATED_CONSTANT, _IMAGENET_MEAN, _IMAGENET_STD)
from .image import fixed_crop, copyMakeBorder

__all__ = ['DetRandomCropAug', 'DetRandomPadAug', 'CreateMultiRandCropAugmenter',
           'CreateDetAugmenter']


def _check_ranges(owner, area_range, area_floor, aspect_ratio_range):
    """Refuse an area range that is reversed or whose upper end is not above ``area_floor``,
    and an aspect-ratio range that is reversed or not positive."""
    if area_range[1] <= area_floor or area_range[0] > area_range[1]:
        raise _InvalidRangeError('%s: invalid area_range %s: expected low <= high and '
                                 'high > %d' % (owner, tuple(area_range), area_floor))
    if aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
        raise _InvalidRangeError('%s: invalid aspect_ratio_range %s: expected '
                                 '0 < low <= high' % (owner, tuple(aspect_ratio_range)))


class DetRandomCropAug(DetAugmenter):
    """Crop a random region that keeps the objects reasonably whole.

    Parameters
    ----------
    min_object_covered : float, default 0.1
        Every valid object the crop touches must keep more than this fraction of its area.
    aspect_ratio_range : (float, float) or float, default (0.75, 1.33)
        Range of the crop's width / height.
    area_range : (float, float) or float, default (0.05, 1.0)
        Range of the crop's area as a fraction of the image.
    min_eject_coverage : float, default 0.3
        Objects keeping no more than this fraction of their area are dropped from the label.
    max_attempts : int, default 50
        Proposals to try before giving up (the sample is then returned unchanged).
    """

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        owner = 'DetRandomCropAug'
        aspect_ratio_range = _as_pair(aspect_ratio_range, 'aspect_ratio_range', owner)
        area_range = _as_pair(area_range, 'area_range', owner)
        super(DetRandomCropAug, self).__init__(min_object_covered=min_object_covered,
                                               aspect_ratio_range=aspect_ratio_range,
                                               area_range=area_range,
                                               min_eject_coverage=min_eject_coverage,
                                               max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        _check_ranges(owner, area_range, 0, aspect_ratio_range)
        self.enabled = True

    def __call__(self, src, label):
        label = _label_array(label)
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x0, y0, width, height, label = crop
            src = fixed_crop(src, x0, y0, width, height, None)
        return (src, label)

    @staticmethod
    def _calculate_areas(label):
        """Box areas of ``[xmin, ymin, xmax, ymax, ...]`` rows."""
        return _box_areas(label)

    @staticmethod
    def _intersect(label, xmin, ymin, xmax, ymax):
        """The boxes clipped to the window; boxes outside it become all zeros."""
        out = label.copy()
        out[:, 0] = np.maximum(label[:, 0], xmin)
        out[:, 1] = np.maximum(label[:, 1], ymin)
        out[:, 2] = np.minimum(label[:, 2], xmax)
        out[:, 3] = np.minimum(label[:, 3], ymax)
        empty = (out[:, 0] >= out[:, 2]) | (out[:, 1] >= out[:, 3])
        out[empty, :] = 0
        return out

    def _check_satisfy_constraints(self, label, xmin, ymin, xmax, ymax, width, height):
        """Whether the pixel window keeps more than min_object_covered of every object of
        more than 2 pixels that it overlaps (and overlaps at least one)."""
        if (xmax - xmin) * (ymax - ymin) < 2:
            return False
        window = (float(xmin) / width, float(ymin) / height,
                  float(xmax) / width, float(ymax) / height)
        boxes = label[:, 1:]
        areas = _box_areas(boxes)
        big = areas * width * height > 2
        if not big.any():
            return False
        kept = _box_areas(self._intersect(boxes[big], *window)) / areas[big]
        kept = kept[kept > 0]
        return kept.size > 0 and kept.min() > self.min_object_covered

    def _update_labels(self, label, crop_box, height, width):
        """Boxes in the crop's coordinates; None when no object survives."""
        x0, y0 = float(crop_box[0]) / width, float(crop_box[1]) / height
        scale_w, scale_h = float(crop_box[2]) / width, float(crop_box[3]) / height
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] - x0) / scale_w
        out[:, (2, 4)] = (out[:, (2, 4)] - y0) / scale_h
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        with np.errstate(divide='ignore', invalid='ignore'):
            kept = _box_areas(out[:, 1:]) * scale_w * scale_h / _box_areas(label[:, 1:])
        good = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & \
            (kept > self.min_eject_coverage)
        if not good.any():
            return None
        return out[good, :]

    def _random_crop_proposal(self, label, height, width):
        """``(x, y, w, h, new_label)`` of an acceptable crop, or ``()``."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        lowest = self.area_range[0] * height * width
        highest = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            crop_h = int(round(math.sqrt(lowest / ratio)))
            top_h = int(round(math.sqrt(highest / ratio)))
            if round(top_h * ratio) > width:
                top_h = int((width + 0.4999999) / ratio)   # largest h whose width still fits
            top_h = min(top_h, height)
            crop_h = min(crop_h, top_h)
            if crop_h < top_h:
                crop_h = random.randint(crop_h, top_h)
            crop_w = int(round(crop_h * ratio))
            area = crop_w * crop_h
            if area < lowest:           # rounding left it too small or too large: nudge once
                crop_h += 1
                crop_w = int(round(crop_h * ratio))
                area = crop_w * crop_h
            if area > highest:
                crop_h -= 1
                crop_w = int(round(crop_h * ratio))
                area = crop_w * crop_h
            if not (lowest <= area <= highest and 0 <= crop_w <= width
                    and 0 <= crop_h <= height):
                continue
            y0 = random.randint(0, max(0, height - crop_h))
            x0 = random.randint(0, max(0, width - crop_w))
            if self._check_satisfy_constraints(label, x0, y0, x0 + crop_w, y0 + crop_h,
                                               width, height):
                moved = self._update_labels(label, (x0, y0, crop_w, crop_h), height, width)
                if moved is not None:
                    return (x0, y0, crop_w, crop_h, moved)
        return ()


class DetRandomPadAug(DetAugmenter):
    """Place the image at a random spot of a larger canvas filled with ``pad_val``.

    Parameters
    ----------
    aspect_ratio_range : (float, float) or float, default (0.75, 1.33)
        Range of the canvas's width / height.
    area_range : (float, float) or float, default (1.0, 3.0)
        Range of the canvas's area relative to the image (the upper end must exceed 1).
    max_attempts : int, default 50
        Proposals to try before giving up.
    pad_val : float or tuple of float, default (128, 128, 128)
        Fill value per channel.
    """

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        owner = 'DetRandomPadAug'
        if not isinstance(pad_val, (list, tuple)) and not isinstance(pad_val, numeric_types):
            raise _ArgumentTypeError('%s: pad_val must be a number or a tuple of numbers, '
                                     'got %r' % (owner, pad_val))
        aspect_ratio_range = _as_pair(aspect_ratio_range, 'aspect_ratio_range', owner)
        area_range = _as_pair(area_range, 'area_range', owner)
        super(DetRandomPadAug, self).__init__(aspect_ratio_range=aspect_ratio_range,
                                              area_range=area_range, max_attempts=max_attempts,
                                              pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        _check_ranges(owner, area_range, 1, aspect_ratio_range)
        self.enabled = True

    def __call__(self, src, label):
        label = _label_array(label)
        height, width, _ = src.shape
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x0, y0, canvas_w, canvas_h, label = pad
            fill = tuple(self.pad_val) if isinstance(self.pad_val, (list, tuple)) \
                else (self.pad_val,)
            src = copyMakeBorder(src, y0, canvas_h - y0 - height, x0, canvas_w - x0 - width,
                                 _BORDER_ISOLATED_CONSTANT, values=fill)
        return (src, label)

    @staticmethod
    def _update_labels(label, pad_box, height, width):
        """Boxes in the canvas's coordinates."""
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + pad_box[0]) / pad_box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + pad_box[1]) / pad_box[3]
        return out

    def _random_pad_proposal(self, label, height, width):
        """``(x, y, w, h, new_label)`` of a canvas, or ``()``."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        lowest = self.area_range[0] * height * width
        highest = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            canvas_h = int(round(math.sqrt(lowest / ratio)))
            top_h = int(round(math.sqrt(highest / ratio)))
            if round(canvas_h * ratio) < width:
                canvas_h = int((width + 0.499999) / ratio)   # wide enough for the image
            canvas_h = max(canvas_h, height)
            canvas_h = min(canvas_h, top_h)
            if canvas_h < top_h:
                canvas_h = random.randint(canvas_h, top_h)
            canvas_w = int(round(canvas_h * ratio))
            if canvas_h - height < 2 or canvas_w - width < 2:
                continue            # a border of a pixel or less is not worth it
            y0 = random.randint(0, max(0, canvas_h - height))
            x0 = random.randint(0, max(0, canvas_w - width))
            moved = self._update_labels(label, (x0, y0, canvas_w, canvas_h), height, width)
            return (x0, y0, canvas_w, canvas_h, moved)
        return ()


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    # pylint: disable=invalid-name
    """A DetRandomSelectAug over several DetRandomCropAugs.

    Each parameter is a single value (shared) or a list with one value per crop augmenter
    (a range given as a tuple counts as a single value); lists must agree in length.

    Returns
    -------
    DetRandomSelectAug
    """
    columns = []
    count = 1
    for value in (min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
                  max_attempts):
        value = value if isinstance(value, list) else [value]
        columns.append(value)
        count = max(count, len(value))
    for k, value in enumerate(columns):
        if len(value) != count:
            if len(value) != 1:
                raise _ArgumentValueError(
                    'CreateMultiRandCropAugmenter: parameter lists must have the same length '
                    '(or length 1); got lengths %s' % [len(c) for c in columns])
            columns[k] = value * count
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*columns)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def _stat(value, name, default):
    if value is True:
        return np.array(default)
    if value is not None:
        if isinstance(value, NDArray):
            value = value.asnumpy()
        if not isinstance(value, np.ndarray) or value.ndim < 1 or value.shape[0] not in (1, 3):
            raise _ArgumentValueError('CreateDetAugmenter: %s must be True, None or a numpy '
                                      'array of 1 or 3 values, got %r' % (name, value))
    return value


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2, min_object_covered=0.1,
                       aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 3.0),
                       min_eject_coverage=0.3, max_attempts=50, pad_val=(127, 127, 127)):
    # pylint: disable=invalid-name,too-many-arguments
    """MXNet's standard detection augmenter list for ``data_shape`` (C, H, W).

    In order: shorter-edge ``resize``; random crops (probability ``rand_crop``, the crop
    parameters may be lists, see CreateMultiRandCropAugmenter; the crop area is capped at 1);
    random mirror (``rand_mirror``: probability 0.5); random padding (probability ``rand_pad``,
    canvas area up to ``area_range[1]``, filled with ``pad_val``); forced resize to
    ``data_shape``; cast to float32; brightness/contrast/saturation, ``hue`` and PCA lighting
    (``pca_noise``) jitter; random gray (``rand_gray``); normalization by ``mean``/``std``
    (True: ImageNet's values). ``inter_method`` is the interpolation of every resize.

    Returns
    -------
    list of DetAugmenter
    """
    auglist = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(min_object_covered, aspect_ratio_range,
                                                    area_range, min_eject_coverage,
                                                    max_attempts, skip_prob=(1 - rand_crop)))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:
        pad_aug = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts,
                                  pad_val)
        auglist.append(DetRandomSelectAug([pad_aug], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        auglist.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        auglist.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        eigval = np.array([55.46, 4.794, 1.148])
        eigvec = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                           [-0.5836, -0.6948, 0.4203]])
        auglist.append(DetBorrowAug(LightingAug(pca_noise, eigval, eigvec)))
    if rand_gray > 0:
        auglist.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    mean = _stat(mean, 'mean', _IMAGENET_MEAN)
    std = _stat(std, 'std', _IMAGENET_STD)
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist
