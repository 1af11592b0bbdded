"""``mx.nd.save`` / ``mx.nd.load``: MXNet's binary NDArray list format (``.params`` files).

The layout (see reference/PARAMS_FORMAT.md): a list header (magic 0x112, a reserved word, the array
count), one record per array, then the names (none when a list was saved). Every integer is
little-endian and nothing is padded. Records are written in MXNet 1.x's V2 layout; V1, pre-V1 and
V3 (numpy-shape) records are read too. Arrays are always loaded onto ``cpu(0)``.
"""
import math
import os
import struct

import numpy as np

from ..base import MXNetError, write_file_atomic
from ..context import Context
from ..util import is_np_shape, np_shape_is_global
from . import sparse_io
from .ndarray import NDArray, from_xp, to_numpy

__all__ = ['save', 'load', 'load_frombuffer', 'record_to_bytes', 'record_from_bytes', 'dumps',
           'loads']

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
DENSE = 0

DTYPE_OF_FLAG = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8,
                 4: np.int32, 5: np.int8, 6: np.int64, 7: np.bool_}
FLAG_OF_DTYPE = {np.dtype(v): k for k, v in DTYPE_OF_FLAG.items()}
_DEV_TYPES = (1, 2, 3, 5)
MAX_NDIM = 32
_SAVE_ERROR = 'save only accept dict str->NDArray or list of NDArray'


# ---- writing -----------------------------------------------------------------------------
def _record_bytes(arr):
    """One V2 record for a dense NDArray: header, the array's context, dtype flag, C-order data
    (sparse arrays: see :mod:`.sparse_io`)."""
    np_shape = is_np_shape()
    if arr.stype != 'default':
        if np_shape:
            raise MXNetError('only allow serializing ndarray of default storage type in np shape '
                             'semantics; got a %s array' % arr.stype)
        return sparse_io.record_bytes(arr, V2_MAGIC, FLAG_OF_DTYPE)
    host = to_numpy(arr._data)
    dtype = np.dtype(host.dtype).newbyteorder('=')
    if dtype not in FLAG_OF_DTYPE:
        raise TypeError('cannot save an NDArray of dtype %s; supported dtypes are %s'
                        % (dtype, ', '.join(str(np.dtype(d)) for d in DTYPE_OF_FLAG.values())))
    ctx = arr.context
    # under numpy shape semantics MXNet marks the record V3 (0-d and zero-size arrays are
    # ordinary arrays there), and only reads it back under the same semantics
    parts = [struct.pack('<Iii', V3_MAGIC if np_shape else V2_MAGIC, DENSE, host.ndim),
             struct.pack('<%dq' % host.ndim, *host.shape),
             struct.pack('<iii', ctx.device_typeid, ctx.device_id, FLAG_OF_DTYPE[dtype]),
             np.ascontiguousarray(host, dtype=dtype.newbyteorder('<')).tobytes()]
    return b''.join(parts)


def record_to_bytes(arr):
    """Serialize one NDArray as a single array record (what MXNet pickles as an NDArray's
    ``handle`` state and what ``NDArray::Save`` writes)."""
    if not isinstance(arr, NDArray):
        raise TypeError('record_to_bytes expects an NDArray, got %s' % type(arr).__name__)
    return _record_bytes(arr)


def _name_bytes(name):
    raw = name.encode('utf-8')
    return struct.pack('<Q', len(raw)) + raw


def _split_data(data):
    """Return (names, arrays) for what ``save`` accepts, validating like MXNet."""
    if isinstance(data, NDArray):
        return [], [data]
    if isinstance(data, dict):
        names, arrays = list(data.keys()), list(data.values())
        if any(not isinstance(k, str) for k in names) or \
                any(not isinstance(v, NDArray) for v in arrays):
            bad = [(k, type(v).__name__) for k, v in data.items()
                   if not isinstance(k, str) or not isinstance(v, NDArray)]
            raise TypeError('%s; got entries %s' % (_SAVE_ERROR, bad[:3]))
        return names, arrays
    if isinstance(data, list):
        bad = [type(v).__name__ for v in data if not isinstance(v, NDArray)]
        if bad:
            raise TypeError('%s; got list items of type %s' % (_SAVE_ERROR, sorted(set(bad))))
        return [], data
    raise ValueError('data needs to either be a NDArray, dict of str, NDArray pairs or a list '
                     'of NDarrays; got %s' % type(data).__name__)


