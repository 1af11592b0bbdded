"""The per-image work of ImageRecordIter, run in its worker threads: read a record, take its
label, decode, augment, mirror and normalize into one slot of the batch buffer."""
import os

import numpy as np

from ..base import MXNetError
from ..recordio import unpack
from .image_record_aug import augment

__all__ = ['Normalizer', 'LabelSource', 'process_image']

_DECODE_FLAG = {1: 0, 3: 1, 4: -1}     # OpenCV imread flags by channel count
_RGB_ORDER = {1: [0], 3: [2, 1, 0], 4: [2, 1, 0, 3]}   # BGR(A) → RGB(A)


class Normalizer(object):
    """Turns an augmented HxWxC BGR uint8 image into the CHW RGB output of the batch's dtype."""

    def __init__(self, kwargs, dtype, data_shape):
        channels = data_shape[0]
        self.dtype = dtype
        self.mean_img_path = kwargs.get('mean_img') or ''
        names = ['r', 'g', 'b', 'a'][:channels] if channels > 1 else ['r']
        self.mean = np.array([float(kwargs.get('mean_' + n, 0.0)) for n in names],
                             np.float32).reshape(-1, 1, 1)
        self.std = np.array([float(kwargs.get('std_' + n, 1.0)) for n in names],
                            np.float32).reshape(-1, 1, 1)
        self.scale = float(kwargs.get('scale', 1.0))
        self.max_contrast = float(kwargs.get('max_random_contrast', 0.0))
        self.max_illumination = float(kwargs.get('max_random_illumination', 0.0))
        self.mean_image = None
        self.needs_mean_image = False
        if self.mean_img_path and dtype != np.uint8:
            if os.path.exists(self.mean_img_path):
                self.set_mean_image(self._load_mean(data_shape))
            else:
                self.needs_mean_image = True

    def _load_mean(self, data_shape):
        from ..ndarray import load  # pylint: disable=import-outside-toplevel
        loaded = load(self.mean_img_path)
        arrays = list(loaded.values()) if isinstance(loaded, dict) else list(loaded)
        if len(arrays) != 1:
            raise MXNetError('Invalid mean image file %s: it holds %d arrays, expected 1'
                             % (self.mean_img_path, len(arrays)))
        mean = arrays[0].asnumpy().astype(np.float32)
        if mean.shape != tuple(data_shape):
            raise MXNetError('mean image %s has shape %s, but data_shape is %s'
                             % (self.mean_img_path, mean.shape, tuple(data_shape)))
        return mean

    def set_mean_image(self, mean):
        """Use ``mean`` (C, H, W) instead of mean_r/g/b."""
        self.mean_image = mean
        self.needs_mean_image = False

    def save_mean_image(self, mean):
        """Write ``mean`` to the mean_img path as MXNet does (one array named mean_img)."""
        from ..ndarray import save, array  # pylint: disable=import-outside-toplevel
        save(self.mean_img_path, {'mean_img': array(mean)})

    def draws(self, rng):
        """Random contrast and illumination factors for one image (scale included)."""
        if self.dtype == np.uint8:
            return 1.0, 0.0
        contrast, illumination = 1.0, 0.0
        if self.max_contrast:
            contrast = rng.random() * self.max_contrast * 2 - self.max_contrast + 1
        if self.max_illumination:
            illumination = rng.random() * self.max_illumination * 2 - self.max_illumination
        return contrast * self.scale, illumination * self.scale

    def write(self, out, img, mirror, contrast, illumination):
        """Write ``img`` (HxWxC BGR uint8) into ``out`` (C, H, W)."""
        chw = img.transpose(2, 0, 1)
        if chw.shape[0] > 1:
            chw = chw[_RGB_ORDER[chw.shape[0]]]
        if mirror:
            chw = chw[:, :, ::-1]
        if self.dtype == np.uint8:
            out[...] = chw
            return
        mean = self.mean_image if self.mean_image is not None else self.mean
        if self.dtype == np.int8:
            diff = chw.astype(np.int16) - np.round(mean).astype(np.int16)
            out[...] = np.clip(diff, -128, 127)
            return
        buf = chw.astype(np.float32)
        buf -= mean
        buf *= contrast / self.std
        if illumination:
            buf += illumination / self.std
        out[...] = buf


class LabelSource(object):
    """Labels of a record: from a .lst file (by record id) or from the record's header."""

    def __init__(self, path_imglist, label_width, uri):
        self.label_width = label_width
        self.uri = uri
        self.table = None
        if path_imglist:
            self.table = _read_label_list(path_imglist, label_width)
            self.path = path_imglist

    def get(self, header, position):
        """float32 array of label_width labels for the record with ``header``."""
        if self.table is not None:
            try:
                return self.table[int(header.id)]
            except KeyError:
                raise MXNetError('%s has no label for image id %d (record %d of %s)'
                                 % (self.path, header.id, position, self.uri)) from None
        if header.flag > 0:
            if header.flag != self.label_width:
                raise MXNetError('rec file provide %d-dimensional label but label_width is set '
                                 'to %d (record %d of %s)'
                                 % (header.flag, self.label_width, position, self.uri))
            return header.label
        if self.label_width != 1:
            raise MXNetError('label_width must be 1 unless an imglist is provided or the rec '
                             'file is packed with multi dimensional label (%s holds one label '
                             'per record; label_width is %d)' % (self.uri, self.label_width))
        return header.label


def _read_label_list(path, label_width):
    table = {}
    try:
        with open(path) as handle:
            for lineno, line in enumerate(handle, 1):
                fields = line.strip().split('\t')
                if len(fields) < label_width + 1:
                    if line.strip():
                        raise MXNetError('%s line %d has %d fields; expected index, %d labels '
                                         'and a path' % (path, lineno, len(fields), label_width))
                    continue
                table[int(float(fields[0]))] = np.array(
                    [float(v) for v in fields[1:1 + label_width]], np.float32)
    except OSError as err:
        raise MXNetError('cannot open image list %s: %s' % (path, err.strerror)) from None
    return table


def _decode(cv2, it, payload, position):
    header, encoded = unpack(payload)
    channels = it.data_shape[0]
    img = cv2.imdecode(np.frombuffer(encoded, np.uint8), _DECODE_FLAG[channels])
    if img is None or img.size == 0:
        raise MXNetError('cannot decode the image of record %d (id %d) in %s: not a valid or '
                         'complete image' % (position, header.id, it.source.uri))
    if img.ndim == 2:
        img = img[:, :, None]
    if img.shape[2] != channels:
        raise MXNetError('Invalid image with index %d in %s. Expected %d channels, got %d'
                         % (header.id, it.source.uri, channels, img.shape[2]))
    return header, img


def process_image(it, position, seed, data, label, slot, norm):
    """Fill ``data[slot]`` and ``label[slot]`` from the ``position``-th record of ``it``."""
    from ..image.codec import require_cv2  # pylint: disable=import-outside-toplevel
    cv2 = require_cv2()
    header, img = _decode(cv2, it, it.source.read(position), position)
    label[slot] = it.labels.get(header, position)
    rng = np.random.default_rng(seed)
    img = augment(cv2, img, it.aug, rng)
    want = it.data_shape[1:]
    if img.shape[:2] != want:
        raise MXNetError('record %d of %s: the augmented image is %dx%d, data_shape needs %dx%d'
                         % (position, it.source.uri, img.shape[0], img.shape[1], *want))
    mirror = it.mirror[0] or (it.mirror[1] and rng.random() < 0.5)
    contrast, illumination = norm.draws(rng)
    norm.write(data[slot], img, mirror, contrast, illumination)
