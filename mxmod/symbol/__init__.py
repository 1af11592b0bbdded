"""``mx.sym``: symbols, variables, groups, JSON I/O and one creation function per operator."""
from . import sugar  # noqa: F401  (Python operators on Symbol)
from .symbol import Symbol, Group  # noqa: F401
from .register import Variable, var, make_function as _make_function  # noqa: F401
from .json_io import load, load_json  # noqa: F401
from . import random  # noqa: F401
from . import contrib  # noqa: F401
from . import linalg, image  # noqa: F401
from . import sparse  # noqa: F401
from ..ops.base import OPS as _OPS


def _install_ops(namespace):
    for name in list(_OPS):
        if name not in namespace:
            namespace[name] = _make_function(name)


_install_ops(globals())


class _Namespace(object):
    """``mx.sym._internal`` / ``mx.sym.op``: every operator function by its registered name."""

    def __init__(self, table):
        self.__dict__.update(table)


_internal = _Namespace({n: globals()[n] for n in _OPS})
op = _internal


def zeros(shape, dtype=None, **kwargs):
    """A symbol producing zeros of ``shape`` (float32 unless ``dtype`` says otherwise)."""
    return _make_function('_zeros', '_zeros')(shape=shape, dtype=dtype or 'float32', **kwargs)


def ones(shape, dtype=None, **kwargs):
    """A symbol producing ones of ``shape`` (float32 unless ``dtype`` says otherwise)."""
    return _make_function('_ones', '_ones')(shape=shape, dtype=dtype or 'float32', **kwargs)


def full(shape, val, dtype=None, **kwargs):
    """A symbol producing ``val`` everywhere in ``shape``."""
    return _make_function('_full', '_full')(shape=shape, value=val, dtype=dtype or 'float32', **kwargs)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    """A symbol producing evenly spaced values."""
    return _make_function('_arange', '_arange')(start=start, stop=stop, step=step, repeat=repeat,
                                                infer_range=infer_range, name=name,
                                                dtype=dtype or 'float32')


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    """A symbol producing ``num`` evenly spaced values from ``start`` to ``stop`` (the last one
    excluded when ``endpoint=False``)."""
    return _make_function('_linspace', '_linspace')(start=start, stop=stop, num=num,
                                                    endpoint=endpoint, name=name,
                                                    dtype=dtype or 'float32')


def pow(base, exp):  # pylint: disable=redefined-builtin
    """``base ** exp`` for symbols and numbers."""
    return base ** exp


def _symmetric(array_op, scalar_op, doc):
    """A function of two symbols, or a symbol and a number (named after MXNet's _Maximum, ...)."""
    def fn(left, right):
        if isinstance(left, Symbol) and isinstance(right, Symbol):
            return _make_function(array_op)(left, right)
        if isinstance(left, Symbol):
            return _make_function(scalar_op)(left, scalar=right)
        return _make_function(scalar_op)(right, scalar=left)
    fn.__doc__ = doc
    return fn


maximum = _symmetric('_Maximum', '_MaximumScalar', 'Elementwise maximum of symbols/numbers.')
minimum = _symmetric('_Minimum', '_MinimumScalar', 'Elementwise minimum of symbols/numbers.')
from .op_functions import power, hypot, eye, histogram, split_v2  # noqa: F401,E402
