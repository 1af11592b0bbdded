"""Window helpers shared by convolution and pooling: im2col / col2im over 1-3 spatial axes,
layout conversion, and parameter normalisation.

Columns are laid out as (C, K, N, *out) (K = number of kernel offsets) so that a convolution is
one GEMM of the weight (F, C*K) with the columns viewed as (C*K, N*L)."""
import itertools

from ..base import MXNetError

CHANNEL_LAST = {'NWC': 1, 'NHWC': 2, 'NDHWC': 3}
CHANNEL_FIRST = {'NCW': 1, 'NCHW': 2, 'NCDHW': 3}
DEFAULT_LAYOUT = {1: 'NCW', 2: 'NCHW', 3: 'NCDHW'}


def expand(op, name, value, nd, fill):
    """A per-axis tuple of length ``nd`` from a parameter (empty means ``fill`` on every axis)."""
    if not value:
        return (fill,) * nd
    if len(value) != nd:
        raise MXNetError('%s: %s=%s must have %d entries like the kernel' % (op, name, value, nd))
    return tuple(int(v) for v in value)


def to_channel_first(arr, layout):
    """Transpose a channel-last array (NHWC...) to channel-first; no-op for NC* layouts."""
    if layout not in CHANNEL_LAST:
        return arr
    nd = arr.ndim - 2
    return arr.transpose((0, nd + 1) + tuple(range(1, nd + 1)))


def from_channel_first(arr, layout):
    """Inverse of :func:`to_channel_first`."""
    if layout not in CHANNEL_LAST:
        return arr
    nd = arr.ndim - 2
    return arr.transpose((0,) + tuple(range(2, nd + 2)) + (1,))


def shape_to_cf(shape, layout):
    """A shape tuple in channel-first order."""
    if shape is None or layout not in CHANNEL_LAST:
        return shape
    return (shape[0], shape[-1]) + tuple(shape[1:-1])


def shape_from_cf(shape, layout):
    """A channel-first shape tuple back in ``layout`` order."""
    if shape is None or layout not in CHANNEL_LAST:
        return shape
    return (shape[0],) + tuple(shape[2:]) + (shape[1],)


def _offsets(kernel):
    return list(itertools.product(*[range(k) for k in kernel]))


def _window(start, stride, count):
    return slice(start, start + stride * (count - 1) + 1, stride)


def pad_spatial(xp, x, pad, value=0, extra=None):
    """Pad the spatial axes (2:) of ``x`` by ``pad`` before and ``pad`` (+ ``extra``) after."""
    extra = extra or (0,) * len(pad)
    if not any(pad) and not any(extra):
        return x
    widths = [(0, 0), (0, 0)] + [(p, p + e) for p, e in zip(pad, extra)]
    return xp.pad(x, widths, mode='constant', constant_values=value)


def im2col(xp, xpad, kernel, stride, dilate, out):
    """Columns (C, K, N, *out) of the already padded channel-first input ``xpad`` (N, C, ...)."""
    n, c = xpad.shape[:2]
    offs = _offsets(kernel)
    cols = xp.empty((c, len(offs), n) + tuple(out), dtype=xpad.dtype)
    for k, off in enumerate(offs):
        idx = tuple(_window(o * d, s, m) for o, d, s, m in zip(off, dilate, stride, out))
        cols[:, k] = xpad[(slice(None), slice(None)) + idx].swapaxes(0, 1)
    return cols


def windows(xp, xpad, kernel, stride, out):
    """Windows (N, C, K, *out) of a padded input (no dilation): the pooling view."""
    n, c = xpad.shape[:2]
    offs = _offsets(kernel)
    wins = xp.empty((n, c, len(offs)) + tuple(out), dtype=xpad.dtype)
    for k, off in enumerate(offs):
        idx = tuple(_window(o, s, m) for o, s, m in zip(off, stride, out))
        wins[:, :, k] = xpad[(slice(None), slice(None)) + idx]
    return wins


def col2im(xp, cols, padded_shape, kernel, stride, dilate, channels_first=True):
    """Sum columns back into a zero array of ``padded_shape`` (N, C, ...), the adjoint of im2col.

    ``cols`` is (C, K, N, *out) when ``channels_first`` is True, else (N, C, K, *out)."""
    res = xp.zeros(padded_shape, dtype=cols.dtype)
    offs = _offsets(kernel)
    out = cols.shape[3:]
    for k, off in enumerate(offs):
        idx = tuple(_window(o * d, s, m) for o, d, s, m in zip(off, dilate, stride, out))
        part = cols[:, k].swapaxes(0, 1) if channels_first else cols[:, :, k]
        res[(slice(None), slice(None)) + idx] += part
    return res


def crop_spatial(x, pad, size):
    """x[:, :, pad:pad+size] on every spatial axis."""
    idx = tuple(slice(p, p + s) for p, s in zip(pad, size))
    return x[(slice(None), slice(None)) + idx]
