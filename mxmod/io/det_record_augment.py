"""The augmentation of ImageDetRecordIter, MXNet 1.9.1's ``det_aug_default``: its parameters
(DetAugmentParam, checked as MXNet checks them), detection labels with their boxes moved by
each step, colour jitter in HLS, mirror, random padding, constrained random crops (sampled per
crop sampler, kept by overlap or centre rules) and the final resize."""
import math

import numpy as np

from ..base import MXNetError
from .image_record_aug import _interp, _resize_short


_EMIT_MODES = {'center': 0, 'overlap': 1}
_RESIZE_MODES = {'force': 0, 'shrink': 1, 'fit': 2}
_CROP_TUPLES = (('min_crop_scales', 0.0), ('max_crop_scales', 1.0),
                ('min_crop_aspect_ratios', 1.0), ('max_crop_aspect_ratios', 1.0),
                ('min_crop_overlaps', 0.0), ('max_crop_overlaps', 1.0),
                ('min_crop_sample_coverages', 0.0), ('max_crop_sample_coverages', 1.0),
                ('min_crop_object_coverages', 0.0), ('max_crop_object_coverages', 1.0))
_SCALARS = dict(resize=-1, rand_crop_prob=0.0, num_crop_sampler=1, emit_overlap_thresh=0.3,
                rand_pad_prob=0.0, max_pad_scale=1.0, max_random_hue=0, random_hue_prob=0.0,
                max_random_saturation=0, random_saturation_prob=0.0,
                max_random_illumination=0, random_illumination_prob=0.0,
                max_random_contrast=0.0, random_contrast_prob=0.0, rand_mirror_prob=0.0,
                fill_value=127, inter_method=1)


def _numbers(value, cast, name):
    """A tuple of numbers from a number, a sequence or a string such as '(0.1, 0.3)'."""
    if isinstance(value, str):
        text = value.strip().strip('()[]')
        parts = [p for p in text.replace(',', ' ').split() if p]
        try:
            return tuple(cast(float(p)) for p in parts)
        except ValueError:
            raise MXNetError('ImageDetRecordIter: %s must be numbers, got %r'
                             % (name, value)) from None
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(cast(v) for v in value)
    return (cast(value),)


def _enum(value, table, name):
    if isinstance(value, str) and value in table:
        return table[value]
    if not isinstance(value, str) and value in table.values():
        return int(value)
    raise MXNetError('ImageDetRecordIter: invalid %s %r: expected one of %s'
                     % (name, value, ', '.join(table)))


