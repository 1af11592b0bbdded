"""The operator library: every operator class, registered in ``base.OPS``."""
import importlib

from .base import OPS, Operator, OpContext, Param, register, get_op  # noqa: F401

_MODULES = ['elemwise', 'nn', 'conv', 'norm', 'loss', 'shape', 'indexing', 'reduce', 'matrix',
            'sequence', 'rnn', 'random', 'custom', 'optimizer_ops', 'misc']
for _m in _MODULES:
    try:
        importlib.import_module('.' + _m, __name__)
    except ModuleNotFoundError as _err:
        if _err.name != __name__ + '.' + _m:
            raise
