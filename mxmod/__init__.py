"""mxmod: MXNet 1.x's symbolic training stack (Symbol, Executor, Module, KVStore) and Gluon in
pure Python, on numpy (CPU), cupy (NVIDIA GPUs) and MPI. ``import mxmod as mx`` runs MXNet
Module and Gluon programs."""
import importlib as _importlib

from .base import MXNetError  # noqa: F401
from .library_logs import quiet_library_loggers as _quiet_library_loggers
from .library_logs import quiet_float_warnings as _quiet_float_warnings
from . import threads  # noqa: F401  (BLAS thread count, chosen at import)
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus  # noqa: F401
from . import ops as _ops  # noqa: F401
from . import ndarray  # noqa: F401
from . import ndarray as nd  # noqa: F401
from .out_of_scope import install_finder as _install_out_of_scope_finder

_quiet_library_loggers()  # numba's and other libraries' DEBUG lines stay out of the user's log
_quiet_float_warnings()   # inf/nan from operators come silently, as in MXNet
_install_out_of_scope_finder()  # `import mxmod.gluon.data` raises what mx.gluon.data raises

__version__ = '1.9.1'

# Later layers are imported when present; each is a package of its own.
_LAYERS = [('random', 'rnd'), ('name', None), ('attribute', None), ('symbol', 'sym'),
           ('executor', None), ('io', None), ('metric', None), ('initializer', 'init'),
           ('optimizer', None), ('lr_scheduler', None), ('kvstore', 'kv'), ('callback', None),
           ('monitor', 'mon'), ('model', None), ('module', 'mod'), ('rnn', None),
           ('operator', None), ('test_utils', None), ('profiler', None), ('engine', None),
           ('recordio', None), ('visualization', 'viz'), ('util', None), ('context', None),
           ('image', 'img'), ('runtime', None), ('autograd', None), ('contrib', None),
           ('onnx', None)]
for _name, _alias in _LAYERS:
    try:
        _mod = _importlib.import_module('.' + _name, __name__)
    except ModuleNotFoundError as _err:
        if _err.name != __name__ + '.' + _name:
            raise
        continue
    globals()[_name] = _mod
    if _alias:
        globals()[_alias] = _mod

if 'attribute' in globals():
    AttrScope = attribute.AttrScope  # noqa: F821
from .util import (np_shape, is_np_shape, set_np_shape, use_np_shape, np_array,  # noqa: F401,E402
                   is_np_array, use_np_array, use_np, set_np, reset_np)


def __getattr__(name):
    # pylint: disable-next=import-outside-toplevel
    from .out_of_scope import OUT_OF_SCOPE, PARTLY_IN_SCOPE, placeholder
    if name in PARTLY_IN_SCOPE:
        module = _importlib.import_module('.' + PARTLY_IN_SCOPE[name], __name__)
    elif name in OUT_OF_SCOPE:
        module = placeholder(name)
    else:
        raise AttributeError("module 'mxmod' has no attribute %r" % name)
    globals()[name] = module
    return module
