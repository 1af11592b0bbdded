"""Sparse storage: the value and index arrays of row_sparse and CSR arrays (numpy or cupy).

A ``RowSparseStorage`` holds the non-zero rows of an array: ``data`` (nnr, *shape[1:]) and their
sorted, unique row numbers ``indices`` (nnr,). A ``CSRStorage`` holds a 2-D matrix in compressed
sparse row form: ``data`` (nnz,), column numbers ``indices`` (nnz,) and row pointers ``indptr``
(rows + 1,). Index arrays are int64, as MXNet's default aux type. The containers are mutable: an
in-place write to a sparse NDArray replaces the arrays its storage holds.

The storage objects are what a sparse NDArray wraps and what operators receive in place of a dense
array; they expose ``shape``, ``dtype``, ``ndim`` and ``size`` like an array."""
import numpy as np

from .base import MXNetError

__all__ = ['STYPES', 'RowSparseStorage', 'CSRStorage', 'stype_of', 'is_sparse', 'array_module',
           'to_dense', 'to_stype', 'rsp_from_dense', 'csr_from_dense', 'empty_storage',
           'rsp_positions', 'rsp_gather', 'rsp_align', 'csr_row_ids', 'add_values',
           'sorted_unique']

STYPES = ('default', 'row_sparse', 'csr')
INDEX_DTYPE = np.int64


def array_module(arr):
    """numpy for a numpy array, cupy for a cupy array."""
    if isinstance(arr, np.ndarray) or np.isscalar(arr):
        return np
    from .context import cupy_module  # pylint: disable=import-outside-toplevel
    return cupy_module()


def _prod(dims):
    total = 1
    for d in dims:
        total *= int(d)
    return total


class SparseStorage(object):
    """Common part of the two sparse layouts: shape, dtype and array-like properties."""
    __slots__ = ()
    stype = None
    __array_ufunc__ = None      # numpy defers arithmetic with a storage to the storage

    @property
    def dtype(self):
        """numpy dtype of the values."""
        return self.data.dtype

    @property
    def ndim(self):
        """Number of dimensions of the (dense) array."""
        return len(self.shape)

    @property
    def size(self):
        """Number of elements of the (dense) array."""
        return _prod(self.shape)

    @property
    def xp(self):
        """numpy or cupy, whichever holds the arrays."""
        return array_module(self.data)

    def aux(self):
        """The index arrays in MXNet's aux order."""
        raise NotImplementedError

    def assign(self, other):
        """Make this storage hold ``other``'s arrays (same layout)."""
        for name in self.__slots__:
            setattr(self, name, getattr(other, name))

    def astype(self, dtype):
        """A copy with values of ``dtype``."""
        out = self.copy()
        out.data = out.data.astype(dtype)
        return out

    def copy(self):
        """A deep copy."""
        out = object.__new__(type(self))
        for name in self.__slots__:
            value = getattr(self, name)
            setattr(out, name, value if name == 'shape' else value.copy())
        return out

    def __add__(self, other):
        return add_values(self, other)

    __radd__ = __add__

    def __repr__(self):
        return '<%s %s %s nnz=%d>' % (type(self).__name__, self.shape, self.dtype, self.data.size)


class RowSparseStorage(SparseStorage):
    """Non-zero rows ``data`` at sorted unique row numbers ``indices`` of an array of ``shape``."""
    __slots__ = ('data', 'indices', 'shape')
    stype = 'row_sparse'

    def __init__(self, data, indices, shape):
        self.data = data
        self.indices = indices
        self.shape = tuple(int(d) for d in shape)

    def aux(self):
        return [self.indices]

    @property
    def is_full(self):
        """True when every row is stored (indices is 0..rows-1)."""
        return self.indices.shape[0] == (self.shape[0] if self.shape else 0)


class CSRStorage(SparseStorage):
    """A 2-D matrix of ``shape`` in compressed sparse row form."""
    __slots__ = ('data', 'indices', 'indptr', 'shape')
    stype = 'csr'

    def __init__(self, data, indices, indptr, shape):
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.shape = tuple(int(d) for d in shape)

    def aux(self):
        return [self.indptr, self.indices]


def stype_of(value):
    """'default' for a dense array, else the storage's type."""
    return value.stype if isinstance(value, SparseStorage) else 'default'


def is_sparse(value):
    """True for a sparse storage."""
    return isinstance(value, SparseStorage)


def empty_storage(xp, stype, shape, dtype):
    """An all-zero storage of ``stype`` (no rows / no non-zeros)."""
    shape = tuple(int(d) for d in shape)
    if stype == 'row_sparse':
        return RowSparseStorage(xp.zeros((0,) + shape[1:], dtype=dtype),
                                xp.zeros((0,), dtype=INDEX_DTYPE), shape)
    if stype == 'csr':
        _check_2d(shape)
        return CSRStorage(xp.zeros((0,), dtype=dtype), xp.zeros((0,), dtype=INDEX_DTYPE),
                          xp.zeros((shape[0] + 1,), dtype=INDEX_DTYPE), shape)
    if stype == 'default':
        return xp.zeros(shape, dtype=dtype)
    raise MXNetError('unknown storage type %r; expected one of %s' % (stype, STYPES))


def _check_2d(shape):
    if len(shape) != 2:
        raise ValueError('csr storage needs a 2-D shape, got %s' % (tuple(shape),))


