"""The generated modules of the fused elementwise kernels (elemwise_jit.py): written to a cache
directory (``MXMOD_KERNEL_CACHE``, default ``~/.cache/mxmod/kernels``) under the hash of their
source and imported once per process, so numba compiles each kernel once per machine
(``cache=True``); and the functions that run their kernels with the module in ``sys.modules``."""
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading

__all__ = ['module_for', 'Registered', 'cache_dir']

_LOCK = threading.Lock()
_MODULES = {}


def module_for(source):
    """The generated module of ``source`` (written to the cache directory and imported)."""
    key = hashlib.sha1(source.encode()).hexdigest()[:20]
    with _LOCK:
        module = _MODULES.get(key)
        if module is None:
            module = _MODULES[key] = _load('mxmod_fused_' + key, source)
    return module


class Registered(object):
    """A generated function whose kernels' module stays in ``sys.modules`` while it runs.

    numba finds a kernel's module by name when it compiles it (lazily, at the first call); a
    module missing from ``sys.modules`` then (code that restores ``sys.modules`` to an earlier
    copy, as ``mock.patch.dict`` does, drops it) would be compiled as "dynamic", and the machine
    code it caches could never be loaded again (``No module named '<dynamic>'``). So each call
    puts the module back first, and a cache written that way by an earlier version is emptied
    and compiled afresh."""

    def __init__(self, fn, module):
        self.fn, self.module, self.name = fn, module, module.__name__

    def __call__(self, *args):
        if sys.modules.get(self.name) is not self.module:
            sys.modules[self.name] = self.module
        try:
            return self.fn(*args)
        except ImportError as err:
            if '<dynamic>' not in str(err):
                raise
        _flush_caches(self.module)
        return self.fn(*args)


def _flush_caches(module):
    """Empty the numba caches of the kernels of ``module``."""
    from numba.core.dispatcher import Dispatcher  # pylint: disable=import-outside-toplevel
    for value in vars(module).values():
        if isinstance(value, Dispatcher) and value._cache is not None:  # pylint: disable=protected-access
            value._cache.flush()  # pylint: disable=protected-access


def cache_dir():
    """Where the generated modules go (created if needed; a temporary one if that fails)."""
    path = os.environ.get('MXMOD_KERNEL_CACHE') or os.path.join(
        os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache'),
        'mxmod', 'kernels')
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    return _fallback_dir()


_FALLBACK = []


def _fallback_dir():
    if not _FALLBACK:
        _FALLBACK.append(tempfile.mkdtemp(prefix='mxmod-kernels-'))
    return _FALLBACK[0]


def _load(name, source):
    path = os.path.join(cache_dir(), name + '.py')
    if not os.path.exists(path) or _read(path) != source:
        tmp = '%s.%d.tmp' % (path, os.getpid())
        with open(tmp, 'w') as handle:
            handle.write(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module      # numba's cache finds the kernels' globals by module name
    spec.loader.exec_module(module)
    return module


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None
