"""ImageDetRecordIter: batches of images with variable-length detection labels from a RecordIO
file, augmented by MXNet 1.9.1's ``det_aug_default`` (colour jitter in HLS, mirror, random
padding, constrained random crops, final resize) and normalized as its ImageDetNormalizeIter.

Each output label row is ``[channels, height, width, n, raw label (n values)...]`` padded to
``label_pad_width + 4`` with ``label_pad_value``; the raw label keeps the detection format
``[header_width, object_width, extra header..., objects...]`` with the boxes moved by the
augmentation. Reading, threading, prefetching and batching are ImageRecordIter's."""
import logging

import numpy as np

from ..base import MXNetError
from ..recordio import unpack
from .base import DataDesc
from .det_record_augment import DetAugmentParam, det_augment
from .image_record_iter import ImageRecordIter, _DTYPES, _Plan, _flag
from .image_record_work import Normalizer, _decode
from .record_source import RecordSource

__all__ = ['ImageDetRecordIter']


class DetLabelSource(object):
    """Raw detection labels: from a list file (by image id; ``label_width`` values per line, or
    every value between the id and the path when it is -1) or from the records' headers."""

    def __init__(self, path_imglist, label_width, uri):
        self.label_width = label_width
        self.uri = uri
        self.table = None
        if path_imglist:
            self.path = path_imglist
            self.table = self._read(path_imglist, label_width)

    @staticmethod
    def _read(path, label_width):
        table = {}
        try:
            with open(path) as handle:
                for lineno, line in enumerate(handle, 1):
                    fields = line.split()
                    if not fields:
                        continue
                    try:
                        key = int(float(fields[0]))
                        if label_width > 0:
                            if len(fields) < label_width + 1:
                                raise MXNetError('Bad ImageList format: %s line %d has %d '
                                                 'labels, label_width is %d'
                                                 % (path, lineno, len(fields) - 1, label_width))
                            values = fields[1:1 + label_width]
                        else:
                            values = fields[1:-1]
                            if not values:
                                raise MXNetError('Bad ImageList format: empty label at %s '
                                                 'line %d' % (path, lineno))
                        table[key] = np.array([float(v) for v in values], np.float32)
                    except ValueError:
                        raise MXNetError('Bad ImageList format: %s line %d is not "index '
                                         'labels... path"' % (path, lineno)) from None
        except OSError as err:
            raise MXNetError('cannot open image list %s: %s' % (path, err.strerror)) from None
        return table

    def max_width(self, source):
        """The widest label (the list's, or over the records of ``source``)."""
        if self.table is not None:
            return max((len(v) for v in self.table.values()), default=0)
        widest = 0
        for position in range(len(source)):
            header, _ = unpack(source.read(position))
            widest = max(widest, len(self._from_header(header, position)))
        return widest

    def _from_header(self, header, position):
        if header.flag <= 0:
            raise MXNetError('Not enough label packed in img_list or rec file: record %d '
                             '(id %d) of %s has a single scalar label; pack the detection '
                             'label as an array' % (position, header.id, self.uri))
        if self.label_width > 0 and header.flag != self.label_width:
            raise MXNetError('rec file provide %d-dimensional label but label_width is set to '
                             '%d (record %d of %s)' % (header.flag, self.label_width, position,
                                                       self.uri))
        return np.asarray(header.label, np.float32).ravel()

    def get(self, header, position):
        """The raw label (float32 array) of the record with ``header``."""
        if self.table is not None:
            try:
                return self.table[int(header.id)]
            except KeyError:
                raise MXNetError('fail to find imagelabel for id %d in %s (record %d of %s)'
                                 % (header.id, self.path, position, self.uri)) from None
        return self._from_header(header, position)


def process_det_image(it, position, seed, data, label, slot, norm):
    """Fill ``data[slot]`` and ``label[slot]`` from the ``position``-th record of ``it``."""
    from ..image.codec import require_cv2  # pylint: disable=import-outside-toplevel
    cv2 = require_cv2()
    header, img = _decode(cv2, it, it.source.read(position), position)
    raw = it.labels.get(header, position)
    rng = np.random.default_rng(seed)
    where = 'record %d (id %d) of %s' % (position, header.id, it.source.uri)
    img, out_label = det_augment(cv2, img, raw, it.aug, rng, where)
    rows, cols, channels = img.shape
    want = it.data_shape[1:]
    if rows > want[0] or cols > want[1]:
        raise MXNetError('%s: the augmented image is %dx%d, larger than data_shape %dx%d'
                         % (where, rows, cols, want[0], want[1]))
    if (rows, cols) != tuple(want):
        canvas = np.zeros(tuple(want) + (channels,), img.dtype)
        canvas[:rows, :cols] = img
        img = canvas
    contrast, illumination = norm.draws(rng)
    norm.write(data[slot], img, False, contrast, illumination)
    if out_label.size > it.label_pad_width:
        raise MXNetError('%s: the label has %d values, more than label_pad_width %d'
                         % (where, out_label.size, it.label_pad_width))
    row = label[slot]
    row[:] = it.label_pad_value
    row[:4] = (channels, rows, cols, out_label.size)
    row[4:4 + out_label.size] = out_label


def _det_normalize_kwargs(kwargs, channels):
    """ImageDetNormalizeIter's rules in Normalizer's terms: the per-channel means only when one
    of them is positive, a std only when positive, no random contrast/illumination."""
    names = ['r', 'g', 'b', 'a']
    out = {'scale': kwargs.get('scale', 1.0), 'mean_img': kwargs.get('mean_img', '')}
    means = [float(kwargs.get('mean_' + n, 0.0)) for n in names]
    if any(m > 0 for m in means):
        out['mean_img'] = ''
        for n, m in zip(names, means):
            out['mean_' + n] = m
    for n in names[:max(channels, 1)]:
        std = float(kwargs.get('std_' + n, 0.0))
        out['std_' + n] = std if std > 0 else 1.0
    return out