class DetAugmentParam(object):
    """The ``det_aug_default`` parameters, read and checked as MXNet's augmenter does."""

    def __init__(self, data_shape, kwargs):
        self.data_shape = tuple(data_shape)
        for name, default in _SCALARS.items():
            value = kwargs.get(name, default)
            try:
                setattr(self, name, type(default)(float(value)) if isinstance(default, int)
                        else float(value))
            except (TypeError, ValueError):
                raise MXNetError('ImageDetRecordIter: %s must be a number, got %r'
                                 % (name, value)) from None
        self.crop_emit_mode = _enum(kwargs.get('crop_emit_mode', 'center'), _EMIT_MODES,
                                    'crop_emit_mode')
        self.resize_mode = _enum(kwargs.get('resize_mode', 'force'), _RESIZE_MODES,
                                 'resize_mode')
        if not (0 <= self.inter_method <= 4 or self.inter_method in (9, 10)):
            raise MXNetError('ImageDetRecordIter: invalid inter_method %d: valid values are '
                             '0, 1, 2, 3, 4, 9, 10' % self.inter_method)
        count = self.num_crop_sampler
        for name, default in _CROP_TUPLES + (('max_crop_trials', 25),):
            cast = int if name == 'max_crop_trials' else float
            values = _numbers(kwargs.get(name, (default,)), cast, name)
            if count == 1 and len(values) != 1:
                raise MXNetError('ImageDetRecordIter: %s has %d values, but num_crop_sampler '
                                 'is 1' % (name, len(values)))
            if count > 1:
                if len(values) == 1:
                    values = values * count
                elif len(values) != count:
                    raise MXNetError('ImageDetRecordIter: # of parameters/crop_samplers '
                                     'mismatch: %s has %d values for %d crop samplers'
                                     % (name, len(values), count))
            setattr(self, name, values)
        for i in range(max(count, 0)):
            self._check_sampler(i)
        if self.emit_overlap_thresh < 0:
            raise MXNetError('ImageDetRecordIter: emit_overlap_thresh must be >= 0, got %g'
                             % self.emit_overlap_thresh)

    def _check_sampler(self, i):
        def need(ok, what):
            if not ok:
                raise MXNetError('ImageDetRecordIter: crop sampler %d: %s' % (i, what))
        need(self.min_crop_scales[i] >= 0, 'min_crop_scales must be >= 0')
        need(self.max_crop_scales[i] <= 1, 'max_crop_scales must be <= 1')
        need(self.max_crop_scales[i] > self.min_crop_scales[i],
             'max_crop_scales must exceed min_crop_scales')
        need(self.min_crop_aspect_ratios[i] >= 0, 'min_crop_aspect_ratios must be >= 0')
        for low, high in (('min_crop_aspect_ratios', 'max_crop_aspect_ratios'),
                          ('min_crop_overlaps', 'max_crop_overlaps'),
                          ('min_crop_sample_coverages', 'max_crop_sample_coverages'),
                          ('min_crop_object_coverages', 'max_crop_object_coverages')):
            need(getattr(self, high)[i] >= getattr(self, low)[i],
                 '%s must be >= %s' % (high, low))

    @property
    def color_jitter(self):
        """Whether the HLS/contrast jitter runs."""
        return (self.random_hue_prob > 0 or self.random_saturation_prob > 0
                or self.random_illumination_prob > 0 or self.random_contrast_prob > 0)


def _box_intersection(a, b):
    """Area of the intersection of two (x, y, w, h) rectangles."""
    width = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    height = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0


class _DetLabel(object):
    """A raw detection label split into its header and objects (rows id, x1, y1, x2, y2, ...);
    objects with an empty box are dropped, as MXNet's parser does."""

    def __init__(self, raw, where):
        raw = np.asarray(raw, np.float32).ravel()
        if raw.size < 7:
            raise MXNetError('%s: a detection label needs at least 7 values (2 header + one '
                             'object of 5), got %d' % (where, raw.size))
        header_width, obj_width = int(raw[0]), int(raw[1])
        if header_width < 2 or header_width > raw.size:
            raise MXNetError('%s: invalid label header width %d (label of %d values)'
                             % (where, header_width, raw.size))
        if obj_width < 5:
            raise MXNetError('%s: invalid object width %d: each object needs id, xmin, ymin, '
                             'xmax, ymax' % (where, obj_width))
        if (raw.size - header_width) % obj_width:
            raise MXNetError('%s: label of %d values does not split into a header of %d and '
                             'objects of %d' % (where, raw.size, header_width, obj_width))
        self.header = raw[:header_width]
        objects = raw[header_width:].reshape(-1, obj_width)
        self.objects = objects[(objects[:, 3] > objects[:, 1]) &
                               (objects[:, 4] > objects[:, 2])].copy()

    def to_array(self):
        return np.concatenate([self.header, self.objects.ravel()])

    def project(self, box):
        """Move every box into the frame ``box`` (x, y, w, h) and clip it to [0, 1]."""
        return _project(self.objects, box)

    def mirror(self):
        left = self.objects[:, 1].copy()
        self.objects[:, 1] = 1.0 - self.objects[:, 3]
        self.objects[:, 3] = 1.0 - left

    def try_crop(self, box, param, idx):
        """Crop to ``box`` if some object meets the sampler's constraints and an object
        survives; return whether it did."""
        if not len(self.objects):
            return True
        limits = [(getattr(param, 'min_crop_' + k)[idx], getattr(param, 'max_crop_' + k)[idx])
                  for k in ('overlaps', 'sample_coverages', 'object_coverages')]
        active = [low > 0 or high < 1 for low, high in limits]
        if any(active):
            crop_area = box[2] * box[3]
            found = False
            for obj in self.objects:
                gt_box = (obj[1], obj[2], obj[3] - obj[1], obj[4] - obj[2])
                inter = _box_intersection(box, gt_box)
                gt_area = gt_box[2] * gt_box[3]
                measures = (inter / (crop_area + gt_area - inter) if inter > 0 else 0.0,
                            inter / crop_area, inter / gt_area)
                if all(not on or low <= m <= high
                       for on, (low, high), m in zip(active, limits, measures)):
                    found = True
                    break
            if not found:
                return False
        keep = []
        for k, obj in enumerate(self.objects):
            if param.crop_emit_mode == 0:
                cx, cy = (obj[1] + obj[3]) * 0.5, (obj[2] + obj[4]) * 0.5
                inside = box[0] <= cx < box[0] + box[2] and box[1] <= cy < box[1] + box[3]
            else:
                gt_box = (obj[1], obj[2], obj[3] - obj[1], obj[4] - obj[2])
                inside = _box_intersection(box, gt_box) / (gt_box[2] * gt_box[3]) > \
                    param.emit_overlap_thresh
            if inside:
                keep.append(k)
        if not keep:
            return False
        self.objects = _project(self.objects[keep], box)
        return True


