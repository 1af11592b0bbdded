"""Object-detection side of ``mx.image`` (also ``mx.image.det``), as in MXNet 1.9.1.

A detection label is a 2-D float array, one row per object: ``[class_id, xmin, ymin, xmax, ymax,
extra...]`` with coordinates as fractions of the image width/height. The augmenters here take and
return ``(image, label)`` pairs and move the boxes along with the pixels; ``ImageDetIter`` reads
the flat label format ``[header_width, object_width, extra header..., objects...]`` (from .rec
headers, .lst files or an ``imglist``) and pads every batch's labels with rows of -1.

Random choices use Python's ``random`` module in the same order as MXNet, so a seeded run draws
the same crops, pads and flips."""
import json
import logging
import math
import random
import warnings

import numpy as np

from ..base import MXNetError, numeric_types
from ..io.base import DataDesc
from ..ndarray.ndarray import NDArray, to_numpy
from .augmenters import (Augmenter, ResizeAug, ForceResizeAug, CastAug, ColorJitterAug,
                         HueJitterAug, LightingAug, RandomGrayAug, ColorNormalizeAug)
from .image import fixed_crop, copyMakeBorder
from .image_iter import ImageIter

__all__ = ['DetAugmenter', 'DetBorrowAug', 'DetRandomSelectAug', 'DetHorizontalFlipAug',
           'DetRandomCropAug', 'DetRandomPadAug', 'CreateMultiRandCropAugmenter',
           'CreateDetAugmenter', 'ImageDetIter']

_BORDER_ISOLATED_CONSTANT = 16      # OpenCV BORDER_CONSTANT | BORDER_ISOLATED
_IMAGENET_MEAN = [123.68, 116.28, 103.53]
_IMAGENET_STD = [58.395, 57.12, 57.375]


class _ArgumentTypeError(TypeError, AssertionError):
    """A wrong argument type (MXNet checks these with ``assert``)."""


class _ArgumentValueError(ValueError, AssertionError):
    """A wrong argument value that MXNet checks with ``assert``."""


class _InvalidRangeError(ValueError, TypeError):
    """An area/aspect range no crop or pad can satisfy (MXNet fails with a TypeError here)."""


def _as_pair(value, name, owner):
    """A (low, high) range from a range or a single number."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise _ArgumentValueError('%s: %s must be a number or a (low, high) pair, got %r'
                                      % (owner, name, value))
        return value
    if not isinstance(value, numeric_types):
        raise _ArgumentTypeError('%s: %s must be a number or a (low, high) pair, got %r'
                                 % (owner, name, value))
    logging.info('%s uses the fixed %s %s', owner, name, value)
    return (value, value)


def _label_array(label):
    """The label as a numpy array (NDArray labels are copied out)."""
    if isinstance(label, NDArray):
        return label.asnumpy()
    return label if isinstance(label, np.ndarray) else np.asarray(label, np.float32)


def _box_areas(boxes):
    """Areas of ``[xmin, ymin, xmax, ymax]`` rows, 0 for empty boxes."""
    return np.maximum(0, boxes[:, 2] - boxes[:, 0]) * np.maximum(0, boxes[:, 3] - boxes[:, 1])


class DetAugmenter(object):
    """Base class of the detection augmenters: ``aug(src, label) -> (src, label)``.

    Keyword arguments are kept (arrays as lists) for ``dumps()``.
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for key, val in list(kwargs.items()):
            if isinstance(val, NDArray):
                val = val.asnumpy()
            if isinstance(val, np.ndarray):
                self._kwargs[key] = val.tolist()

    def dumps(self):
        """JSON string ``[class name in lower case, keyword arguments]``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src, label):
        raise NotImplementedError('%s must define __call__(src, label)' % type(self).__name__)


class DetBorrowAug(DetAugmenter):
    """Use an image-only ``mx.image.Augmenter`` (one that leaves boxes where they are, such as
    colour jitter or a full-image resize) in a detection pipeline."""

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError('DetBorrowAug: augmenter must be an mx.image.Augmenter, got %s'
                            % type(augmenter).__name__)
        super(DetBorrowAug, self).__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        return [type(self).__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return (self.augmenter(src), label)


class DetRandomSelectAug(DetAugmenter):
    """Apply one augmenter of ``aug_list`` picked at random, or none with probability
    ``skip_prob`` (always none when the list is empty)."""

    def __init__(self, aug_list, skip_prob=0):
        super(DetRandomSelectAug, self).__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise ValueError('DetRandomSelectAug: aug_list may hold DetAugmenters only, '
                                 'got %s' % type(aug).__name__)
        if not aug_list:
            skip_prob = 1
        self.aug_list = aug_list
        self.skip_prob = skip_prob

    def dumps(self):
        return [type(self).__name__.lower(), [aug.dumps() for aug in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return (src, label)
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Mirror the image left-right with probability ``p``; boxes become
    ``xmin' = 1 - xmax, xmax' = 1 - xmin`` (the label array is updated in place)."""

    def __init__(self, p):
        super(DetHorizontalFlipAug, self).__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = src[:, ::-1] if isinstance(src, np.ndarray) else \
                _flip_columns(src)
            label = _label_array(label)
            self._flip_label(label)
        return (src, label)

    @staticmethod
    def _flip_label(label):
        """Mirror the x coordinates of every row of ``label`` in place."""
        left = label[:, 1].copy()
        label[:, 1] = 1.0 - label[:, 3]
        label[:, 3] = 1.0 - left


