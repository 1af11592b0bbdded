"""numba kernel of the row scatter-add behind Embedding's, take's and gather_nd's gradients
(imported only when numba is present; ``indexing.scatter_rows`` keeps the numpy ``bincount``
it replaces as the reference).

The rows are added in float64 in the order they come, as ``bincount`` adds its weights, so the
result is bit-identical; only the (nrows, m) float64 accumulator and the rows addressed are
touched, instead of building a (k*m,) int64 index array and a float64 copy of the values."""
import numpy as np
from numba import njit

__all__ = ['scatter_rows']


@njit(cache=True, boundscheck=False, nogil=True)
def _scatter(rows, values, acc):
    width = values.shape[1]
    for k in range(rows.shape[0]):
        dst = acc[rows[k]]
        src = values[k]
        for j in range(width):
            dst[j] += src[j]


def scatter_rows(nrows, rows, values):
    """Sum of the rows of ``values`` (k, m) at positions ``rows`` (k,) in [0, nrows), as an
    (nrows, m) array of values' dtype."""
    acc = np.zeros((nrows, values.shape[1]), np.float64)
    _scatter(np.ascontiguousarray(rows, np.int64), np.ascontiguousarray(values), acc)
    return acc.astype(values.dtype)
