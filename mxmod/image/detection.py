"""Object-detection side of ``mx.image`` (also ``mx.image.det``), as in MXNet 1.9.1.

A detection label is a 2-D float array, one row per object: ``[class_id, xmin, ymin, xmax, ymax,
extra...]`` with coordinates as fractions of the image width/height. The augmenters here take and
return ``(image, label)`` pairs and move the boxes along with the pixels; ``ImageDetIter`` reads
the flat label format ``[header_width, object_width, extra header..., objects...]`` (from .rec
headers, .lst files or an ``imglist``) and pads every batch's labels with rows of -1.

Random choices use Python's ``random`` module in the same order as MXNet, so a seeded run draws
the same crops, pads and flips."""
import logging
import warnings

import numpy as np

from ..base import MXNetError
from ..io.base import DataDesc
from ..ndarray.ndarray import NDArray, to_numpy
from .det_augmenters import (DetAugmenter, DetBorrowAug, DetRandomSelectAug,  # noqa: F401
                             DetHorizontalFlipAug, _ArgumentTypeError, _ArgumentValueError,
                             _IMAGENET_MEAN, _IMAGENET_STD, _label_array)
from .det_crop_pad import (DetRandomCropAug, DetRandomPadAug,  # noqa: F401
                           CreateMultiRandCropAugmenter, CreateDetAugmenter)
from .image_iter import ImageIter

__all__ = ['DetAugmenter', 'DetBorrowAug', 'DetRandomSelectAug', 'DetHorizontalFlipAug',
           'DetRandomCropAug', 'DetRandomPadAug', 'CreateMultiRandCropAugmenter',
           'CreateDetAugmenter', 'ImageDetIter']


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
