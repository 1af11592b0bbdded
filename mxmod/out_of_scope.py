"""Placeholders for MXNet packages outside mxmod's scope (``amp``), and the error that packages
implemented only in part (``gluon``, ``np``, ``npx``) raise for what they leave out: an
MXNetError that says what mxmod covers of them, for an attribute (``mx.gluon.data``) and for an
import of a submodule (``from mxnet.gluon.data import DataLoader``) alike."""
import importlib.abc
import sys
import types

from .base import MXNetError

OUT_OF_SCOPE = ('amp',)

# Packages of which mxmod implements a part; ``mx.<name>`` imports the subpackage named here.
PARTLY_IN_SCOPE = {'gluon': 'gluon', 'np': 'numpy', 'npx': 'numpy_extension'}


# Packages of which mxmod implements a part: importing a submodule of theirs that mxmod does not
# have raises OutOfScopeImportError (found by OutOfScopeFinder) instead of ModuleNotFoundError.
PARTIAL_PACKAGES = ('mxmod.gluon', 'mxmod.gluon.contrib', 'mxmod.gluon.model_zoo',
                    'mxmod.gluon.model_zoo.vision', 'mxmod.gluon.rnn', 'mxmod.gluon.nn',
                    'mxmod.numpy', 'mxmod.numpy_extension', 'mxmod.contrib')


class OutOfScopeImportError(MXNetError, ModuleNotFoundError):
    """An import of a module outside mxmod's scope: an MXNetError (what mxmod raises for the
    rest of what it leaves out) that ``except ImportError`` also catches."""


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
    short = module_name.split('.', 1)[1] if '.' in module_name else ''
    full = 'mx.%s.%s' % (short, attr) if short else 'mx.' + attr
    if covered:
        scope = 'of mx.%s it implements only %s; the rest is outside its scope' % (short, covered)
    else:
        scope = '%s is outside its scope' % (module_name if short else full)
    return MXNetError('%s is not available: mxmod implements MXNet 1.x\'s NDArray, Symbol '
                      'and Gluon stack (mx.nd, mx.sym, mx.mod, mx.io, mx.kv, mx.gluon, ...); %s'
                      % (full, scope))


class OutOfScopeModule(types.ModuleType):
    """A module whose every attribute access raises a clear error."""

    def __getattr__(self, attr):
        if attr.startswith('__'):
            raise AttributeError(attr)
        raise out_of_scope_error(self.__name__, attr)


def placeholder(name):
    """Create the placeholder module ``mxmod.<name>``."""
    return OutOfScopeModule('mxmod.' + name)


class OutOfScopeFinder(importlib.abc.MetaPathFinder):
    """Last on ``sys.meta_path``: asked only for modules no other finder found. For a submodule
    of a partly implemented package (PARTIAL_PACKAGES) or of a package outside the scope
    (OUT_OF_SCOPE), raise the MXNetError that says what mxmod covers; otherwise let the import
    fail as usual."""

    def find_spec(self, name, path=None, target=None):  # pylint: disable=unused-argument
        parent, _, child = name.rpartition('.')
        parts = name.split('.')
        if len(parts) > 1 and parts[0] == 'mxmod' and parts[1] in OUT_OF_SCOPE:
            error = out_of_scope_error('.'.join(parts[:-1]), parts[-1])
        elif parent in PARTIAL_PACKAGES and not child.startswith('_'):
            # vars(): the package's own __getattr__ would raise (or import) for a missing name
            covered = vars(sys.modules[parent]).get('COVERED') if parent in sys.modules else None
            error = out_of_scope_error(parent, child, covered)
        else:
            return None
        error = OutOfScopeImportError(str(error))
        error.name = name
        raise error


def install_finder():
    """Append OutOfScopeFinder to ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, OutOfScopeFinder) for finder in sys.meta_path):
        sys.meta_path.append(OutOfScopeFinder())
