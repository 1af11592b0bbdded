"""Image functions on HWC NDArrays (``mx.image.imread`` ... ``random_rotate``) with MXNet 1.9.1's
semantics; decoding, resizing and borders run in OpenCV as MXNet's did."""
import random
from numbers import Number

import numpy as np

from ..base import MXNetError, numeric_types
from ..context import Context
from ..ndarray.ndarray import NDArray, from_xp, to_numpy
from .codec import require_cv2

__all__ = ['imread', 'imdecode', 'imresize', 'scale_down', 'copyMakeBorder', 'resize_short',
           'fixed_crop', 'random_crop', 'center_crop', 'color_normalize', 'random_size_crop',
           'imrotate', 'random_rotate']


def _host(src):
    """numpy view of an NDArray (or array-like) image."""
    return to_numpy(src._data) if isinstance(src, NDArray) else np.asarray(src)


def _wrap(arr, like=None, out=None):
    if out is not None:
        out[:] = arr
        return out
    ctx = like.context if isinstance(like, NDArray) else Context('cpu', 0)
    return from_xp(np.ascontiguousarray(arr), Context('cpu', 0)).as_in_context(ctx)


def _decode(buf, flag, to_rgb, what):
    cv2 = require_cv2()
    data = np.frombuffer(bytes(buf) if not isinstance(buf, np.ndarray) else buf.tobytes(),
                         np.uint8)
    if data.size == 0:
        raise MXNetError('imdecode: %s is empty' % what)
    img = cv2.imdecode(data, int(flag))
    if img is None:
        raise MXNetError('imdecode: decoding failed, %s is not a valid image' % what)
    if img.ndim == 2:
        return img[:, :, None]
    if to_rgb and img.shape[2] == 3:
        return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
    if to_rgb and img.shape[2] == 4:
        return cv2.cvtColor(img, cv2.COLOR_BGRA2RGBA)
    return img


def imdecode(buf, flag=1, to_rgb=1, out=None):
    """Decode an image (JPEG, PNG, ...) into an HWC uint8 NDArray.

    Parameters
    ----------
    buf : bytes, bytearray, numpy.ndarray or NDArray
        The encoded image.
    flag : int, optional
        1 colour (default), 0 grayscale (HxWx1), -1 as stored.
    to_rgb : bool, optional
        Return RGB (default) instead of OpenCV's BGR.
    out : NDArray, optional
        Where to write the result.

    Returns
    -------
    NDArray
    """
    if isinstance(buf, NDArray):
        buf = buf.asnumpy().astype(np.uint8)
    if not isinstance(buf, (bytes, bytearray, memoryview, np.ndarray)):
        raise TypeError('imdecode: buf must be bytes, bytearray or a numpy/NDArray array, got %s'
                        % type(buf).__name__)
    return _wrap(_decode(buf, flag, to_rgb, 'the buffer'), out=out)


def imread(filename, flag=1, to_rgb=1, out=None):
    """Read and decode an image file into an HWC uint8 NDArray (see ``imdecode``)."""
    try:
        with open(filename, 'rb') as handle:
            buf = handle.read()
    except OSError as err:
        raise MXNetError('imread: cannot open image file %s: %s'
                         % (filename, err.strerror)) from None
    return _wrap(_decode(buf, flag, to_rgb, 'file %s' % filename), out=out)


def imresize(src, w, h, interp=1, out=None):
    """Resize an HWC image to width ``w`` and height ``h`` (OpenCV interpolation ``interp``:
    0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos)."""
    cv2 = require_cv2()
    img = np.ascontiguousarray(_host(src))
    if int(w) <= 0 or int(h) <= 0:
        raise MXNetError('imresize: size %dx%d must be positive' % (w, h))
    try:
        res = cv2.resize(img, (int(w), int(h)), interpolation=int(interp))
    except cv2.error as err:
        return _failed(err, (int(h), int(w)) + img.shape[2:], img.dtype, src, out)
    if res.ndim == 2:
        res = res[:, :, None]
    return _wrap(res, src, out)


def _failed(err, shape, dtype, like, out):
    """An OpenCV error, reported as MXNet's operator does: as an MXNetError when the result
    (zeros of its shape until then) is read."""
    from ..ndarray.ndarray import defer_error  # pylint: disable=import-outside-toplevel
    result = out if out is not None else _wrap(np.zeros(shape, dtype), like)
    defer_error([result], MXNetError(str(err).strip()))
    return result


def scale_down(src_size, size):
    """Shrink a crop ``size`` (w, h) to fit ``src_size`` (w, h), keeping its aspect ratio."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(), out=None):
    # pylint: disable=redefined-builtin,invalid-name
    """Pad an HWC image's border with OpenCV's border ``type`` (0 constant, 1 replicate,
    2 reflect, 3 wrap, 4 reflect-101); ``values`` (or ``value``) fill a constant border."""
    cv2 = require_cv2()
    img = np.ascontiguousarray(_host(src))
    fill = tuple(values) if len(values) else (value,) * 4
    try:
        res = cv2.copyMakeBorder(img, int(top), int(bot), int(left), int(right), int(type),
                                 value=fill)
    except cv2.error as err:
        shape = (img.shape[0] + int(top) + int(bot), img.shape[1] + int(left) + int(right))
        return _failed(err, shape + img.shape[2:], img.dtype, src, out)
    if res.ndim == 2:
        res = res[:, :, None]
    return _wrap(res, src, out)


def _get_interp_method(interp, sizes=()):
    """Interpolation code: 9 picks by the size change (sizes = old h, old w, new h, new w),
    10 picks at random."""
    if interp == 9:
        if sizes:
            old_h, old_w, new_h, new_w = sizes
            if new_h > old_h and new_w > old_w:
                return 2
            if new_h < old_h and new_w < old_w:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError('Unknown interp method %d' % interp)
    return interp


def resize_short(src, size, interp=2):
    """Resize so that the shorter edge is ``size``, keeping the aspect ratio."""
    h, w, _ = src.shape
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """Crop ``(x0, y0, w, h)`` and resize it to ``size`` (w, h) when given."""
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        sizes = (h, w, size[1], size[0])
        out = imresize(out, *size, interp=_get_interp_method(interp, sizes))
    return out


def _crop_placed(src, size, interp, place):
    """Crop ``size`` (scaled down to fit) at ``place(free_w, free_h)`` -> (x0, y0)."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0, y0 = place(w - new_w, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def random_crop(src, size, interp=2):
    """Crop ``size`` (w, h) at a random place (upscaled when the image is smaller).

    Returns
    -------
    NDArray, (x0, y0, w, h)
    """
    return _crop_placed(src, size, interp,
                        lambda fw, fh: (random.randint(0, fw), random.randint(0, fh)))


