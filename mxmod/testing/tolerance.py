"""Default tolerances of ``mx.test_utils`` per dtype, and how a comparison picks them."""
import numbers

import numpy as np

__all__ = ['default_rtols', 'default_atols', 'default_numeric_eps', 'effective_dtype',
           'get_tolerance', 'get_tols', 'get_atol', 'get_rtol', 'get_etol']

_EXACT = ('bool', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64')


def _table(float16, float32, float64):
    table = {np.dtype(np.float16): float16, np.dtype(np.float32): float32,
             np.dtype(np.float64): float64}
    table.update({np.dtype(name): 0 for name in _EXACT})
    return table


def default_rtols():
    """Relative tolerance per dtype: float16 1e-2, float32 1e-4, float64 1e-5, integers 0."""
    return _table(1e-2, 1e-4, 1e-5)


def default_atols():
    """Absolute tolerance per dtype: float16 1e-1, float32 1e-3, float64 1e-20, integers 0."""
    return _table(1e-1, 1e-3, 1e-20)


def default_numeric_eps():
    """Finite-difference step per dtype (powers of two, exact as input deltas)."""
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def effective_dtype(dat):
    """The dtype whose tolerances apply to ``dat`` (an NDArray or numpy array).

    MXNet lowers float32 to float16 for TF32 math on Ampere GPUs; mxmod's cupy kernels keep
    float32 precision, so this is the array's own dtype."""
    return np.dtype(dat.dtype)


def get_tolerance(dat, tol, default_tol):
    """The tolerance for ``dat``: ``tol`` itself when a number, else its (or the default
    table's) entry for the effective dtype of ``dat``.

    Parameters
    ----------
    dat : NDArray or numpy.ndarray
    tol : float, dict of dtype to float, or None
    default_tol : dict of dtype to float
    """
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = tol or {}
    if dtype in tol:
        return tol[dtype]
    if dtype in default_tol:
        return default_tol[dtype]
    return 0 if dtype.kind in 'biu' else default_tol[np.dtype(np.float64)]


def get_tols(x, y, rtol, atol):
    """(rtol, atol) for comparing ``x`` and ``y``: the looser of the two arrays' tolerances."""
    x = np.array(x) if isinstance(x, numbers.Number) else x
    y = np.array(y) if isinstance(y, numbers.Number) else y
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol``, or the default absolute tolerance of ``dtype``."""
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """``rtol``, or the default relative tolerance of ``dtype``."""
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_etol(etol=None):
    """``etol`` (the tolerated fraction of mismatching elements), 0 by default."""
    return 0 if etol is None else etol
