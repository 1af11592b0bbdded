"""Placeholders for MXNet packages outside mxmod's scope (``amp``), and the error that packages
implemented only in part (``gluon``, ``np``, ``npx``) raise for what they leave out: an
MXNetError that says what mxmod covers of them."""
import types

from .base import MXNetError

OUT_OF_SCOPE = ('amp',)

# Packages of which mxmod implements a part; ``mx.<name>`` imports the subpackage named here.
PARTLY_IN_SCOPE = {'gluon': 'gluon', 'np': 'numpy', 'npx': 'numpy_extension'}


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
    return MXNetError('mx.%s.%s is not available: mxmod implements MXNet 1.x\'s NDArray, Symbol '
                      'and Gluon stack (mx.nd, mx.sym, mx.mod, mx.io, mx.kv, mx.gluon, ...); %s'
                      % (short, attr, scope))


class OutOfScopeModule(types.ModuleType):
    """A module whose every attribute access raises a clear error."""

    def __getattr__(self, attr):
        if attr.startswith('__'):
            raise AttributeError(attr)
        raise out_of_scope_error(self.__name__, attr)


def placeholder(name):
    """Create the placeholder module ``mxmod.<name>``."""
    return OutOfScopeModule('mxmod.' + name)
