"""``mx.sym.contrib``: the operators registered as ``_contrib_<Name>``, under ``<Name>``."""
from ..ops.base import OPS as _OPS
from .register import make_function as _make_function


def _install(namespace, prefix='_contrib_'):
    """Put every operator registered as ``<prefix><name>`` into ``namespace`` as ``<name>``
    (symbols are named after ``<name>``, as MXNet does)."""
    for name in list(_OPS):
        if name.startswith(prefix):
            namespace[name[len(prefix):]] = _make_function(name, name[len(prefix):])


_install(globals())
