"""``mx.nd``: the NDArray, its creation functions, imperative operators, save/load and random."""
from . import ndarray as _ndarray_mod
from . import arith  # noqa: F401  (installs the arithmetic operators on NDArray)
from . import shape_methods, grad_methods, pickling  # noqa: F401  (NDArray methods)
from .creation import linspace  # noqa: F401
from .interop import from_numpy, from_dlpack, to_dlpack_for_read, to_dlpack_for_write  # noqa: F401
from .legacy import onehot_encode, fill_element_0index  # noqa: F401
from .ndarray import (NDArray, array, empty, zeros, ones, full, arange, concat, concatenate,  # noqa: F401
                      stack, waitall, from_xp)
from .register import make_function as _make_function
from ..ops.base import OPS as _OPS

_KEEP = {'NDArray', 'array', 'empty', 'zeros', 'ones', 'full', 'arange', 'concat', 'stack', 'waitall',
         'linspace'}


def _install_ops(namespace):
    for _name in list(_OPS):
        if _name not in _KEEP:
            namespace[_name] = _make_function(_name)


_install_ops(globals())
from .dispatch import FUNCTIONS as _FUNCTIONS  # noqa: E402
globals().update(_FUNCTIONS)


class _Namespace(object):
    """``mx.nd._internal`` / ``mx.nd.op``: every operator function by its registered name."""

    def __init__(self, table):
        self.__dict__.update(table)


_internal = _Namespace({n: globals()[n] for n in _OPS if n in globals()})
op = _internal


def zeros_like(data, **kwargs):
    """Zeros with the shape, dtype and context of ``data``."""
    return _ndarray_mod.zeros_like(data, **{k: v for k, v in kwargs.items() if k in ('ctx', 'dtype')})


def ones_like(data, **kwargs):
    """Ones with the shape, dtype and context of ``data``."""
    return _ndarray_mod.ones_like(data, **{k: v for k, v in kwargs.items() if k in ('ctx', 'dtype')})


from .serialization import save, load, load_frombuffer  # noqa: F401,E402
from . import random  # noqa: F401,E402
from . import contrib  # noqa: F401,E402
from . import linalg, image  # noqa: F401,E402
from .op_functions import eye, histogram, split_v2, moveaxis, reset_arrays  # noqa: F401,E402
from . import sparse  # noqa: F401,E402
from .sparse_ndarray import CSRNDArray, RowSparseNDArray  # noqa: F401,E402
from .cached_op import CachedOp  # noqa: F401,E402
