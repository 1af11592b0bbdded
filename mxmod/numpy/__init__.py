"""``mx.np``: the part of MXNet 1.9.1's NumPy front end that mxmod implements: the
``mx.np.ndarray`` type (NumPy semantics for 0-d and zero-size shapes, indexing, reductions,
dtype promotion and printing; arithmetic and methods return mx.np.ndarrays), the creation
functions ``array, zeros, ones, full, empty, arange, eye, linspace, zeros_like, ones_like``,
and the dtype and constant names. Any other name raises an MXNetError that says so."""
import numpy as _np

from .. import ndarray as _nd
from ..base import numeric_types as _numeric_types
from ..context import current_context as _current_context
from ..ndarray import NDArray as _NDArray
from ..ndarray.creation import _check_known
from ..out_of_scope import out_of_scope_error as _out_of_scope_error
from .multiarray import ndarray, as_np as _as_np

__all__ = ['ndarray', 'array', 'zeros', 'ones', 'full', 'empty', 'arange', 'eye', 'linspace',
           'zeros_like', 'ones_like']

COVERED = ('the ndarray type and array, zeros, ones, full, empty, arange, eye, linspace, '
           'zeros_like and ones_like')

float16, float32, float64 = _np.float16, _np.float32, _np.float64
int8, int32, int64, uint8, bool_ = _np.int8, _np.int32, _np.int64, _np.uint8, _np.bool_
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _dtype(dtype, default=_np.float32):
    return _np.dtype(default if dtype is None else dtype)


def _order(order):
    if order != 'C':
        raise NotImplementedError('only order C is supported, got %r' % (order,))


def array(object, dtype=None, ctx=None):  # pylint: disable=redefined-builtin
    """An mx.np.ndarray holding a copy of ``object`` (nested sequences, numbers, a numpy
    array or an mx.np.ndarray).

    Parameters
    ----------
    object : array_like
    dtype : str or numpy.dtype, optional
        Default: the dtype of an array ``object``, else float32.
    ctx : Context, optional
    """
    ctx = _current_context() if ctx is None else ctx
    if isinstance(object, (ndarray, _np.ndarray)):
        dtype = object.dtype if dtype is None else dtype
        host = object.asnumpy() if isinstance(object, ndarray) else object
        host = _np.array(host, dtype=dtype)
    elif isinstance(object, _NDArray):
        raise ValueError("If you're trying to create a mxnet.numpy.ndarray from mx.nd.NDArray, "
                         "please use the zero-copy as_np_ndarray function.")
    else:
        if dtype is None:
            dtype = object.dtype if hasattr(object, 'dtype') else _np.float32
        try:
            host = _np.array(object, dtype=dtype)
        except Exception as err:  # pylint: disable=broad-except
            raise TypeError(str(err)) from None
    return _as_np(_nd.array(host, ctx=ctx, dtype=host.dtype))


def _filled(op_name, shape, value, dtype, order, ctx):
    _order(order)
    shape = _shape(shape)
    _check_known(op_name, shape)
    ctx = _current_context() if ctx is None else ctx
    host = _np.full(shape, value, dtype=_dtype(dtype))
    return _as_np(_nd.array(host, ctx=ctx, dtype=host.dtype))


def zeros(shape, dtype=None, order='C', ctx=None):
    """An array of zeros (float32 unless ``dtype`` says otherwise)."""
    return _filled('_npi_zeros', shape, 0, dtype, order, ctx)


def ones(shape, dtype=None, order='C', ctx=None):
    """An array of ones (float32 unless ``dtype`` says otherwise)."""
    return _filled('_npi_ones', shape, 1, dtype, order, ctx)


def full(shape, fill_value, dtype=None, order='C', ctx=None, out=None):
    """An array filled with ``fill_value`` (float32 unless ``dtype`` says otherwise)."""
    if isinstance(fill_value, _NDArray):
        fill_value = fill_value.asnumpy()
    result = _filled('_npi_full', shape, fill_value, dtype, order, ctx)
    if out is not None:
        out[...] = result
        return out
    return result


def empty(shape, dtype=_np.float32, order='C', ctx=None):
    """An uninitialized array."""
    _order(order)
    ctx = _current_context() if ctx is None else ctx
    return _as_np(_nd.empty(_shape(shape), ctx=ctx, dtype=_dtype(dtype)))


def _like(op_name, value, a, dtype, order, ctx, out):
    if not isinstance(a, _NDArray):
        raise TypeError('%s expects an mx.np.ndarray, got %s' % (op_name, type(a).__name__))
    result = _filled(op_name, a.shape, value, a.dtype if dtype is None else dtype, order,
                     a.context if ctx is None else ctx)
    if out is not None:
        out[...] = result
        return out
    return result


def zeros_like(a, dtype=None, order='C', ctx=None, out=None):
    """Zeros with the shape (and by default the dtype and context) of ``a``."""
    return _like('_npi_zeros_like', 0, a, dtype, order, ctx, out)


def ones_like(a, dtype=None, order='C', ctx=None, out=None):
    """Ones with the shape (and by default the dtype and context) of ``a``."""
    return _like('_npi_ones_like', 1, a, dtype, order, ctx, out)


def arange(start, stop=None, step=1, dtype=None, ctx=None):
    """Evenly spaced values in ``[start, stop)`` (``[0, start)`` without ``stop``); float32
    unless ``dtype`` says otherwise."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError('step cannot be 0')
    ctx = _current_context() if ctx is None else ctx
    return _as_np(_nd.arange(start, stop, step, ctx=ctx, dtype=_dtype(dtype)))


def eye(N, M=None, k=0, dtype=_np.float32, ctx=None, **kwargs):  # pylint: disable=invalid-name
    """An N x M array with ones on diagonal ``k``."""
    if kwargs:
        raise TypeError('eye got unexpected arguments %s' % sorted(kwargs))
    ctx = _current_context() if ctx is None else ctx
    host = _np.eye(N, M, k, dtype=_dtype(dtype))
    return _as_np(_nd.array(host, ctx=ctx, dtype=host.dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (excluded when ``endpoint`` is
    False); with ``retstep`` also the spacing."""
    if not isinstance(start, _numeric_types) or not isinstance(stop, _numeric_types):
        raise NotImplementedError('linspace: start and stop must be numbers')
    if axis != 0:
        raise NotImplementedError('linspace: only axis 0 is supported')
    if num < 0:
        raise ValueError('Number of samples, %d, must be non-negative.' % num)
    ctx = _current_context() if ctx is None else ctx
    host, step = _np.linspace(start, stop, num, endpoint=endpoint, retstep=True)
    host = host.astype(_dtype(dtype))
    result = _as_np(_nd.array(host, ctx=ctx, dtype=host.dtype))
    return (result, step) if retstep else result


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise _out_of_scope_error('mxmod.np', name, COVERED)