def dumps(data):
    """Serialize an NDArray, a list of NDArrays or a dict str->NDArray to ``bytes``."""
    names, arrays = _split_data(data)
    parts = [struct.pack('<QQQ', LIST_MAGIC, 0, len(arrays))]
    parts.extend(_record_bytes(arr) for arr in arrays)
    parts.append(struct.pack('<Q', len(names)))
    parts.extend(_name_bytes(name) for name in names)
    return b''.join(parts)


def save(fname, data):
    """Save a list of arrays or a dict of str->array to a file in MXNet's binary format.

    Parameters
    ----------
    fname : str
        The file name.
    data : NDArray, list of NDArray or dict of str to NDArray
        What to save. A dict keeps its insertion order; a single NDArray is saved as a list of one.
        Arrays on GPUs are written from host copies (with their context recorded, as MXNet does).

    Examples
    --------
    >>> mx.nd.save('my_dict', {'x': mx.nd.zeros((2, 3))})
    >>> mx.nd.load('my_dict')['x'].shape
    (2, 3)
    """
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError('fname required to be a string, got %s' % type(fname).__name__)
    write_file_atomic(fname, dumps(data))


# ---- reading -----------------------------------------------------------------------------
class _Reader(object):
    """Sequential little-endian reader over a bytes buffer that names its source in errors."""

    def __init__(self, buf, source):
        self.buf = memoryview(buf)
        self.pos = 0
        self.source = source

    def fail(self, what):
        raise MXNetError('Invalid NDArray file format in %s: %s (at byte offset %d of %d)'
                         % (self.source, what, self.pos, len(self.buf)))

    def take(self, nbytes, what):
        if nbytes < 0 or self.pos + nbytes > len(self.buf):
            self.fail('file ends early: expected %d bytes of %s' % (nbytes, what))
        chunk = self.buf[self.pos:self.pos + nbytes]
        self.pos += nbytes
        return chunk

    def unpack(self, fmt, what):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))

    def peek(self, fmt):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            return None
        return struct.unpack_from(fmt, self.buf, self.pos)


def _scalar_follows(reader):
    """Whether a V2 record with ndim 0 is followed by context, dtype and one element.

    MXNet writes 0-d arrays this way but reads ndim 0 as an uninitialized ('none') array with
    nothing after the shape; the bytes that follow tell the two apart."""
    head = reader.peek('<iii')
    if head is None or head[0] not in _DEV_TYPES or not 0 <= head[1] < 65536 \
            or head[2] not in DTYPE_OF_FLAG:
        return False
    return reader.pos + 12 + np.dtype(DTYPE_OF_FLAG[head[2]]).itemsize <= len(reader.buf)


def _read_shape(reader, magic, index):
    """Read the shape of record ``index``; None means an uninitialized ('none') array."""
    what = 'shape of array %d' % index
    if magic in (V1_MAGIC, V2_MAGIC, V3_MAGIC):
        if magic != V1_MAGIC:
            (stype,) = reader.unpack('<i', 'storage type of array %d' % index)
            if stype != DENSE:
                return sparse_io.read_sparse(reader, stype, index, DTYPE_OF_FLAG, _DEV_TYPES)
        (ndim,) = reader.unpack('<i', what)
        if ndim < 0:
            return None
        if ndim > MAX_NDIM:
            reader.fail('array %d declares %d dimensions, at most %d are supported'
                        % (index, ndim, MAX_NDIM))
        shape = reader.unpack('<%dq' % ndim, what)
        if ndim == 0 and magic != V3_MAGIC:
            if magic == V1_MAGIC or not _scalar_follows(reader):
                return None
    else:  # pre-V1 layout: the first word was ndim, dims are uint32
        if magic > 32:
            reader.fail('array %d starts with 0x%08x, expected an NDArray record magic '
                        '(0x%08x)' % (index, magic, V2_MAGIC))
        shape = reader.unpack('<%dI' % magic, what)
        if magic == 0:
            return None
    if any(dim < 0 for dim in shape):
        return None
    return tuple(shape)


def _check_shape_semantics(magic, index):
    """V3 records (saved under numpy shape semantics) load only under them, and the other
    records only without them (unless the semantics are switched on globally), as in MXNet."""
    if magic == V3_MAGIC and not is_np_shape():
        raise MXNetError('array %d was saved in np shape semantics, must be loaded in the same '
                         'semantics: load it inside `with mx.np_shape(True)` or a function '
                         'decorated with `use_np_shape`' % index)
    if magic != V3_MAGIC and is_np_shape() and not np_shape_is_global():
        raise MXNetError('array %d was not saved in np shape semantics, but is being loaded in '
                         'np shape semantics: load it inside `with mx.np_shape(False)`' % index)


