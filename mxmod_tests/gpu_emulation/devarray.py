"""The device array of the cupy emulation: host memory that behaves like cupy's on a GPU.

A :class:`DeviceArray` holds a numpy array and the id of the emulated GPU it lives on. It refuses
what real cupy refuses, so that code which only works because numpy is forgiving fails here:

- implicit conversion to numpy (``np.asarray(d)``, ``np.array(d)``) raises TypeError; only
  ``.get()`` / ``cupy.asnumpy`` copy to the host;
- mixing a numpy array into a cupy operation raises TypeError;
- an operation that launches a kernel on arrays of another device than the current one
  (``cupy.cuda.Device``) raises ValueError, as cupy does without peer access;
- reductions and integer indexing return 0-d device arrays, not numpy scalars;
- only the names real cupy has (``cupy_names.json``, cupy 14.2) exist.
"""
import json
import os
import threading
import weakref

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cupy_names.json')) as _f:
    NAMES = {k: set(v) if isinstance(v, list) else v for k, v in json.load(_f).items()}

_THREAD = threading.local()
_DEVICE_COUNT = [2]
# methods that launch no kernel (metadata or host transfers): allowed from any current device
_NO_KERNEL = {'reshape', 'view', 'transpose', 'swapaxes', 'squeeze', 'item', 'tolist', 'tobytes',
              'diagonal'}
_LIVE = {}  # id(root numpy buffer) -> (weakref to it, start address, nbytes, device)


def current_device():
    """The emulated current device id of this thread (cupy's is per thread too)."""
    stack = getattr(_THREAD, 'stack', None)
    return stack[-1] if stack else 0


def push_device(dev):
    """Make ``dev`` current (see fake ``cupy.cuda.Device``)."""
    if not 0 <= dev < _DEVICE_COUNT[0]:
        raise RuntimeError('cudaErrorInvalidDevice: invalid device ordinal %d (emulating %d GPUs)'
                           % (dev, _DEVICE_COUNT[0]))
    if not hasattr(_THREAD, 'stack'):
        _THREAD.stack = []
    _THREAD.stack.append(dev)


def pop_device():
    _THREAD.stack.pop()


def _root(host):
    while isinstance(host.base, np.ndarray):
        host = host.base
    return host


def _register(host, dev):
    root = _root(host)
    key = id(root)
    entry = _LIVE.get(key)
    if entry is None or entry[0]() is not root:
        _LIVE[key] = (weakref.ref(root), root.__array_interface__['data'][0], root.nbytes, dev)
        if len(_LIVE) > 4096:
            for k in [k for k, v in _LIVE.items() if v[0]() is None]:
                del _LIVE[k]
    return _LIVE[key][3]


def owner_of(ptr, nbytes):
    """The live (root buffer, device) holding ``[ptr, ptr + nbytes)``; raise if none does."""
    for ref, start, size, dev in list(_LIVE.values()):
        root = ref()
        if root is not None and start <= ptr and ptr + nbytes <= start + size:
            return root, dev
    raise RuntimeError('emulated CUDA: address %#x (%d bytes) is not inside any live device '
                       'allocation (freed before use?)' % (ptr, nbytes))


class MemoryPointer(object):
    """``arr.data``: the device address (the host address of the emulated buffer)."""

    def __init__(self, arr):
        self.ptr = arr._h.__array_interface__['data'][0]
        self.device_id = arr._dev
        self.mem = arr  # keeps the buffer alive like cupy's MemoryPointer

    @property
    def device(self):
        from .fake_cupy import Device  # pylint: disable=import-outside-toplevel
        return Device(self.device_id)


def _check_here(arr, what):
    here = current_device()
    if arr._dev != here:
        raise ValueError('The device where the array resides (%d) is different from the current '
                         'device (%d). Peer access is unavailable between these devices. (%s)'
                         % (arr._dev, here, what))


def unwrap(obj, what, check=True):
    """Host values of ``obj`` (recursing into lists/tuples/dicts) for running numpy on them."""
    if isinstance(obj, DeviceArray):
        if check:
            _check_here(obj, what)
        return obj._h
    if isinstance(obj, np.ndarray):
        raise TypeError('Unsupported type %s: a numpy array was passed to cupy (%s); move it to '
                        'the device first' % (type(obj), what))
    if isinstance(obj, (list, tuple)):
        return type(obj)(unwrap(o, what, check) for o in obj)
    if isinstance(obj, dict):
        return {k: unwrap(v, what, check) for k, v in obj.items()}
    return obj


def wrap(result, dev=None):
    """Device arrays for the numpy results (scalars become 0-d arrays, as cupy returns)."""
    if dev is None:
        dev = current_device()
    if isinstance(result, np.ndarray):
        return DeviceArray(result, dev)
    if isinstance(result, np.generic):
        return DeviceArray(np.asarray(result), dev)
    if isinstance(result, (list, tuple)) and not hasattr(result, '_fields'):
        return type(result)(wrap(r, dev) for r in result)
    if isinstance(result, tuple):       # numpy's named results (qr, eigh, slogdet): cupy's tuples
        return tuple(wrap(r, dev) for r in result)
    return result