def _project(objects, box):
    out = objects.copy()
    out[:, 1] = np.maximum(0.0, (objects[:, 1] - box[0]) / box[2])
    out[:, 2] = np.maximum(0.0, (objects[:, 2] - box[1]) / box[3])
    out[:, 3] = np.minimum(1.0, (objects[:, 3] - box[0]) / box[2])
    out[:, 4] = np.minimum(1.0, (objects[:, 4] - box[1]) / box[3])
    return out


def _color(cv2, img, param, rng):
    """HLS shifts and contrast, each with its probability."""
    shifts = rng.uniform(-1.0, 1.0, 4)
    hue = int(shifts[0] * param.max_random_hue)
    sat = int(shifts[1] * param.max_random_saturation)
    lum = int(shifts[2] * param.max_random_illumination)
    contrast = float(np.float32(shifts[3] * param.max_random_contrast))
    coins = rng.random(4)
    hue = hue if coins[0] < param.random_hue_prob else 0
    sat = sat if coins[1] < param.random_saturation_prob else 0
    lum = lum if coins[2] < param.random_illumination_prob else 0
    contrast = contrast if coins[3] < param.random_contrast_prob else 0.0
    if img.shape[2] != 3 and (hue or sat or lum or abs(contrast) > 1e-3):
        raise MXNetError('ImageDetRecordIter: colour augmentation needs 3-channel images, '
                         'got %d channels' % img.shape[2])
    if hue or sat or lum:
        hls = cv2.cvtColor(img, cv2.COLOR_BGR2HLS).astype(np.int16)
        hls += np.array([hue, lum, sat], np.int16)
        np.clip(hls, 0, np.array([180, 255, 255], np.int16), out=hls)
        img = cv2.cvtColor(hls.astype(np.uint8), cv2.COLOR_HLS2BGR)
    if abs(contrast) > 1e-3:
        img = np.clip(np.rint(img.astype(np.float32) * np.float32(contrast + 1.0)),
                      0, 255).astype(np.uint8)
    return img


