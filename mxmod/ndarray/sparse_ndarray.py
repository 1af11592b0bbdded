"""The sparse NDArray classes: ``CSRNDArray`` and ``RowSparseNDArray``.

Both wrap a storage object of :mod:`.sparse_storage` (only the non-zeros and their indices) in the
NDArray interface. Arithmetic and operator methods run through the operator library, which picks
a sparse kernel or falls back to dense computation as MXNet does."""
import warnings

import numpy as np

from ..base import MXNetError, numeric_types
from ..context import Context, device_scope
from .ndarray import NDArray, _put, from_xp, to_numpy
from ..sparse_storage import (CSRStorage, RowSparseStorage, STYPES, SparseStorage, csr_row_ids,
                             empty_storage, to_dense, to_stype)

__all__ = ['BaseSparseNDArray', 'CSRNDArray', 'RowSparseNDArray', 'wrap_storage',
           'storage_on', 'dense_data']

_AUX_NAMES = {'row_sparse': ('indices',), 'csr': ('indptr', 'indices')}


def storage_on(storage, ctx):
    """A copy of ``storage`` whose arrays live on ``ctx``."""
    out = object.__new__(type(storage))
    for name in storage.__slots__:
        value = getattr(storage, name)
        if name != 'shape':
            value = _put(value, ctx)
            value = value.copy() if value is getattr(storage, name) else value
        setattr(out, name, value)
    return out


def wrap_storage(storage, ctx):
    """The sparse NDArray of the class matching ``storage`` (no copy)."""
    cls = RowSparseNDArray if storage.stype == 'row_sparse' else CSRNDArray
    out = NDArray.__new__(cls)
    out._data = storage
    out._ctx = ctx
    return out


def dense_data(arr):
    """The dense numpy/cupy array of an NDArray (a conversion for sparse arrays)."""
    return to_dense(arr._data)


