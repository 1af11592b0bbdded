"""The detection augmenters of ``mx.image`` (MXNet 1.9.1): they take and return ``(image,
label)`` pairs and move the boxes with the pixels (see :mod:`.detection` for the label layout).
Random choices use Python's ``random`` module in the same order as MXNet. The random crop and
pad and the augmenter factories are in :mod:`.det_crop_pad`."""
import json
import logging
import random

import numpy as np

from ..base import numeric_types
from ..ndarray.ndarray import NDArray
from .augmenters import Augmenter

__all__ = ['DetAugmenter', 'DetBorrowAug', 'DetRandomSelectAug', 'DetHorizontalFlipAug']

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
