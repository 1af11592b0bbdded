"""``mx.sym.sparse``: the operators MXNet lists with sparse support (``dot``, ``retain``,
``elemwise_add``, ``Embedding``, ``square``, ...), the same operators as ``mx.sym`` under the
names of MXNet's sparse namespace."""
from ..ops.base import OPS as _OPS
from ..ops.sparse_registry import SPARSE_NAMESPACE as _NAMES
from .register import make_function as _make_function


def _install(namespace):
    for public, op_name in _NAMES.items():
        if op_name in _OPS:
            namespace[public] = _make_function(op_name, public)


_install(globals())
