"""The fake ``cupy`` / ``cupyx`` modules of the emulation (see devarray.py for the rules).

Every public name real cupy 14.2 has is served from numpy through a wrapper that moves device
arrays to numpy and back, checking their devices; ``cupy.cuda`` has Device, streams, the memory
pool, ``runtime`` and ``nccl`` (fake_nccl.py)."""
import types

import numpy as np

from . import devarray
from .devarray import DeviceArray, NAMES, current_device, unwrap, wrap

_LIKE = {'empty_like', 'zeros_like', 'ones_like', 'full_like'}
_FUNCS = {}
_UFUNCS = {}


class Ufunc(object):
    """A cupy ufunc over numpy's: ``__call__`` and the methods cupy has (at, reduce, ...)."""

    def __init__(self, np_ufunc):
        self._u = np_ufunc
        self.__name__ = np_ufunc.__name__
        for attr in ('nin', 'nout', 'nargs', 'types'):
            setattr(self, attr, getattr(np_ufunc, attr))

    def _run(self, fn, args, kwargs):
        what = 'cupy.%s' % self.__name__
        return wrap(fn(*unwrap(args, what), **unwrap(kwargs, what)))

    def __call__(self, *args, **kwargs):
        return self._run(self._u, args, kwargs)

    def __getattr__(self, name):
        if name not in NAMES['ufunc']:
            raise AttributeError('cupy ufunc has no attribute %r' % name)
        method = getattr(self._u, name)
        return lambda *a, **k: self._run(method, a, k)


def ufunc_named(name):
    """The wrapped ufunc of that name, or None where cupy has none."""
    if name not in NAMES['top'] and name not in NAMES['special']:
        return None
    found = _UFUNCS.get(name)
    if found is None:
        source = getattr(np, name, None)
        if not isinstance(source, np.ufunc):
            import scipy.special  # pylint: disable=import-outside-toplevel
            source = getattr(scipy.special, name)
        found = _UFUNCS[name] = Ufunc(source)
    return found


def _function(np_func, name):
    def run(*args, **kwargs):
        what = 'cupy.%s' % name
        check = name not in _LIKE
        return wrap(np_func(*unwrap(args, what, check), **unwrap(kwargs, what, check)))
    run.__name__ = name
    return run


def function_named(np_func):
    """The cupy counterpart of a numpy function (``__array_function__``), or None."""
    name = np_func.__name__
    module = getattr(np_func, '__module__', '') or ''
    if module.startswith('numpy.linalg'):
        return getattr(linalg, name, None) if name in NAMES['linalg'] else None
    return getattr(cupy, name, None) if name in NAMES['top'] else None


# ---- cupy.cuda ---------------------------------------------------------------------------
class Device(object):
    """``with cupy.cuda.Device(i):`` makes emulated GPU ``i`` current for this thread."""

    def __init__(self, device=None):
        self.id = current_device() if device is None else int(device)

    def __enter__(self):
        devarray.push_device(self.id)
        return self

    def __exit__(self, *exc):
        devarray.pop_device()

    def use(self):
        devarray.push_device(self.id)

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return '<CUDA Device %d>' % self.id


class Stream(object):
    """The (synchronous) null stream of the emulation."""
    ptr = 0

    def synchronize(self):
        pass


class _Pool(object):
    def free_all_blocks(self):
        pass

    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0


class CUDARuntimeError(RuntimeError):
    pass


def _mem_get_info():
    return (70 << 30, 80 << 30)