class ImageDetRecordIter(ImageRecordIter):
    """Iterate over a RecordIO file of images with detection labels in augmented batches.

    Keyword-only, MXNet's parameter names and defaults; unknown keywords are ignored.

    Parameters
    ----------
    path_imgrec : str
        The .rec file; each record's label is the flat detection label
        ``[header_width, object_width, extra header..., id, xmin, ymin, xmax, ymax, ...]``.
    data_shape : tuple of int
        (channels, height, width).
    batch_size : int
    path_imglist : str, optional
        A list file whose labels replace the records' (found by image id).
    label_width : int, optional
        Values per label, -1 (default) for variable widths.
    label_pad_width : int, optional
        Width the labels are padded to (default: the widest label; smaller is an error).
    label_pad_value : float, optional
        Padding value (default -1).
    resize, resize_mode ('force', 'shrink', 'fit'), inter_method, rand_crop_prob,
    num_crop_sampler, min/max_crop_scales, min/max_crop_aspect_ratios, min/max_crop_overlaps,
    min/max_crop_sample_coverages, min/max_crop_object_coverages, max_crop_trials,
    crop_emit_mode ('center', 'overlap'), emit_overlap_thresh, rand_pad_prob, max_pad_scale,
    fill_value, rand_mirror_prob, max_random_hue/saturation/illumination/contrast,
    random_hue/saturation/illumination/contrast_prob :
        ``det_aug_default``'s augmentation.
    mean_img, mean_r, mean_g, mean_b, mean_a, std_r, std_g, std_b, std_a, scale :
        Normalization.
    shuffle, seed, round_batch, part_index, num_parts, preprocess_threads, prefetch_buffer,
    dtype, data_name, label_name :
        As ImageRecordIter.

    The label of each image is ``[channels, height, width, n, label (n values)]`` padded to
    ``label_pad_width + 4`` values, where height/width are the image's size after augmentation
    (smaller than data_shape with resize_mode 'shrink' or 'fit'; the image sits at the top
    left).
    """

    def _setup(self, kwargs):
        data_shape = tuple(int(d) for d in kwargs['data_shape'])
        if len(data_shape) != 3 or data_shape[0] not in (1, 3, 4) or min(data_shape) <= 0:
            raise MXNetError('ImageDetRecordIter: invalid data_shape %s: expected (channels, '
                             'height, width) with 1, 3 or 4 channels' % (data_shape,))
        dtype = kwargs.get('dtype', 'float32')
        if dtype not in _DTYPES:
            raise MXNetError('ImageDetRecordIter: unknown dtype %r (one of %s)'
                             % (dtype, ', '.join(str(k) for k in _DTYPES if k)))
        self.dtype = np.dtype(_DTYPES[dtype])
        self.data_shape = data_shape
        self.label_width = int(kwargs.get('label_width', -1))
        self.aug = DetAugmentParam(data_shape, kwargs)
        self.source = RecordSource(kwargs['path_imgrec'], int(kwargs.get('part_index', 0)),
                                   int(kwargs.get('num_parts', 1)))
        if not len(self.source):
            raise MXNetError('ImageDetRecordIter: %s holds no records (for part %s of %s)'
                             % (self.source.uri, kwargs.get('part_index', 0),
                                kwargs.get('num_parts', 1)))
        self.labels = DetLabelSource(kwargs.get('path_imglist'), self.label_width,
                                     self.source.uri)
        widest = self.labels.max_width(self.source)
        pad_width = int(kwargs.get('label_pad_width', 0))
        if widest > pad_width:
            if pad_width > 0:
                raise MXNetError('ImageDetRecordIOParser: label_pad_width: %d smaller than '
                                 'estimated width: %d' % (pad_width, widest))
            pad_width = widest
        self.label_pad_width = pad_width
        self.label_pad_value = float(kwargs.get('label_pad_value', -1.0))
        if _flag(kwargs.get('verbose', True)):
            logging.info('ImageDetRecordIOParser: %s, label padding width: %d',
                         self.source.uri, pad_width)
        self.seed_aug = kwargs.get('seed_aug')
        self.mirror = (False, False)
        self._plan = _Plan(len(self.source), self.batch_size,
                           _flag(kwargs.get('round_batch', True)),
                           _flag(kwargs.get('shuffle')), int(kwargs.get('seed', 0)))
        self._threads = max(1, int(kwargs.get('preprocess_threads', 4)))
        self._prefetch = max(1, int(kwargs.get('prefetch_buffer', 4)))
        from concurrent.futures import ThreadPoolExecutor  # pylint: disable=import-outside-toplevel
        self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix='ImageDetRecordIter')
        from ..context import Context  # pylint: disable=import-outside-toplevel
        self._ctx = Context('cpu', 0)
        self._image_counter = 0
        self.norm = Normalizer(_det_normalize_kwargs(kwargs, data_shape[0]), self.dtype,
                               data_shape)
        if self.norm.needs_mean_image:
            self.norm.set_mean_image(self._compute_mean())
        self.provide_data = [DataDesc(kwargs.get('data_name', 'data'),
                                      (self.batch_size,) + data_shape, self.dtype)]
        self.provide_label = [DataDesc(kwargs.get('label_name', 'softmax_label'),
                                       (self.batch_size, pad_width + 4), np.float32)]
        self._start_epoch()

    _work = staticmethod(process_det_image)

    def _label_buffer(self):
        return np.full((self.batch_size, self.label_pad_width + 4), self.label_pad_value,
                       np.float32)

    def _flat_label(self):
        return False