def _flip_columns(src):
    from .. import ndarray as nd  # pylint: disable=import-outside-toplevel
    return nd.flip(src, axis=1)


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


class ImageDetIter(ImageIter):
    """Batches of augmented images with their detection labels, from a .rec file
    (``path_imgrec``, with ``path_imgidx`` for shuffling and parts) or from image files named in
    a .lst file / ``imglist`` under ``path_root``.

    Each raw label is ``[header_width, object_width, extra header..., objects...]``, every
    object ``object_width`` numbers starting ``class_id, xmin, ymin, xmax, ymax`` (fractions of
    the image size). The batch label is ``(batch_size, max_objects, object_width)`` with unused
    rows set to -1; ``max_objects`` is the largest count in the data set (``label_shape``).

    Parameters
    ----------
    batch_size : int
    data_shape : tuple of int
        (3, height, width).
    path_imgrec, path_imglist, path_root, path_imgidx : str, optional
    shuffle : bool, optional
    part_index, num_parts : int, optional
    aug_list : list of DetAugmenter, optional
        Default: ``CreateDetAugmenter(data_shape, **kwargs)``.
    imglist : list, optional
        ``[label..., path]`` items (or ``[label_list, path]``).
    data_name, label_name : str, optional
    last_batch_handle : {'pad', 'discard', 'roll_over'}
    kwargs :
        Passed to ``CreateDetAugmenter``.
    """

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name='data', label_name='label',
                 last_batch_handle='pad', **kwargs):
        super(ImageDetIter, self).__init__(batch_size=batch_size, data_shape=data_shape,
                                           path_imgrec=path_imgrec, path_imglist=path_imglist,
                                           path_root=path_root, path_imgidx=path_imgidx,
                                           shuffle=shuffle, part_index=part_index,
                                           num_parts=num_parts, aug_list=[], imglist=imglist,
                                           data_name=data_name, label_name=label_name,
                                           last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None \
            else aug_list
        label_shape = self._estimate_label_shape()
        self.provide_label = [DataDesc(label_name, (self.batch_size,) + label_shape)]
        self.label_shape = label_shape

    def _check_valid_label(self, label):
        """RuntimeError unless ``label`` is (objects, >= 5) with at least one usable box."""
        if len(label.shape) != 2 or label.shape[1] < 5:
            raise RuntimeError('Label with shape (1+, 5+) required, %s received.' % str(label))
        usable = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
        if not usable.any():
            raise RuntimeError('Invalid label occurs: no object with class id >= 0 and a '
                               'non-empty box in %s' % str(label))

    def _estimate_label_shape(self):
        """(largest object count, object width) over one pass of the data (images are not
        decoded)."""
        most, width = 0, None
        self.reset()
        try:
            while True:
                raw, _ = self.next_sample()
                objects = self._parse_label(raw)
                most = max(most, objects.shape[0])
                width = objects.shape[1]
        except StopIteration:
            pass
        self.reset()
        if width is None:
            raise MXNetError('ImageDetIter: the data set holds no images, so the label shape '
                             'cannot be estimated')
        return (most, width)

    def _parse_label(self, label):
        """The valid objects of a flat raw label, as an (objects, object_width) array.

        The raw format is ``header_width, object_width, extra header...`` followed by the
        objects; objects with an empty box are dropped. RuntimeError for a malformed label or
        one without a valid object."""
        raw = np.asarray(_label_array(label)).ravel()
        if raw.size < 7:
            raise RuntimeError('Label shape is invalid: %s (a detection label needs at least '
                               '2 header values and one object of 5)' % str(raw.shape))
        header_width, obj_width = int(raw[0]), int(raw[1])
        if header_width < 2 or header_width > raw.size:
            raise RuntimeError('Label header width %d is invalid for a label of %d values'
                               % (header_width, raw.size))
        if obj_width < 5:
            raise RuntimeError('Label object width %d is invalid: each object needs at least '
                               '5 values (id, xmin, ymin, xmax, ymax)' % obj_width)
        if (raw.size - header_width) % obj_width != 0:
            raise RuntimeError('Label shape %s inconsistent with annotation width %d.'
                               % (str(raw.shape), obj_width))
        objects = raw[header_width:].reshape(-1, obj_width)
        good = (objects[:, 3] > objects[:, 1]) & (objects[:, 4] > objects[:, 2])
        if not good.any():
            raise RuntimeError('Encounter sample with no valid label.')
        return objects[good, :]

    def reshape(self, data_shape=None, label_shape=None):
        """Change the data shape (C, H, W) and/or the label shape (objects, width)."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [DataDesc(self.provide_data[0][0],
                                          (self.batch_size,) + tuple(data_shape))]
            self.data_shape = tuple(data_shape)
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [DataDesc(self.provide_label[0][0],
                                           (self.batch_size,) + tuple(label_shape))]
            self.label_shape = tuple(label_shape)

    def _batchify(self, batch_data, batch_label, start=0):
        """Fill numpy batch buffers from slot ``start``; return the slots filled."""
        i = start
        try:
            while i < self.batch_size:
                raw, encoded = self.next_sample()
                data = self.imdecode(encoded)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(raw)
                    data, label = self.augmentation_transform(data, label)
                    self._check_valid_label(label)
                except RuntimeError as err:
                    logging.debug('Invalid image, skipping: %s', str(err))
                    continue
                chw = self.postprocess_data(data)
                chw = to_numpy(chw.asnumpy()) if isinstance(chw, NDArray) else np.asarray(chw)
                if chw.shape != batch_data.shape[1:]:
                    raise MXNetError('ImageDetIter: an augmented image has shape %s, but the '
                                     'batch needs %s (the augmenters must end at data_shape)'
                                     % (chw.shape, batch_data.shape[1:]))
                label = np.asarray(label)
                rows, width = batch_label.shape[1:]
                if label.shape[0] > rows or label.shape[1] != width:
                    raise MXNetError('ImageDetIter: a sample has %d objects of width %d, but '
                                     'label_shape is %s (reshape or sync_label_shape to fit)'
                                     % (label.shape[0], label.shape[1], (rows, width)))
                batch_data[i] = chw
                batch_label[i, :label.shape[0]] = label
                batch_label[i, label.shape[0]:] = -1
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _new_batch(self):
        """Empty (data, label) host buffers of one batch; labels padded with -1."""
        return (np.zeros((self.batch_size,) + tuple(self.data_shape), np.float32),
                np.full(tuple(self.provide_label[0][1]), -1, np.float32))

    def augmentation_transform(self, data, label):  # pylint: disable=arguments-differ
        """Apply the detection augmenters to one (image, label) pair."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return (data, label)

    def check_label_shape(self, label_shape):
        """ValueError unless ``label_shape`` is (objects, width) with at least the current
        object count and the same width."""
        if len(label_shape) != 2:
            raise ValueError('label_shape should have length 2')
        if label_shape[0] < self.label_shape[0]:
            raise ValueError('Attempts to reduce label count from %d to %d, not allowed.'
                             % (self.label_shape[0], label_shape[0]))
        if label_shape[1] != self.provide_label[0][1][2]:
            raise ValueError('label_shape object width inconsistent: %d vs %d.'
                             % (self.provide_label[0][1][2], label_shape[1]))

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True,
                  waitKey=None, window_name='draw_next', id2labels=None):
        # pylint: disable=invalid-name
        """Yield the next images (HWC uint8, BGR) with their boxes drawn, one per sample.

        Parameters
        ----------
        color : tuple, optional
            Box colour (RGB); random per box when None.
        thickness : int
            Box line thickness.
        mean, std : True or numpy.ndarray, optional
            Undo a normalization (True: ImageNet's values) for display.
        clip : bool
            Clip the pixels to [0, 255].
        waitKey : int, optional
            When set, also show each image in an OpenCV window for this many milliseconds.
        window_name : str
            Window title when ``waitKey`` is set.
        id2labels : dict, optional
            Class id -> name, written at each box.
        """
        try:
            from .codec import require_cv2  # pylint: disable=import-outside-toplevel
            cv2 = require_cv2()
        except (ImportError, MXNetError) as err:
            warnings.warn('Unable to import cv2, skip drawing: %s' % str(err))
            return
        std = _display_stat(std, _IMAGENET_STD, 'std')
        mean = _display_stat(mean, _IMAGENET_MEAN, 'mean')
        if color:
            color = tuple(color)[::-1]
        while True:
            try:
                raw, encoded = self.next_sample()
            except StopIteration:
                return
            data = self.imdecode(encoded)
            try:
                self.check_valid_image([data])
                label = self._parse_label(raw)
            except RuntimeError as err:
                logging.debug('Invalid image, skipping: %s', str(err))
                continue
            data, label = self.augmentation_transform(data, label)
            image = data.asnumpy() if isinstance(data, NDArray) else np.array(data)
            image = image.astype(np.float64) if image.dtype == np.uint8 else image
            if std is not None:
                image = image * std
            if mean is not None:
                image = image + mean
            image = image[:, :, ::-1].copy()            # RGB -> BGR for OpenCV
            if clip:
                image = np.clip(image, 0, 255)
            image = np.ascontiguousarray(image.astype(np.uint8))
            height, width = image.shape[:2]
            for row in np.asarray(label):
                x1 = int(row[1] * width)
                if x1 < 0:
                    continue
                y1, x2, y2 = int(row[2] * height), int(row[3] * width), int(row[4] * height)
                box_color = color if color else tuple(float(v) for v in np.random.rand(3) * 255)
                cv2.rectangle(image, (x1, y1), (x2, y2), box_color, thickness)
                if id2labels is not None and int(row[0]) in id2labels:
                    text = '{:s}'.format(id2labels[int(row[0])])
                    font = cv2.FONT_HERSHEY_SIMPLEX
                    text_h = cv2.getTextSize(text, font, 0.5, 2)[0][1]
                    cv2.putText(image, text, (x1 + 5, y1 + text_h + 5), font, 0.5,
                                (255, 255, 255), 2)
            if waitKey is not None:
                cv2.imshow(window_name, image)
                cv2.waitKey(waitKey)
            yield image

    def sync_label_shape(self, it, verbose=False):
        """Give this iterator and ``it`` (another ImageDetIter, e.g. the validation one) the
        same label shape, the larger object count of the two; return ``it``."""
        if not isinstance(it, ImageDetIter):
            raise _ArgumentTypeError('Synchronize with invalid iterator: expected an '
                                     'ImageDetIter, got %s' % type(it).__name__)
        mine, theirs = self.label_shape, it.label_shape
        if mine[1] != theirs[1]:
            raise _ArgumentValueError('object width mismatch: %d vs %d' % (mine[1], theirs[1]))
        most = max(mine[0], theirs[0])
        if most > mine[0]:
            self.reshape(None, (most, mine[1]))
        if most > theirs[0]:
            it.reshape(None, (most, theirs[1]))
        if verbose and most > min(mine[0], theirs[0]):
            logging.info('Resized label_shape to (%d, %d).', most, mine[1])
        return it


def _display_stat(value, default, name):
    if value is True:
        return np.array(default)
    if value is not None:
        if not isinstance(value, np.ndarray) or value.shape[0] not in (1, 3):
            raise _ArgumentValueError('draw_next: %s must be True, None or a numpy array of 1 '
                                      'or 3 values, got %r' % (name, value))
    return value