def _pad(cv2, img, label, param, rng):
    scale = np.float32(rng.uniform(1.0, param.max_pad_scale))
    if scale < 1.05:
        return img
    x0 = np.float32(rng.uniform(0.0, scale - 1))
    y0 = np.float32(rng.uniform(0.0, scale - 1))
    label.objects = label.project((-x0, -y0, scale, scale))
    rows, cols = img.shape[:2]
    left, top = int(x0 * cols), int(y0 * rows)
    right = int((scale - x0 - 1) * cols)
    bottom = int((scale - y0 - 1) * rows)
    out = cv2.copyMakeBorder(img, top, bottom, left, right, cv2.BORDER_CONSTANT,
                             value=(param.fill_value,) * 4)
    return out[:, :, None] if out.ndim == 2 else out


def _crop_box(param, idx, rng, img_ratio):
    """A random crop (x, y, w, h) in fractions of the image."""
    scale = np.float32(rng.uniform(param.min_crop_scales[idx], param.max_crop_scales[idx])) \
        + np.float32(1e-12)
    low = max(param.min_crop_aspect_ratios[idx] / img_ratio, scale * scale)
    high = min(param.max_crop_aspect_ratios[idx] / img_ratio, 1.0 / (scale * scale))
    ratio = math.sqrt(rng.uniform(low, high))
    width = min(1.0, scale * ratio)
    height = min(1.0, scale / ratio)
    x0 = rng.uniform(0.0, 1.0 - width)
    y0 = rng.uniform(0.0, 1.0 - height)
    return (float(np.float32(x0)), float(np.float32(y0)), float(np.float32(width)),
            float(np.float32(height)))


def _crop(img, label, param, rng):
    order = rng.permutation(param.num_crop_sampler)
    for idx in order:
        for _ in range(param.max_crop_trials[idx]):
            box = _crop_box(param, idx, rng, img.shape[1] / float(img.shape[0]))
            if label.try_crop(box, param, idx):
                rows, cols = img.shape[:2]
                left, top = int(box[0] * cols), int(box[1] * rows)
                width, height = int(box[2] * cols), int(box[3] * rows)
                return img[top:top + height, left:left + width]
    return img


def _final_resize(cv2, img, param, rng):
    rows, cols = img.shape[:2]
    want_h, want_w = param.data_shape[1], param.data_shape[2]
    if param.resize_mode == 0:
        new_h, new_w = want_h, want_w
    else:
        if param.resize_mode == 1 and rows <= want_h and cols <= want_w:
            return img
        ratio = min(np.float32(want_h) / np.float32(rows), np.float32(want_w) / np.float32(cols))
        new_h, new_w = int(ratio * rows), int(ratio * cols)
    if new_h <= 0 or new_w <= 0:
        raise MXNetError('ImageDetRecordIter: an augmented image of %dx%d cannot be resized to '
                         'fit %dx%d' % (rows, cols, want_h, want_w))
    out = cv2.resize(img, (new_w, new_h),
                     interpolation=_interp(param, rng, cols, rows, new_w, new_h))
    return out[:, :, None] if out.ndim == 2 else out


def det_augment(cv2, img, raw_label, param, rng, where):
    """Apply ``det_aug_default`` to an HxWxC BGR image and its raw label; return both."""
    if param.resize != -1:
        img = _resize_short(cv2, img, param, rng)
        if img.ndim == 2:
            img = img[:, :, None]
    label = _DetLabel(raw_label, where)
    if param.color_jitter:
        img = _color(cv2, img, param, rng)
    if param.rand_mirror_prob > 0 and rng.random() < param.rand_mirror_prob:
        label.mirror()
        img = img[:, ::-1]
    if param.rand_pad_prob > 0 and param.max_pad_scale > 1 and rng.random() < param.rand_pad_prob:
        img = _pad(cv2, np.ascontiguousarray(img), label, param, rng)
    if param.rand_crop_prob > 0 and param.num_crop_sampler > 0 and \
            rng.random() < param.rand_crop_prob:
        img = _crop(img, label, param, rng)
    img = _final_resize(cv2, np.ascontiguousarray(img), param, rng)
    return img, label.to_array()
