"""``mx.contrib``: MXNet's contributed namespaces.

``mx.contrib.nd`` / ``mx.contrib.ndarray`` and ``mx.contrib.sym`` / ``mx.contrib.symbol`` are the
``_contrib_`` operators; other submodules (``tensorboard``, ``onnx``, ...) are imported on first use,
so that a missing optional dependency only matters to the code that needs it."""
import importlib as _importlib

from ..ndarray import contrib as ndarray  # noqa: F401
from ..symbol import contrib as symbol  # noqa: F401

nd = ndarray
sym = symbol


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    try:
        module = _importlib.import_module('.' + name, __name__)
    except ModuleNotFoundError as err:
        if err.name != __name__ + '.' + name:
            raise
        raise AttributeError("module 'mxmod.contrib' has no attribute %r" % name) from None
    globals()[name] = module
    return module