class BaseSparseNDArray(NDArray):
    """Base class of the sparse arrays; the storage is ``self._data``."""
    __slots__ = ()
    stype = None

    def __init__(self, handle=None, ctx=None):
        if handle is None:       # CSRNDArray(None): an empty array that pickle fills in
            handle = empty_storage(np, self.stype, (0, 0) if self.stype == 'csr' else (0,),
                                   np.float32)
            ctx = Context('cpu', 0)
        NDArray.__init__(self, handle, ctx)

    def __repr__(self):
        return '\n<%s %s @%s>' % (type(self).__name__, 'x'.join(str(x) for x in self.shape),
                                  self._ctx)

    def __bool__(self):
        return bool(self.tostype('default'))

    def __iter__(self):
        raise MXNetError('%s does not support iteration' % type(self).__name__)

    # ---- structure ----------------------------------------------------------------
    @property
    def _num_aux(self):
        """Number of index arrays (1 for row_sparse, 2 for csr)."""
        return len(_AUX_NAMES[self.stype])

    def _aux_type(self, i):
        """numpy type of the ``i``-th index array."""
        return self._data.aux()[i].dtype.type

    @property
    def _aux_types(self):
        return [self._aux_type(i) for i in range(self._num_aux)]

    def _component(self, array):
        return from_xp(array.copy(), self._ctx)

    @property
    def data(self):
        """A copy of the stored values as an NDArray."""
        return self._component(self._data.data)

    @data.setter
    def data(self, value):
        raise NotImplementedError('the data array of a %s cannot be set' % type(self).__name__)

    @property
    def indices(self):
        """A copy of the indices array as an NDArray."""
        return self._component(self._data.indices)

    @indices.setter
    def indices(self, value):
        raise NotImplementedError('the indices array of a %s cannot be set' % type(self).__name__)

    # ---- unsupported dense-only operations ------------------------------------------
    def _sync_copyfrom(self, source_array):
        raise NotImplementedError('_sync_copyfrom is not supported for %s' % type(self).__name__)

    def _at(self, idx):
        raise MXNetError('%s does not support _at' % type(self).__name__)

    def _slice(self, start, stop):
        raise MXNetError('%s does not support _slice' % type(self).__name__)

    def reshape(self, *shape, **kwargs):
        raise MXNetError('%s does not support reshape' % type(self).__name__)

    # ---- dense operations (through the operators, which fall back to dense) -----------
    def _op(self, name, **params):
        from .register import invoke  # pylint: disable=import-outside-toplevel
        return invoke(name, (self,), params)

    @property
    def T(self):  # pylint: disable=invalid-name
        """Transpose (a dense result)."""
        return self._op('transpose')

    def broadcast_to(self, shape):
        """Broadcast to ``shape`` (a dense result)."""
        return self._op('broadcast_to', shape=tuple(shape))

    def broadcast_like(self, other):
        """Broadcast to the shape of ``other`` (a dense result)."""
        return self.broadcast_to(other.shape)

    def expand_dims(self, axis):
        """Insert an axis of size 1 (a dense result)."""
        return self._op('expand_dims', axis=axis)

    def flatten(self):
        """Collapse all axes but the first (a dense result)."""
        return self._op('Flatten')

    def reshape_like(self, other):
        raise MXNetError('%s does not support reshape_like' % type(self).__name__)

    # ---- conversion ------------------------------------------------------------------
    def asnumpy(self):
        """A dense numpy copy."""
        return np.array(to_numpy(to_dense(self._data)), copy=True)

    def tostype(self, stype):
        """A copy with storage type ``stype``."""
        if stype not in STYPES:
            raise MXNetError('unknown storage type %r; expected one of %s' % (stype, STYPES))
        if {stype, self.stype} == {'row_sparse', 'csr'}:
            raise ValueError('cast_storage from %s to %s is not supported' % (self.stype, stype))
        with device_scope(self._ctx):
            value = to_stype(self._data, stype)
            if value is self._data:
                value = value.copy()
        return from_xp(value, self._ctx)

    def astype(self, dtype, copy=True):
        """A copy with values of ``dtype`` (itself when ``copy=False`` and the dtype matches)."""
        if not copy and np.dtype(dtype) == self._data.dtype:
            return self
        with device_scope(self._ctx):
            return wrap_storage(self._data.astype(np.dtype(dtype)), self._ctx)

    def copy(self):
        """A deep copy on the same context."""
        with device_scope(self._ctx):
            return wrap_storage(self._data.copy(), self._ctx)

    def copyto(self, other):
        """Copy into ``other`` (an NDArray of the same shape, whose storage type is kept) or
        onto a Context (returns a new array of this storage type)."""
        if isinstance(other, Context):
            return wrap_storage(storage_on(self._data, other), other)
        if isinstance(other, NDArray):
            if other is self:
                warnings.warn('You are attempting to copy an array to itself', RuntimeWarning)
                return False
            if other.stype not in ('default', self.stype):
                raise TypeError('copyto does not support destination NDArray stype '
                                + str(other.stype))
            if tuple(other.shape) != tuple(self.shape):
                raise MXNetError('copyto: shape mismatch, destination %s vs source %s'
                                 % (other.shape, self.shape))
            other._set(self._data)
            return other
        raise TypeError('copyto does not support type ' + str(type(other)))

    def as_in_context(self, context):
        """This array on ``context`` (itself when it already lives there)."""
        return self if context == self._ctx else self.copyto(context)

    def wait_to_read(self):
        """Block until pending writes finish."""
        from_xp(self._data.data, self._ctx).wait_to_read()

    def _set(self, value):
        """Replace the contents by ``value`` (an array, storage or scalar) in this storage type."""
        if isinstance(value, NDArray):
            value = value._data
        if isinstance(value, numeric_types):
            raise ValueError('Assigning numeric types to %s is not implemented yet'
                             % type(self).__name__)
        with device_scope(self._ctx):
            if not isinstance(value, SparseStorage):
                value = _put(value, self._ctx)
            elif value.xp is not self._data.xp:
                value = storage_on(value, self._ctx)
            if tuple(value.shape) != tuple(self.shape):
                raise MXNetError('cannot assign an array of shape %s to a %s of shape %s'
                                 % (tuple(value.shape), type(self).__name__, self.shape))
            value = to_stype(value, self.stype)
            if value.dtype != self._data.dtype:
                value = value.astype(self._data.dtype)
            elif value is not self._data and value.data is getattr(self._data, 'data', None):
                value = value.copy()
            self._data.assign(value)

    def _assign_full(self, key, value):
        """``x[:] = value`` for the sparse classes."""
        if not (isinstance(key, slice) and key == slice(None)):
            raise ValueError('%s only supports [:] for assignment, got %r'
                             % (type(self).__name__, key))
        if isinstance(value, NDArray):
            if value is not self:
                value.copyto(self)
            return
        if isinstance(value, (np.ndarray, np.generic)):
            self._set(np.asarray(value, dtype=self._data.dtype))
            return
        raise TypeError('type %s not supported' % str(type(value)))

    def check_format(self, full_check=True):
        """Raise MXNetError when the index arrays are not a valid layout."""
        from .sparse_check import check_format  # pylint: disable=import-outside-toplevel
        check_format(self._data, full_check)

    def __getstate__(self):
        """MXNet's pickled state: ``{'handle': bytearray(<one .params array record>)}``."""
        from .serialization import record_to_bytes  # pylint: disable=import-outside-toplevel
        return {'handle': bytearray(record_to_bytes(self))}

    def __setstate__(self, state):
        from .serialization import record_from_bytes  # pylint: disable=import-outside-toplevel
        storage = record_from_bytes(state['handle'], 'a pickled %s' % type(self).__name__)
        if not isinstance(storage, SparseStorage) or storage.stype != self.stype:
            raise MXNetError('pickled %s holds no %s array' % (type(self).__name__, self.stype))
        self._ctx = Context('cpu', 0)
        self._data = storage