def center_crop(src, size, interp=2):
    """Crop ``size`` (w, h) from the centre (upscaled when the image is smaller).

    Returns
    -------
    NDArray, (x0, y0, w, h)
    """
    return _crop_placed(src, size, interp, lambda fw, fh: (int(fw / 2), int(fh / 2)))


def color_normalize(src, mean, std=None):
    """Subtract ``mean`` and divide by ``std`` (per channel), in place on ``src``."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """Crop a random area (fraction ``area`` or range) with a random aspect ratio in ``ratio``,
    resized to ``size``; falls back to a centre crop after 10 tries.

    Returns
    -------
    NDArray, (x0, y0, w, h)
    """
    h, w, _ = src.shape
    if 'min_area' in kwargs:
        area = kwargs.pop('min_area')
    if kwargs:
        raise TypeError('random_size_crop: unexpected keyword arguments %s' % sorted(kwargs))
    if isinstance(area, numeric_types):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * h * w
        new_ratio = np.exp(random.uniform(np.log(ratio[0]), np.log(ratio[1])))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def _bilinear_sample(img, xs, ys):
    """Sample img (C, H, W) at pixel coordinates (xs, ys); zero outside, as BilinearSampler."""
    _, h, w = img.shape
    x0, y0 = np.floor(xs).astype(np.int64), np.floor(ys).astype(np.int64)
    out = np.zeros((img.shape[0],) + xs.shape, np.float32)
    for dx in (0, 1):
        for dy in (0, 1):
            xi, yi = x0 + dx, y0 + dy
            weight = (1 - np.abs(xs - xi)) * (1 - np.abs(ys - yi))
            valid = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            vals = img[:, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]
            out += vals * (weight * valid)
    return out


def _rotate_one(img, rad, zoom_in, zoom_out):
    _, h, w = img.shape
    hs, ws = (h - 1) / 2.0, (w - 1) / 2.0
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    yy, xx = yy - hs, xx - ws
    cos_a, sin_a = np.cos(rad), np.sin(rad)
    gx = (xx * cos_a - yy * sin_a) / ws
    gy = (xx * sin_a + yy * cos_a) / hs
    if zoom_in or zoom_out:
        rho, ang = np.sqrt(h * h + w * w), np.arctan(h / float(w))
        corners = [(abs(rho * np.cos(ang + s * abs(rad))), abs(rho * np.sin(ang + s * abs(rad))))
                   for s in (1, -1)]
        max_x, max_y = max(c[0] for c in corners), max(c[1] for c in corners)
        scale = max(max_x / w, max_y / h) if zoom_out else min(w / max_x, h / max_y)
        gx, gy = gx * scale, gy * scale
    return _bilinear_sample(img, (gx + 1) * (w - 1) / 2.0, (gy + 1) * (h - 1) / 2.0)


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotate a float32 CHW image (or NCHW batch) by degrees (one angle per image for a batch),
    bilinear, zero-filled; ``zoom_in`` hides the padding, ``zoom_out`` keeps all of the image."""
    if zoom_in and zoom_out:
        raise ValueError('`zoom_in` and `zoom_out` cannot be both True')
    if src.dtype != np.float32:
        raise TypeError('Only `float32` images are supported by this function')
    imgs = _host(src)
    single = imgs.ndim == 3
    if single:
        if not isinstance(rotation_degrees, Number):
            raise TypeError('When a single image is passed the rotation angle is required to '
                            'be a scalar.')
        imgs = imgs[None]
    elif imgs.ndim != 4:
        raise ValueError('Only 3D and 4D are supported by this function')
    if isinstance(rotation_degrees, Number):
        angles = np.full(len(imgs), float(rotation_degrees))
    else:
        angles = _host(rotation_degrees).astype(np.float64).reshape(-1)
    if len(angles) != len(imgs):
        raise ValueError('The number of images must be equal to the number of rotation angles')
    out = np.stack([_rotate_one(img, np.pi * a / 180, zoom_in, zoom_out)
                    for img, a in zip(imgs, angles)])
    return _wrap(out[0] if single else out, src)


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """Rotate by a random angle in ``angle_limits`` (one per image of a batch)."""
    if src.ndim == 3:
        angle = np.random.uniform(*angle_limits)
    else:
        angle = from_xp(np.random.uniform(*angle_limits, size=src.shape[0]), Context('cpu', 0))
    return imrotate(src, angle, zoom_in=zoom_in, zoom_out=zoom_out)
