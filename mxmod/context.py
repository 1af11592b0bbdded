"""Devices: Context objects, the ``with ctx:`` scope, and the array module (numpy/cupy) per device."""
import contextlib
import threading

import numpy as np

from .base import MXNetError, _MXClassPropertyMetaClass, classproperty

__all__ = ['Context', 'cpu', 'gpu', 'cpu_pinned', 'current_context', 'num_gpus', 'xp_of',
           'device_scope', 'as_context']

_CUPY = None


_USABLE_GPUS = set()   # device ids checked against the CUDA runtime of the current cupy


def cupy_module():
    """Import and return cupy, raising an MXNetError with an install hint when it is unusable."""
    global _CUPY
    if _CUPY is None:
        try:
            import cupy  # pylint: disable=import-outside-toplevel
        except ImportError as err:
            raise MXNetError('mx.gpu() needs cupy: install it with `pip install mxmod[gpu]` '
                             '(cupy-cuda12x) on a machine with an NVIDIA GPU (%s)' % err) from err
        except Exception as err:  # pylint: disable=broad-except
            raise MXNetError('mx.gpu(): cupy is installed but cannot be loaded (%s: %s); check '
                             'the CUDA installation, or use mx.cpu()'
                             % (type(err).__name__, err)) from None
        _USABLE_GPUS.clear()
        _CUPY = cupy
    return _CUPY


def usable_gpu(device_id):
    """cupy, once GPU ``device_id`` is known to exist; an MXNetError saying why otherwise
    (no driver, no device, an id beyond the devices) instead of a CUDA driver traceback."""
    cupy = cupy_module()
    if device_id in _USABLE_GPUS:
        return cupy
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as err:  # pylint: disable=broad-except
        raise MXNetError('mx.gpu(%d): cupy is installed but no usable NVIDIA GPU was found (%s: '
                         '%s); use mx.cpu() on this machine'
                         % (device_id, type(err).__name__, err)) from None
    if not 0 <= device_id < count:
        raise MXNetError('mx.gpu(%d): no such GPU; %d GPU(s) are visible%s'
                         % (device_id, count, ' (use mx.cpu())' if count == 0 else
                            ', mx.gpu(0) to mx.gpu(%d)' % (count - 1)))
    _USABLE_GPUS.add(device_id)
    return cupy


class Context(metaclass=_MXClassPropertyMetaClass):
    """A device on which arrays live and operators run.

    Parameters
    ----------
    device_type : {'cpu', 'gpu', 'cpu_pinned', 'cpu_shared'} or Context
    device_id : int, default 0
    """
    devtype2str = {1: 'cpu', 2: 'gpu', 3: 'cpu_pinned', 5: 'cpu_shared'}
    devstr2type = {'cpu': 1, 'gpu': 2, 'cpu_pinned': 3, 'cpu_shared': 5}
    _default_ctx = threading.local()    # .value: this thread's default context
    _saved = threading.local()          # .stack: the defaults replaced by ``with`` scopes

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            self.device_typeid = device_type.device_typeid
            self.device_id = device_type.device_id
        else:
            if device_type not in self.devstr2type:
                raise MXNetError('unknown device type %r; expected one of %s'
                                 % (device_type, sorted(self.devstr2type)))
            self.device_typeid = self.devstr2type[device_type]
            self.device_id = int(device_id)
        self._old_ctx = None

    @property
    def device_type(self):
        """Device type as a string: 'cpu', 'gpu', ..."""
        return Context.devtype2str[self.device_typeid]

    @property
    def xp(self):
        """The array module backing this context: numpy on CPU, cupy on GPU."""
        return xp_of(self)

    def __hash__(self):
        return hash((self.device_typeid, self.device_id))

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_typeid == other.device_typeid
                and self.device_id == other.device_id)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __str__(self):
        return '%s(%d)' % (self.device_type, self.device_id)

    __repr__ = __str__

    def __enter__(self):
        stack = getattr(Context._saved, 'stack', None)
        if stack is None:
            stack = Context._saved.stack = []
        stack.append(current_context())
        Context._default_ctx.value = self
        return self

    def __exit__(self, ptype, value, trace):
        Context._default_ctx.value = Context._saved.stack.pop()

    def empty_cache(self):
        """Release cached device memory (a no-op on CPU)."""
        if self.device_typeid == 2:
            cupy_module().get_default_memory_pool().free_all_blocks()

    @classproperty
    def default_ctx(cls):
        """This thread's default context (the innermost ``with`` scope, else cpu(0)); assignable
        as ``Context.default_ctx = ctx``."""
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, value):
        cls._default_ctx.value = value


