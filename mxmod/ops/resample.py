"""Separable resampling as matrices: every resize here maps each image row (and column) to a
fixed linear combination of input rows (columns), so a resize is ``A_h @ image @ A_w^T`` and its
gradient ``A_h^T @ dy @ A_w``.

The matrices follow the implementations MXNet calls: OpenCV's ``cv::resize`` for the image
operators (INTER_NEAREST, INTER_LINEAR, INTER_CUBIC, INTER_AREA, INTER_LANCZOS4, half-pixel
centres, edge replication) and MXNet's own kernels for contrib.BilinearResize2D (float32
coordinates, optional align_corners) and contrib.AdaptiveAvgPooling2D."""
import functools
import math

import numpy as np

from ..base import MXNetError

INTER_NEAREST, INTER_LINEAR, INTER_CUBIC, INTER_AREA, INTER_LANCZOS4 = range(5)


def _dense(rows, cols, weights, out_size, in_size):
    """A (out_size, in_size) float64 numpy matrix with ``weights`` added at (rows, cols)."""
    mat = np.zeros((out_size, in_size))
    np.add.at(mat, (rows, cols), weights)
    return mat


def _taps(out_size, in_size, offsets, coeffs, base):
    """Matrix from per-output base indices, tap offsets and coefficients, indices clamped to the
    image (OpenCV's edge replication)."""
    rows = np.repeat(np.arange(out_size), len(offsets))
    cols = np.clip((base[:, None] + np.asarray(offsets)[None, :]).ravel(), 0, in_size - 1)
    return _dense(rows, cols, coeffs.ravel(), out_size, in_size)


def _half_pixel(out_size, in_size):
    scale = in_size / out_size
    src = (np.arange(out_size) + 0.5) * scale - 0.5
    base = np.floor(src).astype(np.int64)
    return base, src - base


def _cubic_coeffs(t, a=-0.75):
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1)


def _lanczos4_coeffs(t):
    x = (np.arange(8)[None, :] - 3) - t[:, None]
    coeffs = np.sinc(x) * np.sinc(x / 4)
    coeffs[t < np.finfo(np.float32).eps] = [0, 0, 0, 1, 0, 0, 0, 0]
    return coeffs / coeffs.sum(axis=1, keepdims=True)


def _area(out_size, in_size):
    scale = in_size / out_size
    if scale < 1:     # enlarging: OpenCV's INTER_AREA is a linear interpolation of its own
        dst = np.arange(out_size)
        base = np.floor(dst * scale).astype(np.int64)
        frac = (dst + 1) - (base + 1) / scale
        frac = np.where(frac <= 0, 0, frac - np.floor(frac))
        edge = base >= in_size - 1
        frac = np.where(edge, 0, frac)
        base = np.where(edge, in_size - 1, base)
        return _taps(out_size, in_size, (0, 1), np.stack([1 - frac, frac], 1), base)
    mat = np.zeros((out_size, in_size))
    for d in range(out_size):       # box overlap of each output cell (out_size rows of setup)
        lo, hi = d * scale, (d + 1) * scale
        for s in range(int(math.floor(lo)), min(int(math.ceil(hi)), in_size)):
            mat[d, s] = (min(hi, s + 1) - max(lo, s)) / scale
    return mat


@functools.lru_cache(maxsize=256)
def opencv_matrix(out_size, in_size, interp):
    """The (out_size, in_size) matrix of ``cv::resize`` along one axis for ``interp``."""
    if interp == INTER_NEAREST:
        src = np.minimum(np.floor(np.arange(out_size) * (in_size / out_size)), in_size - 1)
        return _dense(np.arange(out_size), src.astype(np.int64), np.ones(out_size),
                      out_size, in_size)
    if interp == INTER_AREA:
        return _area(out_size, in_size)
    base, frac = _half_pixel(out_size, in_size)
    if interp == INTER_LINEAR:
        low = base < 0
        frac, base = np.where(low, 0, frac), np.where(low, 0, base)
        high = base >= in_size - 1
        frac, base = np.where(high, 0, frac), np.where(high, in_size - 1, base)
        return _taps(out_size, in_size, (0, 1), np.stack([1 - frac, frac], 1), base)
    if interp == INTER_CUBIC:
        return _taps(out_size, in_size, (-1, 0, 1, 2), _cubic_coeffs(frac), base)
    if interp == INTER_LANCZOS4:
        return _taps(out_size, in_size, range(-3, 5), _lanczos4_coeffs(frac), base)
    raise MXNetError('resize: interp must be 0 (nearest), 1 (bilinear), 2 (bicubic), 3 (area) or '
                     '4 (lanczos4), got %r' % (interp,))


@functools.lru_cache(maxsize=256)
def bilinear_resize_matrix(out_size, in_size, align_corners):
    """contrib.BilinearResize2D along one axis (MXNet's float32 source coordinates)."""
    f32 = np.float32
    if out_size > 1:
        scale = (f32(in_size - 1) / f32(out_size - 1) if align_corners
                 else f32(in_size) / f32(out_size))
    else:
        scale = f32(0)
    dst = np.arange(out_size, dtype=np.float32)
    if align_corners:
        src = scale * dst
    else:
        src = np.maximum(scale * (dst + f32(0.5)) - f32(0.5), f32(0))
    base = src.astype(np.int64)
    frac = (src - base.astype(np.float32)).astype(np.float64)
    step = (base < in_size - 1).astype(np.int64)
    rows = np.concatenate([np.arange(out_size)] * 2)
    cols = np.concatenate([base, base + step])
    return _dense(rows, cols, np.concatenate([1 - frac, frac]), out_size, in_size)


@functools.lru_cache(maxsize=256)
def adaptive_pool_matrix(out_size, in_size):
    """contrib.AdaptiveAvgPooling2D along one axis: averages over floor/ceil bins."""
    mat = np.zeros((out_size, in_size))
    for o in range(out_size):
        lo = int(math.floor(np.float32(o * in_size) / np.float32(out_size)))
        hi = int(math.ceil(np.float32((o + 1) * in_size) / np.float32(out_size)))
        mat[o, lo:hi] = 1.0 / (hi - lo)
    return mat


def apply(xp, image, mat_h, mat_w, axes):
    """``A_h @ image @ A_w^T`` over the (row, column) ``axes`` of ``image``."""
    ah, aw = xp.asarray(mat_h, dtype=image.dtype), xp.asarray(mat_w, dtype=image.dtype)
    moved = xp.moveaxis(image, axes, (-2, -1))
    out = xp.matmul(xp.matmul(ah, moved), aw.T)
    return xp.moveaxis(out, (-2, -1), axes)
