"""The augmentation ImageRecordIter applies to each decoded image (MXNet's ``aug_default``): resize of
the shorter edge, affine rotate/shear/scale/aspect, padding, random-resized or fixed-size crops,
brightness/contrast/saturation, HLS jitter and PCA lighting noise, in that order, on the BGR
image OpenCV decoded. The random draws use one numpy Generator per image."""
import math

import numpy as np

from ..base import MXNetError

__all__ = ['AugmentParam', 'augment']

# PCA lighting: eigen values times eigen vectors of ImageNet's RGB covariance (rows r, g, b)
_EIGVEC = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                    [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                    [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], np.float32)

_AUG_DEFAULTS = dict(resize=-1, rand_crop=False, random_resized_crop=False, max_rotate_angle=0,
                     max_aspect_ratio=0.0, min_aspect_ratio=None, max_shear_ratio=0.0,
                     max_crop_size=-1, min_crop_size=-1, max_random_scale=1.0,
                     min_random_scale=1.0, max_random_area=1.0, min_random_area=1.0,
                     max_img_size=1e10, min_img_size=0.0, brightness=0.0, contrast=0.0,
                     saturation=0.0, pca_noise=0.0, random_h=0, random_s=0, random_l=0,
                     rotate=-1, fill_value=255, inter_method=1, pad=0, rotate_list=None)


class AugmentParam(object):
    """The ``aug_default`` parameters of ImageRecordIter, read from its keyword arguments."""

    def __init__(self, data_shape, kwargs):
        self.data_shape = tuple(int(d) for d in data_shape)
        for name, default in _AUG_DEFAULTS.items():
            value = kwargs.get(name, default)
            if default is not None and value is not None and not isinstance(default, bool):
                value = type(default)(value)
            setattr(self, name, value)
        self.rand_crop = bool(int(self.rand_crop))
        self.random_resized_crop = bool(int(self.random_resized_crop))
        if isinstance(self.rotate_list, str):
            self.rotate_list = [int(v) for v in self.rotate_list.split(',') if v.strip()]
        if self.min_aspect_ratio is not None:
            self.aspect_range = (float(self.min_aspect_ratio), self.max_aspect_ratio)
        else:
            self.aspect_range = (1 - self.max_aspect_ratio, 1 + self.max_aspect_ratio)
        if self.inter_method not in (0, 1, 2, 3, 4, 9, 10):
            raise MXNetError('ImageRecordIter: invalid inter_method %d: valid values are '
                             '0, 1, 2, 3, 4, 9, 10' % self.inter_method)
        if self.random_resized_crop and (self.min_random_scale != 1 or self.max_random_scale != 1
                                         or self.min_crop_size != -1
                                         or self.max_crop_size != -1 or self.rand_crop):
            raise MXNetError('ImageRecordIter: random_resized_crop=True conflicts with '
                             'min/max_random_scale, min/max_crop_size and rand_crop')

    @property
    def needs_affine(self):
        """True when the affine warp (rotation, shear, scale, aspect, size limits) runs."""
        low, high = self.aspect_range
        return (self.max_rotate_angle > 0 or self.max_shear_ratio > 0 or self.rotate > 0
                or bool(self.rotate_list) or self.max_random_scale != 1
                or self.min_random_scale != 1
                or (not self.random_resized_crop and (low != 1 or high != 1))
                or self.max_img_size != 1e10 or self.min_img_size != 0)


def _interp(param, rng, old_w, old_h, new_w, new_h):
    """OpenCV interpolation code for ``inter_method`` (9: by the size change, 10: random)."""
    if param.inter_method == 9:
        if new_w > old_w and new_h > old_h:
            return 2
        if new_w < old_w and new_h < old_h:
            return 3
        return 1
    if param.inter_method == 10:
        return int(rng.integers(0, 5))
    return param.inter_method


def _resize_short(cv2, img, param, rng):
    rows, cols = img.shape[:2]
    if rows > cols:
        new_h, new_w = param.resize * rows // cols, param.resize
    else:
        new_h, new_w = param.resize, param.resize * cols // rows
    return cv2.resize(img, (new_w, new_h),
                      interpolation=_interp(param, rng, cols, rows, new_w, new_h))