def _module(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    return mod


_POOL = _Pool()
_STREAM = Stream()
runtime = _module('cupy.cuda.runtime', getDeviceCount=devarray.device_count,
                  memGetInfo=_mem_get_info, CUDARuntimeError=CUDARuntimeError)
cuda = _module('cupy.cuda', Device=Device, Stream=Stream, runtime=runtime,
               get_current_stream=lambda device=None: _STREAM, is_available=lambda: True,
               MemoryPointer=devarray.MemoryPointer)


# ---- cupy.random -----------------------------------------------------------------------------
class RandomState(object):
    """cupy's RandomState: numpy's generator, draws made on the current device (``dtype`` too)."""

    def __init__(self, seed=None, method=None):
        self._rs = np.random.RandomState(seed)

    def __getattr__(self, name):
        if name not in NAMES['RandomState']:
            raise AttributeError("cupy.random.RandomState has no attribute %r" % name)
        method = getattr(self._rs, name)

        def draw(*args, **kwargs):
            dtype = kwargs.pop('dtype', None)
            what = 'RandomState.%s' % name
            out = method(*unwrap(args, what), **unwrap(kwargs, what))
            if name in ('shuffle', 'seed'):
                return out
            out = np.asarray(out)
            if dtype is not None:
                out = out.astype(dtype)
            elif out.dtype == np.int32 or out.dtype == np.int64:
                out = out.astype(np.int64)
            return wrap(out)
        return draw


_GLOBAL_RS = {}


def _random_function(name):
    def run(*args, **kwargs):
        dev = current_device()
        if dev not in _GLOBAL_RS:
            _GLOBAL_RS[dev] = RandomState()
        return getattr(_GLOBAL_RS[dev], name)(*args, **kwargs)
    return run


random = _module('cupy.random', RandomState=RandomState,
                 **{n: _random_function(n) for n in NAMES['random']
                    if n in NAMES['RandomState']})
linalg = _module('cupy.linalg', **{n: _function(getattr(np.linalg, n), n) for n in NAMES['linalg']
                                   if hasattr(np.linalg, n)})
lib = _module('cupy.lib', stride_tricks=_module(
    'cupy.lib.stride_tricks',
    as_strided=lambda x, shape=None, strides=None: DeviceArray(
        np.lib.stride_tricks.as_strided(x._h, shape=shape, strides=strides), x._dev)))


# ---- cupy top level --------------------------------------------------------------------------
def asarray(a, dtype=None, order=None, blocking=False):
    """Copy host data to the current device; a device array stays put unless its device or
    dtype changes (cupy copies across devices)."""
    if isinstance(a, DeviceArray):
        if a._dev == current_device() and (dtype is None or np.dtype(dtype) == a.dtype):
            return a
        return DeviceArray(np.array(a._h, dtype=dtype, order=order or 'K', copy=True),
                           current_device())
    host = np.array(a, dtype=dtype, order=order or 'K', copy=True)
    if host.dtype.char not in '?bhilqBHILQefdFD':
        raise ValueError('Unsupported dtype %s' % host.dtype)
    return DeviceArray(host, current_device())


def array(obj, dtype=None, copy=True, order='K', subok=False, ndmin=0):
    out = asarray(obj, dtype=dtype, order=order)
    if copy and out is obj:
        out = out.copy()
    if ndmin > out.ndim:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out


def asnumpy(a, stream=None, order='C', out=None, blocking=True):
    """Host copy of a device array; other inputs go through numpy.asarray."""
    if isinstance(a, DeviceArray):
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def ascontiguousarray(a, dtype=None):
    if not isinstance(a, DeviceArray):
        raise TypeError("Argument 'a' has incorrect type (expected cupy.ndarray, got %s)"
                        % type(a).__name__)
    if a.flags.c_contiguous and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    return DeviceArray(np.ascontiguousarray(unwrap(a, 'ascontiguousarray'), dtype=dtype), a._dev)


def get_array_module(*args):
    return cupy if any(isinstance(a, DeviceArray) for a in args) else np


class _Cupy(types.ModuleType):
    """Module type whose missing attributes are numpy's, wrapped, when cupy has the name."""

    def __getattr__(self, name):
        if name.startswith('__') or name not in NAMES['top'] or not hasattr(np, name):
            raise AttributeError("module 'cupy' has no attribute %r" % name)
        source = getattr(np, name)
        if isinstance(source, np.ufunc):
            value = ufunc_named(name)
        elif callable(source) and not isinstance(source, type):
            value = _function(source, name)
        else:
            value = source  # dtypes, scalar types, constants
        setattr(self, name, value)
        return value


cupy = _Cupy('cupy')
cupy.__dict__.update(
    ndarray=DeviceArray, cuda=cuda, random=random, linalg=linalg, lib=lib, asarray=asarray,
    array=array, asnumpy=asnumpy, ascontiguousarray=ascontiguousarray,
    get_array_module=get_array_module, is_available=lambda: True,
    get_default_memory_pool=lambda: _POOL, get_default_pinned_memory_pool=lambda: _POOL,
    __version__='14.2.0-emulated', __file__=__file__)
special = _module('cupyx.scipy.special',
                  **{n: ufunc_named(n) for n in ('erf', 'erfc', 'erfinv', 'gammaln', 'digamma')})
cupyx = _module('cupyx', scipy=_module('cupyx.scipy', special=special))


def modules():
    """The ``sys.modules`` entries that make ``import cupy`` load the emulation."""
    from . import fake_nccl  # pylint: disable=import-outside-toplevel
    cuda.nccl = fake_nccl.nccl
    return {'cupy': cupy, 'cupy.cuda': cuda, 'cupy.cuda.runtime': runtime,
            'cupy.cuda.nccl': fake_nccl.nccl, 'cupy.random': random, 'cupy.linalg': linalg,
            'cupy.lib': lib, 'cupy.lib.stride_tricks': lib.stride_tricks, 'cupyx': cupyx,
            'cupyx.scipy': cupyx.scipy, 'cupyx.scipy.special': special}

