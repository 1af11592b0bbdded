"""numba kernel of the column sums of a C-ordered matrix accumulated in float64 (imported only
when numba is present and the compiled kernels are enabled, see ``ops.jit``): FullyConnected's
bias gradient. Rows are added one after the other, as numpy's ``add.reduce(axis=0,
dtype=float64)`` adds them, so the sums are bit-identical to it; what goes away is numpy's
buffered cast of every element to float64 before the additions."""
import numpy as np
from numba import njit

__all__ = ['column_sums_into']


@njit(cache=True, boundscheck=False, nogil=True)
def column_sums_into(a, out):
    """out[j] = sum over i of a[i, j] in float64, rounded once to out's dtype."""
    rows, cols = a.shape
    acc = np.zeros(cols, np.float64)
    for i in range(rows):
        for j in range(cols):
            acc[j] += np.float64(a[i, j])
    for j in range(cols):
        out[j] = acc[j]
