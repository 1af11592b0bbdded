"""NDArray creation: array, empty/zeros/ones/full, arange, *_like, concat/concatenate/stack, and
waitall."""
import sys

import numpy as np

from ..base import MXNetError, integer_types, mx_real_t
from ..context import current_context, device_scope, xp_of
from ..profiler.hooks import run_op
from ..profiler.state import PROFILER
from .ndarray import NDArray, _STYPES, _put, from_xp

def _ctx(ctx):
    return ctx if ctx is not None else current_context()


# creation functions recorded by the profiler under MXNet's operator names
_PROFILED = {'zeros': '_zeros', 'ones': '_ones', 'full': '_full'}


def _new(ctx, fn, *args, **kwargs):
    ctx = _ctx(ctx)
    xp = xp_of(ctx)
    if PROFILER.imperative and fn in _PROFILED:
        with device_scope(ctx):
            return from_xp(run_op(_PROFILED[fn], ctx, lambda: getattr(xp, fn)(*args, **kwargs)),
                           ctx)
    if xp is np:
        return from_xp(getattr(np, fn)(*args, **kwargs), ctx)
    with xp.cuda.Device(ctx.device_id):
        return from_xp(getattr(xp, fn)(*args, **kwargs), ctx)


def _shape(shape):
    return (shape,) if isinstance(shape, integer_types) else tuple(shape)


def array(source_array, ctx=None, dtype=None):
    """Create an NDArray from a list, numpy array or NDArray (float32 unless ``dtype`` or the source
    NDArray says otherwise); a sparse NDArray or scipy sparse matrix gives a sparse array."""
    if source_array.__class__.__module__.startswith('scipy.sparse') or \
            getattr(source_array, 'stype', 'default') != 'default':
        from . import sparse  # pylint: disable=import-outside-toplevel
        return sparse.array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, NDArray):
        dtype = source_array.dtype if dtype is None else dtype
        source_array = source_array.asnumpy()
    else:
        dtype = mx_real_t if dtype is None else dtype
    src = np.asarray(source_array, dtype=dtype)
    if src.ndim == 0:
        src = src.reshape((1,)) if not hasattr(source_array, 'shape') else src
    return from_xp(_put(np.array(src, copy=True), _ctx(ctx)), _ctx(ctx))


def _sparse_zeros(stype, shape, ctx, dtype):
    if stype not in _STYPES:
        raise MXNetError('unknown storage type %r; expected one of %s' % (stype, _STYPES))
    from . import sparse  # pylint: disable=import-outside-toplevel
    return sparse.zeros(stype, _shape(shape), ctx=ctx, dtype=dtype or mx_real_t)


def empty(shape, ctx=None, dtype=mx_real_t, stype=None):
    """Uninitialized array (a sparse one without non-zeros for ``stype`` row_sparse/csr)."""
    if stype not in (None, 'default'):
        return _sparse_zeros(stype, shape, ctx, dtype)
    return _new(ctx, 'empty', _shape(shape), dtype=dtype or mx_real_t)


def zeros(shape, ctx=None, dtype=mx_real_t, stype=None, **kwargs):
    """Array of zeros (of storage type ``stype``)."""
    if stype not in (None, 'default'):
        return _sparse_zeros(stype, shape, ctx, dtype)
    return _new(ctx, 'zeros', _shape(shape), dtype=dtype or mx_real_t)


def ones(shape, ctx=None, dtype=mx_real_t, stype=None, **kwargs):
    """Array of ones (converted to storage type ``stype`` when given)."""
    out = _new(ctx, 'ones', _shape(shape), dtype=dtype or mx_real_t)
    return out if stype in (None, 'default') else out.tostype(stype)


def full(shape, val, ctx=None, dtype=mx_real_t, out=None):
    """Array filled with ``val``."""
    res = _new(ctx, 'full', _shape(shape), val, dtype=dtype or mx_real_t)
    if out is not None:
        out[:] = res
        return out
    return res


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=mx_real_t):
    """Evenly spaced values in ``[start, stop)``, each repeated ``repeat`` times."""
    if stop is None:
        start, stop = 0, start
    vals = np.arange(start, stop, step).astype(dtype or mx_real_t)
    if repeat != 1:
        vals = np.repeat(vals, repeat)
    return array(vals, ctx=ctx, dtype=dtype or mx_real_t)


def zeros_like(other, ctx=None, dtype=None):
    """Zeros with the shape (and dtype and storage type) of ``other``."""
    return zeros(other.shape, ctx=ctx or other.context, dtype=dtype or other.dtype,
                 stype=other.stype)


def ones_like(other, ctx=None, dtype=None):
    """Ones with the shape (and dtype) of ``other``."""
    return ones(other.shape, ctx=ctx or other.context, dtype=dtype or other.dtype)


def concat(*arrays, **kwargs):
    """Concatenate along ``dim`` (default 1)."""
    dim = kwargs.pop('dim', 1)
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
        arrays = arrays[0]
    if any(a.stype != 'default' for a in arrays):
        from .register import invoke  # pylint: disable=import-outside-toplevel
        return invoke('Concat', tuple(arrays), {'dim': dim})
    ctx = arrays[0].context
    parts = [a.as_in_context(ctx)._data for a in arrays]
    with device_scope(ctx):
        return from_xp(xp_of(ctx).concatenate(parts, axis=dim), ctx)


def concatenate(arrays, axis=0, always_copy=True):
    """Concatenate a list of NDArrays along ``axis`` (a new array)."""
    if not arrays:
        raise ValueError('concatenate needs at least one array')
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    return concat(*arrays, dim=axis)


def stack(*arrays, **kwargs):
    """Stack along a new axis ``axis`` (default 0)."""
    axis = kwargs.pop('axis', 0)
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
        arrays = arrays[0]
    ctx = arrays[0].context
    parts = [a.as_in_context(ctx)._data for a in arrays]
    with device_scope(ctx):
        return from_xp(xp_of(ctx).stack(parts, axis=axis), ctx)


def waitall():
    """Wait for all pending device work (GPU streams) to finish."""
    cupy = sys.modules.get('cupy')
    if cupy is not None and cupy.is_available():
        for dev in range(cupy.cuda.runtime.getDeviceCount()):
            with cupy.cuda.Device(dev):
                cupy.cuda.get_current_stream().synchronize()
