"""Placeholders for MXNet packages outside mxmod's scope (Gluon, the numpy front end, contrib...).

``from mxmod import gluon`` succeeds so that scripts importing it at the top still load; using any
attribute raises an MXNetError that says what mxmod covers."""
import types

from .base import MXNetError

OUT_OF_SCOPE = ('gluon', 'contrib', 'np', 'npx', 'autograd', 'image', 'amp', 'onnx')


class OutOfScopeModule(types.ModuleType):
    """A module whose every attribute access raises a clear error."""

    def __getattr__(self, attr):
        if attr.startswith('__'):
            raise AttributeError(attr)
        raise MXNetError('mx.%s.%s is not available: mxmod implements MXNet 1.x\'s symbolic stack '
                         '(mx.sym, mx.nd, mx.mod, mx.io, mx.kv, ...); %s is outside its scope'
                         % (self.__name__.split('.')[-1], attr, self.__name__))


def placeholder(name):
    """Create the placeholder module ``mxmod.<name>``."""
    return OutOfScopeModule('mxmod.' + name)
