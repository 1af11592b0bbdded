"""``mx.nd.linalg``: the operators registered as ``_linalg_<name>``, under ``<name>``."""
from .contrib import _install

_install(globals(), '_linalg_')
