"""NDArray methods that are operators (``x.sum()``, ``x.exp()``, ``x.clip(0, 1)``...)."""
import functools

from ..ops.base import OPS
from .register import invoke

_RENAMED = {'transpose': 'transpose', 'swapaxes': 'SwapAxis', 'split': 'SliceChannel',
            'slice': 'slice', 'softmax': 'softmax', 'flip': 'reverse', 'tile': 'tile'}


# fluent methods that call a Python-level mx.nd function rather than one operator
_FUNCTIONS = {'split_v2': 'split_v2'}


def bound(array, name):
    """Return ``name`` as a method bound to ``array``, or raise AttributeError."""
    if name in _FUNCTIONS:
        from . import op_functions  # pylint: disable=import-outside-toplevel
        return functools.partial(getattr(op_functions, _FUNCTIONS[name]), array)
    op_name = _RENAMED.get(name, name)
    if op_name not in OPS:
        raise AttributeError("'NDArray' object has no attribute %r" % name)
    return functools.partial(_call, op_name, array)


def _call(op_name, array, *args, **kwargs):
    return invoke(op_name, (array,) + args, kwargs)