def _affine(cv2, img, param, rng):
    """Rotation, shear, random scale and aspect ratio in one warpAffine."""
    shear = rng.random() * param.max_shear_ratio * 2 - param.max_shear_ratio
    angle = int(rng.integers(-param.max_rotate_angle, param.max_rotate_angle + 1))
    if param.rotate > 0:
        angle = param.rotate
    if param.rotate_list:
        angle = param.rotate_list[int(rng.integers(0, len(param.rotate_list)))]
    cos_a, sin_a = math.cos(angle / 180.0 * math.pi), math.sin(angle / 180.0 * math.pi)
    scale = ratio = 1.0
    if not param.random_resized_crop:
        scale = rng.random() * (param.max_random_scale - param.min_random_scale) \
            + param.min_random_scale
        low, high = param.aspect_range
        ratio = rng.random() * (high - low) + low
    hs = 2 * scale / (1 + ratio)
    ws = ratio * hs
    rows, cols = img.shape[:2]
    new_w = max(param.min_img_size, min(param.max_img_size, scale * cols))
    new_h = max(param.min_img_size, min(param.max_img_size, scale * rows))
    mat = np.array([[hs * cos_a - shear * sin_a * ws, hs * sin_a + shear * cos_a * ws, 0],
                    [-sin_a * ws, cos_a * ws, 0]], np.float32)
    mat[0, 2] = (new_w - (mat[0, 0] * cols + mat[0, 1] * rows)) / 2
    mat[1, 2] = (new_h - (mat[1, 0] * cols + mat[1, 1] * rows)) / 2
    fill = (param.fill_value,) * 3
    return cv2.warpAffine(img, mat, (int(new_w), int(new_h)),
                          flags=_interp(param, rng, cols, rows, new_w, new_h),
                          borderMode=cv2.BORDER_CONSTANT, borderValue=fill)


def _random_resized_crop(cv2, img, param, rng):
    """ImageNet-style crop of random area and aspect ratio, resized to data_shape (or None)."""
    low, high = param.aspect_range
    if param.max_random_area == 1 and param.min_random_area == 1 and low == 1 and high == 1:
        return None
    rows, cols = img.shape[:2]
    area = rows * cols
    for _ in range(10):
        target = area * rng.uniform(param.min_random_area, param.max_random_area)
        ratio = rng.uniform(low, high)
        y_area = int(round(math.sqrt(target / ratio)))
        x_area = int(round(math.sqrt(target * ratio)))
        if rng.random() > 0.5:
            y_area, x_area = x_area, y_area
        if y_area <= rows and x_area <= cols:
            y0 = int(rng.integers(0, rows - y_area + 1))
            x0 = int(rng.integers(0, cols - x_area + 1))
            out_h, out_w = param.data_shape[1], param.data_shape[2]
            return cv2.resize(img[y0:y0 + y_area, x0:x0 + x_area], (out_w, out_h),
                              interpolation=_interp(param, rng, x_area, y_area, out_w, out_h))
    return None


def _crop_size_crop(cv2, img, param, rng):
    """A square crop of random size in [min_crop_size, max_crop_size], resized to data_shape."""
    rows, cols = img.shape[:2]
    if not (cols >= param.max_crop_size and rows >= param.max_crop_size
            and param.max_crop_size >= param.min_crop_size):
        raise MXNetError('ImageRecordIter: input image size %dx%d smaller than max_crop_size %d'
                         % (cols, rows, param.max_crop_size))
    size = int(rng.integers(param.min_crop_size, param.max_crop_size + 1))
    y0, x0 = rows - size, cols - size
    if param.rand_crop:
        y0, x0 = int(rng.integers(0, y0 + 1)), int(rng.integers(0, x0 + 1))
    else:
        y0, x0 = y0 // 2, x0 // 2
    out_h, out_w = param.data_shape[1], param.data_shape[2]
    return cv2.resize(img[y0:y0 + size, x0:x0 + size], (out_w, out_h),
                      interpolation=_interp(param, rng, size, size, out_w, out_h))