def _read_record(reader, index):
    """Read one array record; returns a host numpy array (or None for a 'none' array)."""
    (magic,) = reader.unpack('<I', 'the magic of array %d' % index)
    _check_shape_semantics(magic, index)
    shape = _read_shape(reader, magic, index)
    if shape is None or not isinstance(shape, tuple):
        return shape        # None ('none' array) or a sparse storage read whole
    dev_type, _dev_id, flag = reader.unpack('<iii', 'context and dtype of array %d' % index)
    if dev_type not in _DEV_TYPES:
        reader.fail('array %d has device type %d, expected one of %s'
                    % (index, dev_type, _DEV_TYPES))
    if flag not in DTYPE_OF_FLAG:
        reader.fail('array %d has dtype code %d, expected one of %s'
                    % (index, flag, sorted(DTYPE_OF_FLAG)))
    dtype = np.dtype(DTYPE_OF_FLAG[flag])
    count = math.prod(shape)  # exact: a mutated shape must not wrap around to a small size
    raw = reader.take(count * dtype.itemsize, 'data of array %d (%s %s)' % (index, dtype, shape))
    return np.frombuffer(raw, dtype=dtype.newbyteorder('<')).astype(dtype).reshape(shape)


def record_from_bytes(buf, source='an NDArray record'):
    """Parse one array record (V1/V2/V3 or pre-V1) from ``buf``.

    Returns
    -------
    numpy.ndarray or None
        The host array, or None for an uninitialized ('none') array."""
    reader = _Reader(bytes(buf), source)
    host = _read_record(reader, 0)
    if reader.pos != len(reader.buf):
        reader.fail('%d bytes follow the record' % (len(reader.buf) - reader.pos))
    return host


def _read_names(reader, count):
    (num_names,) = reader.unpack('<Q', 'the number of names')
    if num_names not in (0, count):
        reader.fail('%d names for %d arrays, expected 0 or %d' % (num_names, count, count))
    names = []
    for i in range(num_names):
        (length,) = reader.unpack('<Q', 'the length of name %d' % i)
        raw = reader.take(length, 'name %d' % i)
        try:
            names.append(bytes(raw).decode('utf-8'))
        except UnicodeDecodeError:
            reader.fail('name %d is not valid UTF-8' % i)
    return names


def _parse(buf, source):
    reader = _Reader(buf, source)
    magic, _reserved, count = reader.unpack('<QQQ', 'the list header (24 bytes)')
    if magic != LIST_MAGIC:
        reader.fail('list magic is 0x%x, expected 0x%x' % (magic, LIST_MAGIC))
    if count > len(buf):
        reader.fail('header claims %d arrays' % count)
    hosts = [_read_record(reader, i) for i in range(count)]
    names = _read_names(reader, count)
    ctx = Context('cpu', 0)
    arrays = [None if host is None else from_xp(host, ctx) for host in hosts]
    if names:
        return dict(zip(names, arrays))
    return arrays


def load(fname):
    """Load a list or dict of arrays saved by :func:`save` (or by MXNet).

    Parameters
    ----------
    fname : str
        The file name.

    Returns
    -------
    list of NDArray or dict of str to NDArray
        A dict when names were saved, else a list; every array is on ``cpu(0)``.
    """
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError('fname required to be a string, got %s' % type(fname).__name__)
    try:
        with open(fname, 'rb') as handle:
            buf = handle.read()
    except OSError as err:
        raise MXNetError('cannot open NDArray file %r: %s' % (os.fspath(fname), err.strerror)) \
            from err
    return _parse(buf, 'file %r' % os.fspath(fname))


def load_frombuffer(buf):
    """Load a list or dict of arrays from the bytes of a saved file.

    Parameters
    ----------
    buf : bytes
        The contents of a file written by :func:`save`.

    Returns
    -------
    list of NDArray or dict of str to NDArray
    """
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError('buf required to be bytes, got %s' % type(buf).__name__)
    return _parse(buf, 'buffer of %d bytes' % len(buf))


def loads(buf, source):
    """Parse the bytes of a saved file (like :func:`load_frombuffer`), naming ``source`` (the
    file the bytes were read from) in errors.

    Returns
    -------
    list of NDArray or dict of str to NDArray
    """
    return _parse(buf, source)
