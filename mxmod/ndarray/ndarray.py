"""The NDArray: a device array (numpy on CPU, cupy on GPU) with MXNet's Python interface."""
import ctypes
import functools
import weakref

import numpy as np

from ..base import MXNetError, numeric_types, integer_types
from ..context import Context, current_context, device_scope, xp_of
from ..sparse_storage import SparseStorage, STYPES as _STYPES, to_dense, to_stype
from . import tape

__all__ = ['NDArray', 'array', 'empty', 'zeros', 'ones', 'full', 'arange', 'zeros_like',
           'ones_like', 'concat', 'concatenate', 'stack', 'waitall', 'from_xp', 'to_numpy']


# MXNet's module-level tables (type flags as in its C API and .params files)
_STORAGE_TYPE_UNDEFINED, _STORAGE_TYPE_DEFAULT, _STORAGE_TYPE_ROW_SPARSE, _STORAGE_TYPE_CSR = \
    -1, 0, 1, 2
_STORAGE_TYPE_STR_TO_ID = {'undefined': -1, 'default': 0, 'row_sparse': 1, 'csr': 2}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}
_DTYPE_NP_TO_MX = {None: -1, np.float32: 0, np.float64: 1, np.float16: 2, np.uint8: 3,
                   np.int32: 4, np.int8: 5, np.int64: 6, np.bool_: 7}
_DTYPE_MX_TO_NP = {v: k for k, v in _DTYPE_NP_TO_MX.items()}
_GRAD_REQ_MAP = {'null': 0, 'write': 1, 'add': 3}
py_slice = slice    # Python's slice (``slice`` names the operator in mx.nd)


def to_numpy(data):
    """Return a host numpy array for a numpy or cupy array (no copy for numpy)."""
    if isinstance(data, np.ndarray):
        return data
    if hasattr(data, 'get'):
        return data.get()
    return np.asarray(data)


def _put(data, ctx):
    """Place numpy/cupy ``data`` on ``ctx`` (a copy when it changes device)."""
    xp = xp_of(ctx)
    if xp is np:
        return to_numpy(data)
    with xp.cuda.Device(ctx.device_id):
        return xp.asarray(data)


