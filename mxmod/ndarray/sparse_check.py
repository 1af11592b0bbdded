"""Validation of sparse index arrays (``check_format`` of CSRNDArray / RowSparseNDArray), with
the conditions of MXNet's NDArray::CheckFormat."""
import numpy as np

from ..base import MXNetError
from .ndarray import to_numpy


def _fail(what):
    raise MXNetError('check_format: %s' % what)


def _check_csr(storage, full_check):
    rows, cols = storage.shape
    indptr, indices = to_numpy(storage.indptr), to_numpy(storage.indices)
    if indptr.shape[0] != rows + 1:
        _fail('csr indptr has %d entries, expected rows + 1 = %d' % (indptr.shape[0], rows + 1))
    if indices.shape[0] != to_numpy(storage.data).shape[0]:
        _fail('csr indices (%d) and data (%d) differ in length'
              % (indices.shape[0], storage.data.shape[0]))
    if not full_check or rows == 0:
        return
    if indptr[0] != 0 or indptr[-1] != indices.shape[0] or np.any(np.diff(indptr) < 0):
        _fail('csr indptr must start at 0, never decrease and end at nnz = %d, got %s'
              % (indices.shape[0], indptr.tolist()))
    if indices.shape[0] and (indices.min() < 0 or indices.max() >= cols):
        _fail('csr column indices must lie in [0, %d), got %s' % (cols, indices.tolist()))
    for r in range(rows):
        row = indices[indptr[r]:indptr[r + 1]]
        if np.any(np.diff(row) <= 0):
            _fail('csr column indices of row %d must be ascending and unique, got %s'
                  % (r, row.tolist()))


def _check_rsp(storage, full_check):
    indices = to_numpy(storage.indices)
    if indices.shape[0] != to_numpy(storage.data).shape[0]:
        _fail('row_sparse indices (%d) and data rows (%d) differ'
              % (indices.shape[0], storage.data.shape[0]))
    if not full_check or not indices.shape[0]:
        return
    if indices.min() < 0 or indices.max() >= storage.shape[0]:
        _fail('row_sparse indices must lie in [0, %d), got %s'
              % (storage.shape[0], indices.tolist()))
    if np.any(np.diff(indices) <= 0):
        _fail('row_sparse indices must be ascending and unique, got %s' % indices.tolist())


def check_format(storage, full_check=True):
    """Raise MXNetError unless ``storage`` is a valid CSR / row_sparse layout."""
    if storage.stype == 'csr':
        _check_csr(storage, full_check)
    else:
        _check_rsp(storage, full_check)
