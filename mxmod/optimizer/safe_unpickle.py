"""A restricted unpickler for ``.states`` files: only what MXNet's and mxmod's optimizer pickles
contain can be created, and a file is checked opcode by opcode before anything is built.

What MXNet 1.9.1 writes (surveyed for every registered optimizer, with and without
``multi_precision``, every scheduler, ``dump_optimizer`` on and off, local updaters and kvstore
updaters): dicts and tuples of ``mxnet.ndarray.ndarray.NDArray`` (rebuilt from a
``builtins.bytearray`` record), optimizer classes under ``mxnet.optimizer.optimizer`` /
``mxnet.optimizer.contrib`` and schedulers under ``mxnet.lr_scheduler``. Older pickle protocols
add ``copyreg._reconstructor``; numbers a user passed as numpy scalars add numpy's scalar and
dtype constructors. Nothing else is importable: an ``os.system`` or ``builtins.eval`` reference
is refused before it is looked up."""
import copyreg
import io
import pickle
import pickletools
import sys

import numpy as np

from ..base import MXNetError

__all__ = ['restricted_loads', 'StatesFileError']

# opcodes that reach outside the pickle (persistent ids, the copyreg extension registry)
_FORBIDDEN_OPCODES = frozenset(['PERSID', 'BINPERSID', 'EXT1', 'EXT2', 'EXT4'])
# numeric numpy dtype codes a scalar may carry (never object or void)
_NUMPY_KINDS = frozenset('biufc')
MAX_DEPTH = 64


class StatesFileError(MXNetError):
    """A ``.states`` file (or pickled optimizer) that mxmod refuses to load."""


def _fail(source, what):
    raise StatesFileError('Invalid optimizer states in %s: %s' % (source, what))


def prescan(data, source):
    """Walk the opcodes of ``data`` without building anything.

    Refuses truncated or unknown opcodes, declared lengths beyond the data (the allocation
    bombs of a mutated file), persistent ids, extension codes and bytes after the final STOP."""
    view = memoryview(data)
    stream = io.BytesIO(view)
    end = None
    try:
        for opcode, arg, pos in pickletools.genops(stream):
            if opcode.name in _FORBIDDEN_OPCODES:
                _fail(source, 'opcode %s at byte %d is not allowed' % (opcode.name, pos))
            if opcode.name == 'FRAME' and arg > len(view) - stream.tell():
                _fail(source, 'frame at byte %d declares %d bytes, only %d follow'
                      % (pos, arg, len(view) - stream.tell()))
            end = stream.tell()
    except StatesFileError:
        raise
    except Exception as err:  # pylint: disable=broad-except
        _fail(source, 'not a valid pickle (%s: %s)' % (type(err).__name__, err))
    if end is None:
        _fail(source, 'empty data')
    if end != len(view):
        _fail(source, '%d bytes follow the end of the pickle at byte %d' % (len(view) - end, end))


# ---- the constructors a pickle may call ----------------------------------------------------
def _bytearray(*args):
    """``bytearray`` as MXNet's NDArray records reduce to it: from bytes, or text + 'latin-1'."""
    if not args:
        return bytearray()
    if len(args) == 1 and isinstance(args[0], (bytes, bytearray)):
        return bytearray(args[0])
    if len(args) == 2 and isinstance(args[0], str) and args[1] == 'latin-1':
        return bytearray(args[0], 'latin-1')
    raise pickle.UnpicklingError('bytearray%r is not an array record' % (tuple(
        type(a).__name__ for a in args),))


def _numpy_dtype(code, align=False, copy=False):
    dtype = np.dtype(code, align, copy) if isinstance(code, str) else None
    if dtype is None or dtype.kind not in _NUMPY_KINDS:
        raise pickle.UnpicklingError('numpy dtype %r is not a plain number type' % (code,))
    return dtype


def _numpy_scalar(dtype, data=None):
    if not isinstance(dtype, np.dtype) or dtype.kind not in _NUMPY_KINDS \
            or not isinstance(data, bytes) or len(data) != dtype.itemsize:
        raise pickle.UnpicklingError('numpy scalar(%r, %d bytes) is not a plain number'
                                     % (dtype, len(data) if isinstance(data, bytes) else -1))
    return np.frombuffer(data, dtype=dtype)[0]


class _Restricted(pickle.Unpickler):
    """Resolves only allowed globals; ``classes`` maps (module, name) to what to build."""

    def __init__(self, stream, resolve):
        super(_Restricted, self).__init__(stream)
        self._resolve = resolve

    def find_class(self, module, name):
        if (module, name) in (('builtins', 'bytearray'), ('__builtin__', 'bytearray')):
            return _bytearray
        if module in ('copyreg', 'copy_reg') and name == '_reconstructor':
            return self._reconstructor
        if module in ('numpy', 'numpy.core.multiarray', 'numpy._core.multiarray'):
            if name == 'dtype':
                return _numpy_dtype
            if name == 'scalar':
                return _numpy_scalar
        target = self._resolve(module, name)
        if target is None:
            raise pickle.UnpicklingError('%s.%s is not allowed in an optimizer states pickle'
                                         % (module, name))
        return target

    def _reconstructor(self, cls, base, state):
        """Protocol 0/1 object creation, for allowed classes built from ``object`` only."""
        allowed = self._resolve(getattr(cls, '__module__', ''), getattr(cls, '__name__', ''))
        if allowed is not cls or base is not object or state is not None:
            raise pickle.UnpicklingError('copyreg._reconstructor(%r, %r) is not allowed'
                                         % (cls, base))
        return copyreg._reconstructor(cls, base, state)  # pylint: disable=protected-access

    def persistent_load(self, pid):
        raise pickle.UnpicklingError('persistent ids are not allowed')


def restricted_loads(data, resolve, source):
    """Unpickle ``data``, creating only what ``resolve(module, name)`` allows.

    Parameters
    ----------
    data : bytes
    resolve : callable
        ``(module, name) -> object or None``; None refuses the global.
    source : str
        Names the file (or buffer) in errors.

    Returns
    -------
    object
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError('optimizer states must be bytes, got %s' % type(data).__name__)
    prescan(data, source)
    limit = sys.getrecursionlimit()
    try:
        return _Restricted(io.BytesIO(data), resolve).load()
    except StatesFileError:
        raise
    except RecursionError:
        _fail(source, 'objects nested deeper than the recursion limit (%d)' % limit)
    except Exception as err:  # pylint: disable=broad-except
        _fail(source, '%s: %s' % (type(err).__name__, err))
    return None
