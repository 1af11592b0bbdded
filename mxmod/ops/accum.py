"""Accurate reductions for layer statistics and parameter gradients.

numpy adds along a non-contiguous axis one element at a time, so a float32 sum over a large
batch axis (bias gradients, BatchNorm statistics) loses digits that MXNet keeps; on numpy these
helpers accumulate float16/float32 in float64 and return the input's dtype. cupy reduces in
trees already and uses the input dtype."""
import numpy as np

__all__ = ['acc_sum', 'acc_mean_var']


def acc_sum(xp, a, axis, keepdims=False):
    """``a.sum(axis)`` with float64 accumulation for low-precision floats on numpy."""
    if xp is np and a.dtype in (np.float16, np.float32):
        return a.sum(axis=axis, dtype=np.float64, keepdims=keepdims).astype(a.dtype)
    return a.sum(axis=axis, keepdims=keepdims)


def acc_mean_var(xp, a, axis):
    """Mean and biased variance over ``axis`` (kept as size-1 axes), accurately accumulated."""
    axes = axis if isinstance(axis, tuple) else (axis,)
    count = 1
    for ax in axes:
        count *= a.shape[ax]
    mean = acc_sum(xp, a, axes, keepdims=True) / a.dtype.type(count)
    centered = a - mean
    var = acc_sum(xp, centered * centered, axes, keepdims=True) / a.dtype.type(count)
    return mean, var
