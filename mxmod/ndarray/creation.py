"""NDArray creation: array, empty/zeros/ones/full, arange, *_like, concat/concatenate/stack, and
waitall."""
import sys

import numpy as np

from ..argcheck import ArgumentTypeError, ArgumentValueError
from ..base import MXNetError, integer_types, mx_real_t
from ..context import as_context, device_scope, xp_of
from ..profiler.hooks import run_op
from ..profiler.state import PROFILER
from .ndarray import NDArray, _STYPES, _put, from_xp

def _ctx(ctx):
    return as_context(ctx)


# creation functions recorded by the profiler under MXNet's operator names
_PROFILED = {'zeros': '_zeros', 'ones': '_ones', 'full': '_full'}


def _new(ctx, fn, *args, **kwargs):
    ctx = _ctx(ctx)
    xp = xp_of(ctx)
    try:
        dtype = np.dtype(kwargs.get('dtype', mx_real_t))
    except TypeError:
        raise ArgumentTypeError('%s: dtype %r is not a data type (for example \'float32\')'
                                % (fn, kwargs.get('dtype'))) from None
    try:
        return _create(ctx, xp, fn, *args, **kwargs)
    except MemoryError:
        raise MXNetError('%s: cannot allocate an array of shape %s and dtype %s (%d bytes): out '
                         'of memory' % (fn, args[0], dtype.name,
                                        int(np.prod(args[0], dtype=object)) * dtype.itemsize)
                         ) from None


def _create(ctx, xp, fn, *args, **kwargs):
    if PROFILER.imperative and fn in _PROFILED:
        with device_scope(ctx):
            return from_xp(run_op(_PROFILED[fn], ctx, lambda: getattr(xp, fn)(*args, **kwargs)),
                           ctx)
    if xp is np:
        return from_xp(getattr(np, fn)(*args, **kwargs), ctx)
    with xp.cuda.Device(ctx.device_id):
        return from_xp(getattr(xp, fn)(*args, **kwargs), ctx)


def _shape(shape):
    if isinstance(shape, integer_types):
        shape = (shape,)
    elif not isinstance(shape, (str, bytes)) and hasattr(shape, '__iter__'):
        shape = tuple(shape)
    else:
        raise ArgumentTypeError('shape must be an int or a tuple of ints, got %r (%s)'
                                % (shape, type(shape).__name__))
    for dim in shape:
        if isinstance(dim, bool) or not isinstance(dim, integer_types):
            raise ArgumentTypeError('shape must be an int or a tuple of ints, got %r' % (shape,))
        if dim < 0:
            raise ArgumentValueError('shape %s has a negative dimension' % (shape,))
    return tuple(int(d) for d in shape)


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
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise ArgumentTypeError('array: dtype %r is not a data type (for example \'float32\')'
                                % (dtype,)) from None
    try:
        src = np.asarray(source_array, dtype=dtype)
    except (ValueError, TypeError) as err:
        raise ArgumentTypeError('source_array must be array like object (a numpy array, NDArray '
                                'or nested lists of numbers of one shape) convertible to %s: %s'
                                % (dtype.name, err)) from None
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


def _into(out, value):
    """Fill ``out`` (an NDArray) with ``value`` and return it, or return a new array."""
    if out is None:
        return None
    out[:] = value
    return out


def _check_known(op_name, shape):
    """Outside numpy shape semantics a 0 dimension means 'unknown' and shape () 'no shape', so
    MXNet's creation operators refuse them there."""
    from ..util import is_np_shape  # pylint: disable=import-outside-toplevel
    if not is_np_shape() and (not shape or 0 in shape):
        raise MXNetError('Operator %s inferring shapes failed: shape %s has %s; zero-size and '
                         'scalar arrays need numpy shape semantics (with mx.np_shape(True):)'
                         % (op_name, shape, 'no dimensions' if not shape else 'a 0 (unknown) '
                            'dimension'))


def zeros(shape, ctx=None, dtype=mx_real_t, stype=None, out=None, **kwargs):
    """Array of zeros (of storage type ``stype``; written into ``out`` when given)."""
    if out is not None:
        return _into(out, 0)
    if stype not in (None, 'default'):
        return _sparse_zeros(stype, shape, ctx, dtype)
    _check_known('_zeros', _shape(shape))
    return _new(ctx, 'zeros', _shape(shape), dtype=dtype or mx_real_t)


def ones(shape, ctx=None, dtype=mx_real_t, stype=None, out=None, **kwargs):
    """Array of ones (converted to storage type ``stype`` when given; written into ``out``
    when given)."""
    if out is not None:
        return _into(out, 1)
    _check_known('_ones', _shape(shape))
    result = _new(ctx, 'ones', _shape(shape), dtype=dtype or mx_real_t)
    return result if stype in (None, 'default') else result.tostype(stype)


