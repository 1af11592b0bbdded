"""``mx.nd.image``: the operators registered as ``_image_<name>``, under ``<name>``."""
from .contrib import _install

_install(globals(), '_image_')
