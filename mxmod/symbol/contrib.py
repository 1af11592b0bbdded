"""``mx.sym.contrib``: the operators registered as ``_contrib_<Name>``, under ``<Name>``."""
from ..ops.base import OPS as _OPS
from .register import make_function as _make_function


def _install(namespace):
    for name in list(_OPS):
        if name.startswith('_contrib_'):
            namespace[name[len('_contrib_'):]] = _make_function(name, name[len('_contrib_'):])


_install(globals())