def full(shape, val, ctx=None, dtype=mx_real_t, out=None):
    """Array filled with ``val`` (written into ``out`` when given)."""
    if out is not None:
        return _into(out, val)
    if not _shape(shape):
        _check_known('_full', ())
    return _new(ctx, 'full', _shape(shape), val, dtype=dtype or mx_real_t)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=mx_real_t):
    """Evenly spaced values in ``[start, stop)`` (``[0, start)`` without ``stop``), each repeated
    ``repeat`` times: ``DType(start) + i * DType(step)`` for ``ceil((stop - start) / step)``
    values, as MXNet computes them."""
    from .register import invoke  # pylint: disable=import-outside-toplevel
    if infer_range:
        raise MXNetError('arange: infer_range needs a consumer to infer the length from; it is '
                         'only available for symbols (mx.sym.arange)')
    return invoke('_arange', (), {'start': start, 'stop': stop, 'step': step, 'repeat': repeat,
                                  'ctx': _ctx(ctx), 'dtype': np.dtype(dtype or mx_real_t).name})


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=mx_real_t):
    """``num`` evenly spaced values from ``start`` to ``stop`` (excluded when
    ``endpoint=False``), computed in float64 and cast to ``dtype`` (float32 by default)."""
    from .register import invoke  # pylint: disable=import-outside-toplevel
    return invoke('_linspace', (), {'start': start, 'stop': stop, 'num': num,
                                    'endpoint': endpoint, 'ctx': _ctx(ctx),
                                    'dtype': np.dtype(dtype or mx_real_t).name})


def zeros_like(other, ctx=None, dtype=None):
    """Zeros with the shape (and dtype and storage type) of ``other``."""
    return zeros(other.shape, ctx=ctx or other.context, dtype=dtype or other.dtype,
                 stype=other.stype)


def ones_like(other, ctx=None, dtype=None):
    """Ones with the shape (and dtype) of ``other``."""
    return ones(other.shape, ctx=ctx or other.context, dtype=dtype or other.dtype)


def _same_dtype(op_name, arrays):
    """MXNet's Concat/stack need one dtype for every input (no promotion)."""
    first = arrays[0]._data.dtype
    for i, arr in enumerate(arrays):
        if arr._data.dtype != first:
            raise MXNetError('%s: Non-uniform data type in inputs: input %d is %s, input 0 is %s'
                             % (op_name, i, arr._data.dtype, first))


def concat(*arrays, **kwargs):
    """Concatenate along ``dim`` (default 1)."""
    dim = kwargs.pop('dim', 1)
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
        arrays = arrays[0]
    if any(a.stype != 'default' for a in arrays) or _recorded(arrays):
        from .register import invoke  # pylint: disable=import-outside-toplevel
        return invoke('Concat', tuple(arrays), {'dim': dim})
    ctx = arrays[0].context
    _same_dtype('Concat', arrays)
    parts = [a.as_in_context(ctx)._data for a in arrays]
    with device_scope(ctx):
        return from_xp(_joined('Concat', 'dim', dim, parts, xp_of(ctx).concatenate), ctx)


def _joined(op_name, what, axis, parts, join):
    """``join(parts, axis=axis)``, shapes that cannot be joined refused naming them."""
    try:
        return join(parts, axis=axis)
    except (ValueError, IndexError, TypeError) as err:
        raise MXNetError('%s: cannot join inputs of shapes %s along %s=%r: %s'
                         % (op_name, [tuple(p.shape) for p in parts], what, axis, err)) from None


def concatenate(arrays, axis=0, always_copy=True):
    """Concatenate a list of NDArrays along ``axis`` (a new array)."""
    if not arrays:
        raise ValueError('concatenate needs at least one array')
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    return concat(*arrays, dim=axis)


def _recorded(arrays):
    """True when autograd records a call on ``arrays``."""
    from . import tape  # pylint: disable=import-outside-toplevel
    return tape.needs_recording(arrays)


def stack(*arrays, **kwargs):
    """Stack along a new axis ``axis`` (default 0)."""
    axis = kwargs.pop('axis', 0)
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
        arrays = arrays[0]
    if _recorded(arrays):       # through the operator, so that autograd records it
        from .register import invoke  # pylint: disable=import-outside-toplevel
        return invoke('stack', tuple(arrays), {'axis': axis})
    ctx = arrays[0].context
    _same_dtype('stack', arrays)
    parts = [a.as_in_context(ctx)._data for a in arrays]
    with device_scope(ctx):
        return from_xp(_joined('stack', 'axis', axis, parts, xp_of(ctx).stack), ctx)


def waitall():
    """Wait for all pending device work (GPU streams) to finish. As in MXNet, an error an
    operator met that was not raised by reading its result is raised here (the first one; the
    others are dropped)."""
    cupy = sys.modules.get('cupy')
    if cupy is not None and cupy.is_available():
        for dev in range(cupy.cuda.runtime.getDeviceCount()):
            with cupy.cuda.Device(dev):
                cupy.cuda.get_current_stream().synchronize()
    from .ndarray import raise_unraised  # pylint: disable=import-outside-toplevel
    raise_unraised()
