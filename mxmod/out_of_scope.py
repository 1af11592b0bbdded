"""Placeholders for MXNet packages outside mxmod's scope (the numpy front end, contrib...).

``from mxmod import contrib`` succeeds so that scripts importing it at the top still load; using
any attribute raises an MXNetError that says what mxmod covers. Packages implemented only in part
(``gluon``: its recurrent cells, used on Symbols) raise the same error for what they leave out."""
import types

from .base import MXNetError

OUT_OF_SCOPE = ('np', 'npx', 'amp')

# Packages of which mxmod implements a part; ``mx.<name>`` imports the real subpackage.
PARTLY_IN_SCOPE = ('gluon',)


def out_of_scope_error(module_name, attr, covered=None):
    """The MXNetError for using ``attr`` of the package ``module_name`` ('mxmod.<name>').

    Parameters
    ----------
    module_name : str
        Full name of the package, e.g. 'mxmod.gluon'.
    attr : str
        The attribute that was asked for.
    covered : str, optional
        What mxmod implements of that package, said in the message.

    Returns
    -------
    MXNetError
    """
    short = module_name.split('.', 1)[-1]
    if covered:
        scope = 'of mx.%s it implements only %s; the rest is outside its scope' % (short, covered)
    else:
        scope = '%s is outside its scope' % module_name
    return MXNetError('mx.%s.%s is not available: mxmod implements MXNet 1.x\'s symbolic stack '
                      '(mx.sym, mx.nd, mx.mod, mx.io, mx.kv, ...); %s' % (short, attr, scope))


class OutOfScopeModule(types.ModuleType):
    """A module whose every attribute access raises a clear error."""

    def __getattr__(self, attr):
        if attr.startswith('__'):
            raise AttributeError(attr)
        raise out_of_scope_error(self.__name__, attr)


def placeholder(name):
    """Create the placeholder module ``mxmod.<name>``."""
    return OutOfScopeModule('mxmod.' + name)