class DeviceArray(NDArrayOperatorsMixin):
    """``cupy.ndarray`` of the emulation (see the module docstring)."""
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, host, dev):
        self._h = host
        self._dev = dev
        _register(host, dev)

    # ---- conversions ------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError('Implicit conversion to a NumPy array is not allowed. Please use `.get()` '
                        'to construct a NumPy array explicitly.')

    def get(self, stream=None, order='C', out=None, blocking=True):
        """Copy to a new host array (or into ``out``)."""
        if out is not None:
            out[...] = self._h
            return out
        return np.array(self._h, order=order, copy=True)

    def set(self, arr, stream=None):
        """Copy a host array of the same shape and dtype into this array."""
        if not isinstance(arr, np.ndarray):
            raise TypeError('Only numpy.ndarray can be set to cupy.ndarray')
        if arr.shape != self._h.shape or arr.dtype != self._h.dtype:
            raise ValueError('Shape or dtype mismatch in set: %s %s vs %s %s'
                             % (arr.shape, arr.dtype, self._h.shape, self._h.dtype))
        self._h[...] = arr

    def __bool__(self):
        return bool(self._h)

    def __float__(self):
        return float(self._h)

    def __int__(self):
        return int(self._h)

    def __complex__(self):
        return complex(self._h)

    def __len__(self):
        return len(self._h)

    def __iter__(self):
        if self._h.ndim == 0:
            raise TypeError('iteration over a 0-d array')
        return (wrap(row, self._dev) for row in self._h)

    def __repr__(self):
        return 'array(%s) on emulated gpu %d' % (np.array2string(self._h, separator=', '), self._dev)

    __str__ = __repr__

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return (_rebuild, (self._h.copy(), self._dev))

    # ---- attributes ---------------------------------------------------------------
    shape = property(lambda self: self._h.shape, lambda self, s: setattr(self._h, 'shape', s))
    dtype = property(lambda self: self._h.dtype)
    ndim = property(lambda self: self._h.ndim)
    size = property(lambda self: self._h.size)
    itemsize = property(lambda self: self._h.itemsize)
    nbytes = property(lambda self: self._h.nbytes)
    strides = property(lambda self: self._h.strides)
    flags = property(lambda self: self._h.flags)
    T = property(lambda self: DeviceArray(self._h.T, self._dev))
    mT = property(lambda self: DeviceArray(self._h.mT, self._dev))
    real = property(lambda self: DeviceArray(self._h.real, self._dev))
    imag = property(lambda self: DeviceArray(self._h.imag, self._dev))
    data = property(MemoryPointer)

    @property
    def base(self):
        return None if self._h.base is None else DeviceArray(_root(self._h), self._dev)

    @property
    def device(self):
        from .fake_cupy import Device  # pylint: disable=import-outside-toplevel
        return Device(self._dev)

    def copy(self, order='C'):
        """A copy on the current device (cupy copies across devices here)."""
        return DeviceArray(np.array(self._h, order=order, copy=True), current_device())

    def astype(self, dtype, order='K', casting=None, subok=None, copy=True):
        _check_here(self, 'astype')
        out = self._h.astype(dtype, order=order, copy=copy)
        return self if out is self._h else DeviceArray(out, self._dev)

    def __getattr__(self, name):
        if name.startswith('_') or name not in NAMES['ndarray'] or not hasattr(np.ndarray, name):
            raise AttributeError("'cupy.ndarray' object has no attribute %r" % name)
        method = getattr(self._h, name)

        def call(*args, **kwargs):
            if name not in _NO_KERNEL:
                _check_here(self, 'ndarray.%s' % name)
            return wrap(method(*unwrap(args, name), **unwrap(kwargs, name)), self._dev)
        return call

    # ---- indexing -----------------------------------------------------------------------
    def _key(self, key):
        if isinstance(key, DeviceArray):
            return key._h
        if isinstance(key, tuple):
            return tuple(k._h if isinstance(k, DeviceArray) else k for k in key)
        return key

    def __getitem__(self, key):
        return wrap(self._h[self._key(key)], self._dev)

    def __setitem__(self, key, value):
        if isinstance(value, DeviceArray):
            _check_here(self, 'setitem')
            value = value._h
        self._h[self._key(key)] = value

    # ---- numpy protocols (cupy implements both) ------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from .fake_cupy import ufunc_named  # pylint: disable=import-outside-toplevel
        wrapped = ufunc_named(ufunc.__name__)
        if wrapped is None:
            return NotImplemented
        return getattr(wrapped, method)(*inputs, **kwargs) if method != '__call__' \
            else wrapped(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from .fake_cupy import function_named  # pylint: disable=import-outside-toplevel
        wrapped = function_named(func)
        if wrapped is None:
            return NotImplemented
        return wrapped(*args, **kwargs)


def _rebuild(host, dev):
    return DeviceArray(host, dev)


def set_device_count(count):
    """How many GPUs the emulation shows (``getDeviceCount``)."""
    _DEVICE_COUNT[0] = int(count)


def device_count():
    return _DEVICE_COUNT[0]