class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row form: ``data``, column ``indices`` and row ``indptr``
    (the column numbers of row i are ``indices[indptr[i]:indptr[i+1]]``)."""
    __slots__ = ()
    stype = 'csr'

    def __reduce__(self):
        return CSRNDArray, (None,), self.__getstate__()

    @property
    def indptr(self):
        """A copy of the row pointer array as an NDArray."""
        return self._component(self._data.indptr)

    @indptr.setter
    def indptr(self, value):
        raise NotImplementedError('the indptr array of a CSRNDArray cannot be set')

    def __getitem__(self, key):
        from . import sparse  # pylint: disable=import-outside-toplevel
        rows = self.shape[0]
        if isinstance(key, (int, np.integer)):
            begin = int(key) + rows if key < 0 else int(key)
            if not 0 <= begin < rows:
                raise IndexError('index %d is out of bounds for a CSRNDArray with %d rows'
                                 % (key, rows))
            return sparse.slice(self, begin=begin, end=begin + 1)
        if isinstance(key, slice):
            if key.step is not None:
                raise ValueError('CSRNDArray only supports continuous slicing on axis 0')
            if key.start is None and key.stop is None:
                return self
            begin, end, _ = key.indices(rows)
            return sparse.slice(self, begin=begin, end=max(begin, end))
        if isinstance(key, tuple):
            raise ValueError('Multi-dimension indexing is not supported')
        raise ValueError('Undefined behaviour for {}'.format(key))

    def __setitem__(self, key, value):
        self._assign_full(key, value)

    def asscipy(self):
        """The matrix as a ``scipy.sparse.csr_matrix`` (a copy)."""
        import scipy.sparse as spsp  # pylint: disable=import-outside-toplevel
        s = self._data
        return spsp.csr_matrix((to_numpy(s.data).copy(), to_numpy(s.indices).copy(),
                                to_numpy(s.indptr).copy()), shape=self.shape, dtype=self.dtype)

    def _row_ids(self):
        return csr_row_ids(self._data)


class RowSparseNDArray(BaseSparseNDArray):
    """An array stored as its non-zero rows ``data`` at sorted row numbers ``indices``
    (``dense[indices[i]] = data[i]``); the other rows are zero."""
    __slots__ = ()
    stype = 'row_sparse'

    def __reduce__(self):
        return RowSparseNDArray, (None,), self.__getstate__()

    def __getitem__(self, key):
        if isinstance(key, slice) and key == slice(None):
            return self
        if isinstance(key, tuple):
            raise ValueError('Multi-dimension indexing is not supported')
        raise MXNetError('RowSparseNDArray only supports [:] for __getitem__, got %r' % (key,))

    def __setitem__(self, key, value):
        if isinstance(value, numeric_types) and isinstance(key, slice) and key == slice(None):
            with device_scope(self._ctx):
                xp = self._data.xp
                full = xp.full(self.shape, value, dtype=self._data.dtype)
                self._data.assign(RowSparseStorage(full, xp.arange(self.shape[0], dtype='int64'),
                                                   self.shape))
            return
        self._assign_full(key, value)

    def retain(self, *args, **kwargs):
        """The rows ``indices`` of this array (see :func:`mxmod.ndarray.sparse.retain`)."""
        from . import sparse  # pylint: disable=import-outside-toplevel
        return sparse.retain(self, *args, **kwargs)