def to_dense(value):
    """The dense array of a storage (a dense array is returned as is)."""
    if not isinstance(value, SparseStorage):
        return value
    xp = value.xp
    out = xp.zeros(value.shape, dtype=value.dtype)
    if value.stype == 'row_sparse':
        if value.indices.shape[0]:
            out[value.indices] = value.data
        return out
    rows = csr_row_ids(value)
    if rows.shape[0]:
        out[rows, value.indices] = value.data
    return out


def rsp_from_dense(dense, keep_all=False):
    """The rows of ``dense`` holding a non-zero (every row with ``keep_all``)."""
    xp = array_module(dense)
    if dense.ndim == 0:
        raise ValueError('row_sparse storage needs at least one dimension')
    if keep_all:
        rows = xp.arange(dense.shape[0], dtype=INDEX_DTYPE)
        return RowSparseStorage(dense.copy(), rows, dense.shape)
    flat = dense.reshape(dense.shape[0], -1)
    rows = xp.nonzero(xp.any(flat != 0, axis=1))[0].astype(INDEX_DTYPE)
    return RowSparseStorage(dense[rows], rows, dense.shape)


def csr_from_dense(dense):
    """The non-zeros of a 2-D ``dense`` in CSR form."""
    xp = array_module(dense)
    if dense.ndim != 2:
        raise ValueError('cannot convert an array of shape %s to csr: csr storage is 2-D only'
                         % (tuple(dense.shape),))
    rows, cols = xp.nonzero(dense)
    counts = xp.bincount(rows, minlength=dense.shape[0]) if rows.shape[0] else \
        xp.zeros(dense.shape[0], dtype=INDEX_DTYPE)
    indptr = xp.concatenate([xp.zeros(1, dtype=INDEX_DTYPE),
                             xp.cumsum(counts).astype(INDEX_DTYPE)])
    return CSRStorage(dense[rows, cols], cols.astype(INDEX_DTYPE), indptr, dense.shape)


def to_stype(value, stype):
    """``value`` (dense array or storage) in storage type ``stype`` (itself when it already is)."""
    current = stype_of(value)
    if current == stype:
        return value
    if stype == 'default':
        return to_dense(value)
    if current == 'row_sparse' and stype == 'csr' and len(value.shape) == 2:
        value = to_dense(value)
    elif current == 'csr' and stype == 'row_sparse':
        value = to_dense(value)
    if stype == 'row_sparse':
        return rsp_from_dense(value)
    if stype == 'csr':
        return csr_from_dense(value)
    raise MXNetError('unknown storage type %r; expected one of %s' % (stype, STYPES))


def sorted_unique(xp, values):
    """The sorted distinct values of a 1-D integer array (a sort and a comparison: several times
    faster than ``unique``'s hashing for the few thousand row ids of a batch)."""
    if values.shape[0] < 2:
        return values.copy()
    ordered = xp.sort(values)
    keep = xp.empty(ordered.shape[0], dtype=bool)
    keep[0] = True
    xp.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def csr_row_ids(csr):
    """Row number of every stored element of a CSR storage."""
    xp = csr.xp
    counts = xp.diff(csr.indptr)
    return xp.repeat(xp.arange(csr.shape[0], dtype=INDEX_DTYPE), counts)


def rsp_positions(rsp, rows):
    """Position of each of ``rows`` in ``rsp.indices`` and whether it is stored there."""
    xp = rsp.xp
    if rsp.is_full:
        return rows, xp.ones(rows.shape, dtype=bool)
    pos = xp.searchsorted(rsp.indices, rows)
    found = pos < rsp.indices.shape[0]
    pos = xp.where(found, pos, 0)
    if rsp.indices.shape[0]:
        found &= rsp.indices[pos] == rows
    else:
        found[...] = False
    return pos, found


def rsp_gather(rsp, rows):
    """Dense values (len(rows), *shape[1:]) of ``rows`` of a row_sparse storage (absent: 0)."""
    xp = rsp.xp
    pos, found = rsp_positions(rsp, rows)
    if rsp.is_full:
        return rsp.data[rows]
    out = xp.zeros((rows.shape[0],) + tuple(rsp.shape[1:]), dtype=rsp.dtype)
    if rows.shape[0] and rsp.indices.shape[0]:
        out[found] = rsp.data[pos[found]]
    return out


def rsp_align(a, b):
    """Union of the rows of two row_sparse storages and both values on those rows (dense)."""
    xp = a.xp
    if a.indices.shape[0] == b.indices.shape[0] and bool(xp.all(a.indices == b.indices)):
        return a.indices, a.data, b.data
    rows = xp.union1d(a.indices, b.indices).astype(INDEX_DTYPE)
    return rows, rsp_gather(a, rows), rsp_gather(b, rows)


def add_values(a, b):
    """a + b for dense arrays and storages: row_sparse + row_sparse stays row_sparse, anything
    else with a dense or CSR operand is dense."""
    sa, sb = stype_of(a), stype_of(b)
    if sa == sb == 'row_sparse':
        rows, da, db = rsp_align(a, b)
        return RowSparseStorage(da + db, rows, a.shape)
    if sa == 'row_sparse' and sb == 'default':
        a, b = b, a
        sa, sb = sb, sa
    if sa == 'default' and sb == 'row_sparse':
        out = a.copy()
        if b.indices.shape[0]:
            out[b.indices] += b.data
        return out
    return to_dense(a) + to_dense(b)