def on_device(method):
    """Run an NDArray method with the array's GPU as cupy's current device (CPU: as is)."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if self._ctx.device_typeid != 2:
            return method(self, *args, **kwargs)
        with device_scope(self._ctx):
            return method(self, *args, **kwargs)
    return run


def from_xp(data, ctx):
    """Wrap an existing numpy/cupy array (or sparse storage) as an NDArray on ``ctx`` without
    copying."""
    if isinstance(data, SparseStorage):
        from .sparse_ndarray import wrap_storage  # pylint: disable=import-outside-toplevel
        return wrap_storage(data, ctx)
    out = NDArray.__new__(NDArray)
    out._data = data
    out._ctx = ctx
    return out


class NDArray(object):
    """An n-dimensional array on a device.

    Parameters
    ----------
    data : numpy.ndarray or cupy.ndarray
        The storage; it is used as is (no copy).
    ctx : Context, optional
        The device the storage lives on (default: the current context).
    """
    __slots__ = ('_data', '_ctx', '_ag', '_exc', '__weakref__')
    __array_priority__ = 1000.0

    def __init__(self, data, ctx=None, writable=True):
        if isinstance(data, ctypes.c_void_p):       # MXNet's NDArray(handle, writable)
            data, ctx = _from_handle(data, writable)
        self._ctx = ctx if ctx is not None else current_context()
        self._data = data

    @property
    def _as_parameter_(self):
        """What ctypes sees of this array: its handle (``ctypes.cast(arr, NDArrayHandle)``)."""
        key = id(self)
        _HANDLES[key] = self
        return key

    # ---- basic properties -------------------------------------------------
    @property
    def shape(self):
        """Tuple of array dimensions."""
        return tuple(self._data.shape)

    @property
    def dtype(self):
        """numpy dtype type of the elements (e.g. ``numpy.float32``)."""
        return self._data.dtype.type

    @property
    def size(self):
        """Number of elements."""
        return int(self._data.size)

    @property
    def ndim(self):
        """Number of dimensions."""
        return self._data.ndim

    @property
    def context(self):
        """The Context the array lives on."""
        return self._ctx

    ctx = context

    stype = 'default'
    """Storage type: 'default' (dense); the sparse classes say 'row_sparse' or 'csr'."""

    @on_device
    def tostype(self, stype):
        """A copy with storage type ``stype`` ('default', 'row_sparse' or 'csr' (2-D only))."""
        if stype not in _STYPES:
            raise MXNetError('unknown storage type %r; expected one of %s' % (stype, _STYPES))
        if stype == 'default':
            return carry_error(self, from_xp(self._data.copy(), self._ctx))
        return carry_error(self, from_xp(to_stype(self._data, stype), self._ctx))

    @property
    def handle(self):
        """The underlying numpy/cupy array (stands in for MXNet's C handle)."""
        return self._data

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return '\n%s\n<NDArray %s @%s>' % (str(self.asnumpy()), 'x'.join(str(x) for x in self.shape),
                                           self._ctx)

    def __bool__(self):
        if self.size == 1:
            return bool(self.asscalar())
        if self.size == 0:
            return False
        raise ValueError('The truth value of an NDArray with more than one element is ambiguous.')

    def __hash__(self):
        return id(self)

    def __iter__(self):
        for i in range(self.shape[0]):
            yield self[i]

    def __array__(self, dtype=None, copy=None):
        """numpy's view of the values (a host copy): ``np.asarray(x)``, ``np.all(x == 1)``."""
        host = to_numpy(self._data)
        if dtype is not None:
            host = host.astype(dtype, copy=False)
        return host.copy() if copy else host

    # ---- conversion --------------------------------------------------------
    def asnumpy(self):
        """Return a numpy copy of the array."""
        raise_deferred(self)
        return np.array(to_numpy(self._data), copy=True)

    def asscalar(self):
        """Return the only element of a size-1 array as a numpy scalar."""
        if self.size != 1:
            raise ValueError('asscalar needs an array of size 1, got shape %s' % (self.shape,))
        return self.asnumpy().reshape(-1)[0]

    @on_device
    def astype(self, dtype, copy=True):
        """Return the array converted to ``dtype`` (a copy unless ``copy=False`` and unchanged)."""
        dtype = np.dtype(dtype)
        if not copy and self._data.dtype == dtype:
            return self
        if _recording(self):
            return _invoke('Cast', (self,), {'dtype': dtype.name})
        return carry_error(self, from_xp(self._data.astype(dtype), self._ctx))

    @on_device
    def copy(self):
        """Return a deep copy on the same context."""
        if _recording(self):
            return _invoke('_copy', (self,), {})
        return carry_error(self, from_xp(self._data.copy(), self._ctx))

    def copyto(self, other):
        """Copy into ``other``: an NDArray (shapes must match) or a Context (returns a new array)."""
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other.shape != self.shape:
                raise MXNetError('copyto: shape mismatch, destination %s vs source %s'
                                 % (other.shape, self.shape))
            other._set(self)
            return carry_error(self, other)
        if isinstance(other, Context):
            data = _put(self._data, other)
            copied = carry_error(self, from_xp(data.copy() if data is self._data else data, other))
            if _recording(self):
                from .grad_methods import record_copy  # pylint: disable=import-outside-toplevel
                record_copy(self, copied)
            return copied
        raise TypeError('copyto expects an NDArray or a Context, got %s' % type(other).__name__)

    def as_in_context(self, context):
        """Return this array on ``context`` (itself when it already lives there)."""
        if context == self._ctx:
            return self
        return self.copyto(context)

    def as_np_ndarray(self):
        """This array as an ``mx.np.ndarray`` sharing its storage (no copy)."""
        from ..numpy.multiarray import as_np  # pylint: disable=import-outside-toplevel
        return as_np(self)

    def as_nd_ndarray(self):
        """This array as a legacy NDArray (itself)."""
        return self

    def wait_to_read(self):
        """Block until pending writes finish (synchronizes the device stream on GPU)."""
        raise_deferred(self)
        if not isinstance(self._data, np.ndarray):
            xp_of(self._ctx).cuda.get_current_stream().synchronize()

    def wait_to_write(self):
        """Block until pending reads/writes finish."""
        self.wait_to_read()

    @on_device
    def _set(self, value):
        """Write ``value`` (array or scalar) into the whole array in place."""
        _check_assignment(self, value)
        data = self._data
        if isinstance(value, NDArray):
            value = value._data
        if isinstance(value, SparseStorage):
            value = to_dense(value)
        if isinstance(value, numeric_types):
            data[...] = value
            return
        value = _put(value, self._ctx)  # no copy when it already lives there
        if tuple(value.shape) != tuple(data.shape):
            try:
                value = xp_of(self._ctx).broadcast_to(value, data.shape)
            except ValueError:
                raise MXNetError('cannot assign an array of shape %s to an array of shape %s'
                                 % (tuple(value.shape), self.shape)) from None
        data[...] = value

    def slice_assign(self, rhs, begin, end, step=None):
        """Assign ``rhs`` into the region ``begin:end:step`` in place."""
        self[_region(begin, end, step)] = rhs
        return self

    # ---- indexing ----------------------------------------------------------
    @on_device
    def __getitem__(self, key):
        key = _index_key(key)
        if _is_basic(key):
            # an index with an Ellipsis is a view even where it selects one element (numpy
            # returns a scalar copy for a[1] of a 1-D array): MXNet's a[1] is a (1,) view
            parts = key if isinstance(key, tuple) else (key,)
            data = self._data[parts if Ellipsis in parts else parts + (Ellipsis,)]
            if data.ndim == 0:
                data = data.reshape((1,))
            if not data.flags.c_contiguous:
                data = data.copy()      # as MXNet: only contiguous slices are views
        else:
            data = self._data[key]
        result = from_xp(data, self._ctx)
        if _recording(self):
            from .grad_methods import record_getitem  # pylint: disable=import-outside-toplevel
            if _is_basic(key):
                result = from_xp(data.copy(), self._ctx)
            record_getitem(self, key, result)
        return carry_error(self, result)

    @on_device
    def __setitem__(self, key, value):
        _check_assignment(self, value)
        key = _index_key(key)
        if isinstance(value, NDArray):
            value = _put(to_dense(value._data), self._ctx)
        elif not isinstance(value, numeric_types):
            value = _put(np.asarray(value), self._ctx)
        else:
            self._data[key] = value
            return
        target = self._data[key]
        if tuple(value.shape) != tuple(target.shape) and value.size == target.size \
                and not _broadcasts_to(value.shape, target.shape):
            value = value.reshape(target.shape)     # MXNet drops the unit axes of the value
        self._data[key] = value

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether slicing an array of ``shape`` with ``slc_key`` (one slice per axis) selects
        a C-contiguous block: scanning axes from the last, once an axis is cut to a proper
        subset every earlier axis keeps at most one element; steps other than 1 break
        contiguity unless they select a single element."""
        if len(slc_key) != len(shape):
            raise ValueError('need one slice per axis: %d slices for shape %s'
                             % (len(slc_key), tuple(shape)))
        counts = [len(range(*slc.indices(n))) for slc, n in zip(slc_key, shape)]
        if 0 in counts or int(np.prod(counts)) == 1:
            return True
        cut = False
        for slc, n, count in zip(reversed(slc_key), reversed(shape), reversed(counts)):
            step = slc.indices(n)[2]
            if count > 1 and (step != 1 or cut):
                return False
            cut = cut or count < n
        return True

    def __getattr__(self, name):
        # operator methods (x.sum(), x.exp(), ...) come from the imperative op table
        if name.startswith('_'):
            # private names (unset slots such as _ag included) are never operator methods
            raise AttributeError(name)
        from . import op_methods  # pylint: disable=import-outside-toplevel
        return op_methods.bound(self, name)


_HANDLES = weakref.WeakValueDictionary()     # handle value -> the live NDArray it stands for


def _from_handle(handle, writable):
    """The storage and context of the NDArray behind a handle (see ``_as_parameter_``)."""
    src = _HANDLES.get(handle.value)
    if src is None:
        raise MXNetError('NDArray: handle %r does not refer to a live NDArray' % (handle.value,))
    data = src._data
    if isinstance(data, SparseStorage):
        raise MXNetError('NDArray(handle): the handle refers to a %s array; only dense arrays '
                         'can be wrapped this way' % data.stype)
    if not writable and isinstance(data, np.ndarray):
        data = data.view()
        data.flags.writeable = False
    return data, src._ctx


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(tuple(shape), tuple(target)) == tuple(target)
    except ValueError:
        return False


def _recording(array):
    return tape.is_recording() and tape.in_graph(array)


def _check_assignment(target, value):
    if tape.is_recording():
        from .grad_methods import check_assignment  # pylint: disable=import-outside-toplevel
        check_assignment(target, value)


def _invoke(op_name, args, kwargs):
    from .register import invoke  # pylint: disable=import-outside-toplevel
    return invoke(op_name, args, kwargs)


def _region(begin, end, step):
    step = step or [None] * len(begin)
    return tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))


def _index_key(key):
    if isinstance(key, NDArray):
        return to_numpy(key._data).astype(np.int64)
    if isinstance(key, tuple):
        return tuple(to_numpy(k._data).astype(np.int64) if isinstance(k, NDArray) else k for k in key)
    return key


def _is_basic(key):
    parts = key if isinstance(key, tuple) else (key,)
    return all(isinstance(k, (slice, integer_types)) or k is Ellipsis or k is None for k in parts)


# the deferred-error helpers live in deferred.py and the creation functions in creation.py;
# both are re-exported here, where the other layers import them
from .deferred import (raise_deferred, defer_error, raise_unraised, carry_error,  # noqa: E402,F401
                       pending_error)
from .creation import (array, empty, zeros, ones, full, arange, zeros_like, ones_like,  # noqa: E402,F401
                       concat, concatenate, stack, waitall)