def _fixed_crop(cv2, img, param, rng):
    """Crop data_shape's size (centre, or random with rand_crop), upscaling a smaller image."""
    out_h, out_w = param.data_shape[1], param.data_shape[2]
    rows, cols = img.shape[:2]
    interp = _interp(param, rng, cols, rows, out_w, out_h)
    if rows < out_h:
        cols = int(float(out_h) / rows * cols)
        img = cv2.resize(img, (cols, out_h), interpolation=interp)
        rows = out_h
    if cols < out_w:
        rows = int(float(out_w) / cols * rows)
        img = cv2.resize(img, (out_w, rows), interpolation=interp)
        cols = out_w
    y0, x0 = rows - out_h, cols - out_w
    if param.rand_crop:
        y0, x0 = int(rng.integers(0, y0 + 1)), int(rng.integers(0, x0 + 1))
    else:
        y0, x0 = y0 // 2, x0 // 2
    return img[y0:y0 + out_h, x0:x0 + out_w]


def _color_jitter(cv2, img, param, rng):
    """Brightness, contrast and saturation, applied in a random order."""
    alpha_b = 1.0 + rng.uniform(-param.brightness, param.brightness)
    alpha_c = 1.0 + rng.uniform(-param.contrast, param.contrast)
    alpha_s = 1.0 + rng.uniform(-param.saturation, param.saturation)
    for step in rng.permutation(3):
        if step == 0:
            img = cv2.convertScaleAbs(img, alpha=alpha_b) if img.dtype == np.uint8 else \
                img * alpha_b
        elif step == 1:
            gray_mean = cv2.mean(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY))[0]
            img = cv2.addWeighted(img, alpha_c, img, 0.0, (1 - alpha_c) * gray_mean)
        else:
            gray = cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2BGR)
            img = cv2.addWeighted(img, alpha_s, gray, 1 - alpha_s, 0.0)
    return img


def _hls_jitter(cv2, img, param, rng):
    draws = [(rng.random() + 4 * rng.random()) / 5 for _ in range(3)]
    shift_h = int(draws[0] * param.random_h * 2 - param.random_h)
    shift_s = int(draws[1] * param.random_s * 2 - param.random_s)
    shift_l = int(draws[2] * param.random_l * 2 - param.random_l)
    hls = cv2.cvtColor(img, cv2.COLOR_BGR2HLS).astype(np.int16)
    hls += np.array([shift_h, shift_l, shift_s], np.int16)
    np.clip(hls, 0, np.array([180, 255, 255], np.int16), out=hls)
    return cv2.cvtColor(hls.astype(np.uint8), cv2.COLOR_HLS2BGR)


def _pca_noise(img, param, rng):
    alpha = rng.normal(0, param.pca_noise, 3).astype(np.float32)
    rgb = _EIGVEC.dot(alpha)
    shift = np.trunc(rgb[::-1]).astype(np.int16)   # the image is BGR
    return np.clip(img.astype(np.int16) + shift, 0, 255).astype(np.uint8)


def augment(cv2, img, param, rng):
    """Apply ``aug_default`` to one decoded HxWxC uint8 image; return the HxWxC result."""
    if param.resize != -1:
        img = _resize_short(cv2, img, param, rng)
    if param.needs_affine:
        img = _affine(cv2, img, param, rng)
    if param.pad > 0:
        img = cv2.copyMakeBorder(img, param.pad, param.pad, param.pad, param.pad,
                                 cv2.BORDER_CONSTANT, value=(param.fill_value,) * 3)
    out = None
    if param.random_resized_crop:
        out = _random_resized_crop(cv2, img, param, rng)
    elif param.max_crop_size != -1 or param.min_crop_size != -1:
        out = _crop_size_crop(cv2, img, param, rng)
    img = out if out is not None else _fixed_crop(cv2, img, param, rng)
    if img.ndim == 2:
        img = img[:, :, None]
    if img.shape[2] == 3:
        if param.brightness > 0 or param.contrast > 0 or param.saturation > 0:
            img = _color_jitter(cv2, img, param, rng)
        if param.random_h or param.random_s or param.random_l:
            img = _hls_jitter(cv2, img, param, rng)
        if param.pca_noise > 0:
            img = _pca_noise(img, param, rng)
    return img
