"""Window helpers shared by convolution and pooling: per-offset strided views, im2col / col2im
over 1-3 spatial axes, a reusable scratch buffer for columns, layout conversion and parameter
normalisation.

Columns are laid out as (C, K, N, *out) (K = number of kernel offsets) so that a convolution is
one GEMM of the weight (F, C*K) with the columns viewed as (C*K, N*L). Windows are never
materialised for pooling: it reduces over the K strided views of the padded input directly."""
import itertools
import threading

import numpy

from ..base import MXNetError

CHANNEL_LAST = {'NWC': 1, 'NHWC': 2, 'NDHWC': 3}
CHANNEL_FIRST = {'NCW': 1, 'NCHW': 2, 'NCDHW': 3}
DEFAULT_LAYOUT = {1: 'NCW', 2: 'NCHW', 3: 'NCDHW'}
SCRATCH_LIMIT = 64 << 20
_SCRATCH = threading.local()


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


def _prod(dims):
    out = 1
    for d in dims:
        out *= int(d)
    return out


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


def scratch(xp, name, shape, dtype):
    """An uninitialised array for a temporary that never leaves an operator call (columns).

    On numpy the memory is one buffer per ``name`` and thread, grown as needed and then reused,
    so a training loop does not map and fault in fresh pages for every batch's columns (the
    operating system's cost of a new large array is comparable to the copy that fills it); like
    MXNet's temporary workspace it stays allocated, up to ``SCRATCH_LIMIT`` bytes per name.
    Larger requests, and cupy (whose memory pool already reuses blocks), get a new array."""
    dtype = numpy.dtype(dtype)
    size = int(numpy.prod(shape)) * dtype.itemsize
    if xp is not numpy or size > SCRATCH_LIMIT:
        return xp.empty(shape, dtype=dtype)
    buffers = _SCRATCH.__dict__.setdefault('buffers', {})
    buf = buffers.get(name)
    if buf is None or buf.size < size:
        buf = buffers[name] = numpy.empty(size, dtype=numpy.uint8)
    return buf[:size].view(dtype).reshape(shape)


def window_view(xp, xpad, kernel, stride, dilate, out, lead=2):
    """A read-only strided view (*lead axes, *kernel, *out, *trailing axes) of a padded array
    whose spatial axes follow ``lead`` leading axes: every window's elements at every kernel
    offset, without a copy."""
    st, nd = xpad.strides, len(kernel)
    sp = st[lead:lead + nd]
    strides = (st[:lead] + tuple(t * d for t, d in zip(sp, dilate))
               + tuple(t * s for t, s in zip(sp, stride)) + st[lead + nd:])
    shape = (tuple(xpad.shape[:lead]) + tuple(kernel) + tuple(out)
             + tuple(xpad.shape[lead + nd:]))
    return xp.lib.stride_tricks.as_strided(xpad, shape=shape, strides=strides)


def batch_last(xp, x, pad=None):
    """A contiguous (C, *spatial, N) copy of the channel-first ``x`` (N, C, ...), zero-padded by
    ``pad`` on the spatial axes."""
    nd = x.ndim - 2
    moved = x.transpose((1,) + tuple(range(2, 2 + nd)) + (0,))
    if not pad or not any(pad):
        return xp.ascontiguousarray(moved)
    res = xp.zeros((x.shape[1],) + tuple(n + 2 * p for n, p in zip(x.shape[2:], pad))
                   + (x.shape[0],), dtype=x.dtype)
    res[(slice(None),) + tuple(slice(p, p + n) for p, n in zip(pad, x.shape[2:]))] = moved
    return res


def im2col(xp, xpad, kernel, stride, dilate, out, layout='ckn', name='cols'):
    """Columns of a padded input, in the scratch buffer ``name`` (see :func:`scratch`), by one
    strided copy. ``layout`` 'ckn': (C, K, N, *out) and 'nck': (N, C, K, *out) from a
    channel-first ``xpad`` (N, C, ...); 'bl': (C, K, *out, N) from a batch-last ``xpad``
    (C, ..., N) (see :func:`batch_last`)."""
    nd, k = len(kernel), _prod(kernel)
    if layout == 'bl':
        c, n = xpad.shape[0], xpad.shape[-1]
        cols = scratch(xp, name, (c,) + tuple(kernel) + tuple(out) + (n,), xpad.dtype)
        cols[...] = window_view(xp, xpad, kernel, stride, dilate, out, lead=1)
        return cols.reshape((c, k) + tuple(out) + (n,))
    n, c = xpad.shape[:2]
    if layout == 'nck' and k == 1 and tuple(out) == tuple(xpad.shape[2:]):
        return xpad.reshape((n, c, 1) + tuple(out))     # a pointwise kernel reads the input as is
    view = window_view(xp, xpad, kernel, stride, dilate, out)
    if layout == 'nck':
        cols = scratch(xp, name, (n, c) + tuple(kernel) + tuple(out), xpad.dtype)
    else:
        spatial = tuple(range(2, 2 + nd))
        view = view.transpose((1,) + spatial + (0,) + tuple(a + nd for a in spatial))
        cols = scratch(xp, name, (c,) + tuple(kernel) + (n,) + tuple(out), xpad.dtype)
    cols[...] = view
    return cols.reshape(((n, c, k) if layout == 'nck' else (c, k, n)) + tuple(out))


def offset_views(arr, kernel, stride, dilate, out, lead=2):
    """One strided view of the padded array ``arr`` per kernel offset, in the order of im2col's
    K axis: the elements each offset of every window reads (or, for a gradient buffer, writes).
    The spatial axes follow ``lead`` leading axes (N, C for NC* arrays); trailing axes are kept."""
    views = []
    head = (slice(None),) * lead
    for off in _offsets(kernel):
        idx = tuple(_window(o * d, s, m) for o, d, s, m in zip(off, dilate, stride, out))
        views.append(arr[head + idx])
    return views


def col2im(xp, cols, padded_shape, kernel, stride, dilate, pad):
    """The adjoint of im2col: batch-last columns (C, K, *out, N) summed into a zero array of
    ``padded_shape`` (N, C, ...), returned cropped by ``pad`` as a contiguous (N, C, ...) array.

    The sums run in a (C, *spatial, N) buffer, so that every offset adds runs of out*N contiguous
    values (not runs of one output row)."""
    n, c = padded_shape[:2]
    nd = len(kernel)
    res = xp.zeros((c,) + tuple(padded_shape[2:]) + (n,), dtype=cols.dtype)
    for k, view in enumerate(offset_views(res, kernel, stride, dilate, cols.shape[2:-1], lead=1)):
        view += cols[:, k]
    crop = tuple(slice(p, size - p) for p, size in zip(pad, padded_shape[2:]))
    res = res[(slice(None),) + crop].transpose((nd + 1, 0) + tuple(range(1, nd + 1)))
    return xp.ascontiguousarray(res)


def crop_spatial(x, pad, size):
    """x[:, :, pad:pad+size] on every spatial axis."""
    idx = tuple(slice(p, p + s) for p, s in zip(pad, size))
    return x[(slice(None), slice(None)) + idx]