def cpu(device_id=0):
    """Return CPU context ``device_id``. Distinct ids are distinct devices backed by numpy."""
    return Context('cpu', device_id)


def cpu_pinned(device_id=0):
    """Return a pinned-memory CPU context (backed by numpy like cpu)."""
    return Context('cpu_pinned', device_id)


def gpu(device_id=0):
    """Return GPU context ``device_id`` (backed by cupy on that device)."""
    return Context('gpu', device_id)


def current_context():
    """Return the calling thread's default context (cpu(0) unless changed)."""
    ctx = getattr(Context._default_ctx, 'value', None)
    if ctx is None:
        ctx = Context._default_ctx.value = Context('cpu', 0)
    return ctx


_CONTEXT_STRING = None


def as_context(ctx, what='ctx'):
    """``ctx`` as a Context: None is the current context, a Context is itself and the string
    form MXNet's imperative operators accept ('cpu(0)', 'gpu(1)') is parsed; anything else (a
    bare 'cpu', a number) is refused naming ``what``."""
    global _CONTEXT_STRING
    if ctx is None:
        return current_context()
    if isinstance(ctx, Context):
        return ctx
    from .argcheck import ArgumentTypeError, ArgumentValueError  # pylint: disable=import-outside-toplevel
    if isinstance(ctx, str):
        if _CONTEXT_STRING is None:
            import re  # pylint: disable=import-outside-toplevel
            _CONTEXT_STRING = re.compile(r'\s*(cpu|gpu|cpu_pinned|cpu_shared)\((\d+)\)\s*')
        match = _CONTEXT_STRING.fullmatch(ctx)
        if match is None:
            raise ArgumentValueError('%s: invalid context string %r; give a Context such as '
                                     'mx.cpu() or mx.gpu(0) (or its string form \'cpu(0)\')'
                                     % (what, ctx))
        return Context(match.group(1), int(match.group(2)))
    text = repr(ctx)
    raise ArgumentTypeError('%s must be a Context such as mx.cpu() or mx.gpu(0), got %s (%s)'
                            % (what, text[:60], type(ctx).__name__))


def num_gpus():
    """Number of visible NVIDIA GPUs (0 when cupy or a driver is missing)."""
    try:
        import cupy  # pylint: disable=import-outside-toplevel
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # pylint: disable=broad-except
        return 0


def gpu_memory_info(device_id=0):
    """Return (free, total) bytes of GPU ``device_id``."""
    cp = usable_gpu(device_id)
    with cp.cuda.Device(device_id):
        return cp.cuda.runtime.memGetInfo()


def erf(xp, x):
    """The error function of a numpy or cupy array (scipy/cupyx when available)."""
    if xp is not np:
        import cupyx.scipy.special  # pylint: disable=import-outside-toplevel
        return cupyx.scipy.special.erf(x)
    try:
        from scipy.special import erf as scipy_erf  # pylint: disable=import-outside-toplevel
        return scipy_erf(x)
    except ImportError:
        import math  # pylint: disable=import-outside-toplevel
        return np.vectorize(math.erf, otypes=[x.dtype])(x)


def scipy_module(xp, submodule):
    """scipy's ``submodule`` ('sparse', 'special') for numpy arrays, cupyx's for cupy arrays."""
    import importlib  # pylint: disable=import-outside-toplevel
    root = 'scipy' if xp is np else 'cupyx.scipy'
    try:
        return importlib.import_module('%s.%s' % (root, submodule))
    except ImportError as err:
        raise MXNetError('%s.%s is needed here: pip install %s (%s)'
                         % (root, submodule, 'scipy' if xp is np else 'cupy-cuda12x', err)) from err


_NO_SCOPE = contextlib.nullcontext()


def device_scope(ctx):
    """The scope that makes ``ctx``'s GPU cupy's current device (nothing for CPU contexts).

    cupy allocates new arrays, and launches kernels, on the current device of the calling
    thread; work on a ``gpu(i)`` array must run inside this scope."""
    if ctx is None or ctx.device_typeid != 2:
        return _NO_SCOPE
    return usable_gpu(ctx.device_id).cuda.Device(ctx.device_id)


def xp_of(ctx):
    """Array module for a context: numpy for CPU kinds, cupy for GPUs."""
    if ctx.device_typeid == 2:
        return usable_gpu(ctx.device_id)
    return np
