"""Sparse array records of MXNet's NDArray file format (``.params``), as ``NDArray::Save`` writes
them: after the V2 magic and the storage type (1 = row_sparse, 2 = csr) come the storage shape
(the shape of the values), the array's shape, the context, the value dtype, for every index array
its dtype and shape (row_sparse: indices; csr: indptr, indices), then the value bytes and the
index bytes. Shapes are an int32 ndim followed by int64 dims; everything is little-endian."""
import struct

import math

import numpy as np

from ..base import MXNetError
from ..sparse_storage import CSRStorage, RowSparseStorage
from .ndarray import to_numpy

__all__ = ['STYPE_CODES', 'record_bytes', 'read_sparse']

STYPE_CODES = {'row_sparse': 1, 'csr': 2}
_AUX_COUNT = {1: 1, 2: 2}


def _shape_bytes(shape):
    return struct.pack('<i', len(shape)) + struct.pack('<%dq' % len(shape), *shape)


def record_bytes(arr, magic, flag_of_dtype):
    """One record for a sparse NDArray (``flag_of_dtype``: numpy dtype -> MXNet type flag)."""
    storage = arr._data
    data = np.ascontiguousarray(to_numpy(storage.data))
    aux = [np.ascontiguousarray(to_numpy(a)) for a in storage.aux()]
    for what, value in [('values', data)] + [('indices', a) for a in aux]:
        if np.dtype(value.dtype) not in flag_of_dtype:
            raise TypeError('cannot save a %s with %s of dtype %s' % (arr.stype, what, value.dtype))
    ctx = arr.context
    parts = [struct.pack('<Ii', magic, STYPE_CODES[arr.stype]), _shape_bytes(data.shape),
             _shape_bytes(arr.shape),
             struct.pack('<iii', ctx.device_typeid, ctx.device_id, flag_of_dtype[data.dtype])]
    for a in aux:
        parts.append(struct.pack('<i', flag_of_dtype[a.dtype]) + _shape_bytes(a.shape))
    parts.append(data.astype(data.dtype.newbyteorder('<')).tobytes())
    parts.extend(a.astype(a.dtype.newbyteorder('<')).tobytes() for a in aux)
    return b''.join(parts)


def _read_shape(reader, what):
    (ndim,) = reader.unpack('<i', what)
    if ndim < 0:
        reader.fail('%s has ndim %d' % (what, ndim))
    return tuple(reader.unpack('<%dq' % ndim, what))


def _read_array(reader, dtype, shape, what):
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    raw = reader.take(count * dtype.itemsize, what)
    return np.frombuffer(raw, dtype=dtype.newbyteorder('<')).astype(dtype).reshape(shape)


def read_sparse(reader, stype_code, index, dtype_of_flag, dev_types):
    """Read the rest of a sparse record (after the magic and storage type); returns a host
    storage, or None for an uninitialized ('none') array."""
    if stype_code not in _AUX_COUNT:
        reader.fail('array %d has storage type %d, expected 0 (dense), 1 (row_sparse) or 2 (csr)'
                    % (index, stype_code))
    storage_shape = _read_shape(reader, 'storage shape of array %d' % index)
    shape = _read_shape(reader, 'shape of array %d' % index)
    if not shape:
        return None
    dev_type, _dev_id, flag = reader.unpack('<iii', 'context and dtype of array %d' % index)
    if dev_type not in dev_types:
        reader.fail('array %d has device type %d, expected one of %s' % (index, dev_type, dev_types))
    aux_specs = []
    for k in range(_AUX_COUNT[stype_code]):
        (aux_flag,) = reader.unpack('<i', 'index dtype %d of array %d' % (k, index))
        aux_specs.append((aux_flag, _read_shape(reader, 'index shape of array %d' % index)))
    flags = [flag] + [f for f, _ in aux_specs]
    if any(f not in dtype_of_flag for f in flags):
        reader.fail('array %d has dtype codes %s, expected some of %s'
                    % (index, flags, sorted(dtype_of_flag)))
    if stype_code == 1 and math.prod(storage_shape) == 0 and aux_specs[0][1]:
        # MXNet sizes a row_sparse record's values by its row ids when the storage shape it
        # wrote is empty (a lazily grown optimizer state is saved that way)
        storage_shape = (aux_specs[0][1][0],) + tuple(shape[1:])
    data = _read_array(reader, np.dtype(dtype_of_flag[flag]), storage_shape,
                       'values of array %d' % index)
    aux = [_read_array(reader, np.dtype(dtype_of_flag[f]), s, 'indices of array %d' % index)
           for f, s in aux_specs]
    aux = [a.astype(np.int64, copy=False) for a in aux]
    if stype_code == 1:
        return RowSparseStorage(data, aux[0], shape)
    if len(shape) != 2:
        raise MXNetError('array %d: a csr array must be 2-D, got shape %s' % (index, shape))
    return CSRStorage(data, aux[1], aux[0], shape)
