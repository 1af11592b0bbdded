"""``mx.util``: global switches shared by the layers (numpy shape and array semantics), and small
helpers (environment variables, GPU queries, ``set_module``).

mxmod implements MXNet's legacy ``mx.nd`` / ``mx.sym`` front ends; the numpy front end
(``mx.np``) is outside its scope, so the numpy-array switch is only recorded (and read back by
``is_np_array``), as MXNet's legacy operators also ignore it."""
import functools
import os
import threading

__all__ = ['is_np_shape', 'set_np_shape', 'np_shape', 'use_np_shape', 'is_np_array', 'np_array',
           'use_np_array', 'use_np', 'set_np', 'reset_np', 'getenv', 'setenv', 'get_gpu_count',
           'get_gpu_memory', 'get_cuda_compute_capability', 'set_module']

_STATE = threading.local()
_GLOBAL = {'np_shape': False}


def is_np_shape():
    """True inside ``mx.np_shape(True)``: unknown dimensions are -1 and unknown shapes None."""
    return getattr(_STATE, 'np_shape', False) or _GLOBAL['np_shape']


def np_shape_is_global():
    """True when numpy shape semantics were switched on for every thread (``set_np_shape(2)``)."""
    return _GLOBAL['np_shape']


def set_np_shape(active):
    """Turn numpy shape semantics on (True or 1: for the calling thread; 2: for every thread)
    or off (False or 0: everywhere); returns the previous setting."""
    prev = is_np_shape()
    if active == 2:
        _GLOBAL['np_shape'] = True
    elif not active:
        _GLOBAL['np_shape'] = False
    _STATE.np_shape = bool(active)
    return prev


class _NumpyShapeScope(object):
    """Scope (``with mx.np_shape(True):``) for numpy shape semantics."""

    def __init__(self, active=True):
        self._active = active
        self._prev = None

    def __enter__(self):
        self._prev = set_np_shape(self._active)
        return self

    def __exit__(self, ptype, value, trace):
        set_np_shape(self._prev)


np_shape = _NumpyShapeScope  # pylint: disable=invalid-name


def _scoped(scope_factory, func, what):
    if isinstance(func, type):
        for name, member in list(vars(func).items()):
            if callable(member) and not isinstance(member, type):
                setattr(func, name, _scoped(scope_factory, member, what))
        return func
    if not callable(func):
        raise TypeError('%s can only decorate classes and callable objects, got %s'
                        % (what, type(func).__name__))

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with scope_factory():
            return func(*args, **kwargs)
    return wrapper


def use_np_shape(func):
    """Decorator running ``func`` (or every method of a class) with numpy shape semantics on."""
    return _scoped(lambda: _NumpyShapeScope(True), func, 'use_np_shape')


class _NumpyArrayScope(object):
    """Scope of the numpy-array switch; ``_NumpyArrayScope._current.value`` is the calling
    thread's (assignable as in MXNet)."""
    _current = threading.local()

    def __init__(self, is_np_array):  # pylint: disable=redefined-outer-name
        self._old_scope = None
        self._is_np_array = is_np_array

    def __enter__(self):
        if not hasattr(_NumpyArrayScope._current, 'value'):
            _NumpyArrayScope._current.value = _NumpyArrayScope(False)
        self._old_scope = _NumpyArrayScope._current.value
        _NumpyArrayScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        _NumpyArrayScope._current.value = self._old_scope


def np_array(active=True):
    """A ``with`` scope that sets the numpy-array switch (see the module docstring)."""
    return _NumpyArrayScope(active)


def is_np_array():
    """The calling thread's numpy-array switch (False unless set)."""
    current = getattr(_NumpyArrayScope._current, 'value', None)
    return bool(current._is_np_array) if current is not None else False


def use_np_array(func):
    """Decorator running ``func`` (or every method of a class) with the numpy-array switch on."""
    return _scoped(lambda: _NumpyArrayScope(True), func, 'use_np_array')


def use_np(func):
    """Decorator: numpy shape and array semantics on while ``func`` runs."""
    return use_np_shape(use_np_array(func))


def set_np(shape=True, array=True):
    """Set numpy shape and array semantics for the calling thread (array semantics need shape
    semantics, as in MXNet)."""
    if array and not shape:
        raise ValueError('NumPy array semantics require NumPy shape semantics: call '
                         'set_np(shape=True, array=True)')
    set_np_shape(shape)
    _NumpyArrayScope._current.value = _NumpyArrayScope(array)


def reset_np():
    """Turn numpy shape and array semantics off."""
    set_np(shape=False, array=False)


def getenv(name):
    """The value of environment variable ``name``, or None when unset."""
    return os.environ.get(name)


def setenv(name, value):
    """Set environment variable ``name`` to ``value`` (None unsets it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def get_gpu_count():
    """Number of visible NVIDIA GPUs."""
    from .context import num_gpus  # pylint: disable=import-outside-toplevel
    return num_gpus()


def get_gpu_memory(gpu_dev_id):
    """(free, total) bytes of memory of GPU ``gpu_dev_id``."""
    from .context import gpu_memory_info  # pylint: disable=import-outside-toplevel
    return gpu_memory_info(gpu_dev_id)


def get_cuda_compute_capability(ctx):
    """The CUDA compute capability of a GPU context as an int (70 for sm_70)."""
    from .context import cupy_module  # pylint: disable=import-outside-toplevel
    if ctx.device_type != 'gpu':
        raise ValueError('Expecting a gpu context to get cuda compute capability, while received '
                         'ctx %s' % ctx)
    return int(cupy_module().cuda.Device(ctx.device_id).compute_capability)


def set_module(module):
    """Decorator setting ``__module__`` of a function or class to ``module`` (None: unchanged)."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


def is_np_default_dtype():
    """False: mxmod's default float dtype is float32, as MXNet's legacy front end."""
    return False
