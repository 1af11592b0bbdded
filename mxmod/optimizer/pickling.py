"""Optimizer states in MXNet's pickle format (the ``.states`` files).

MXNet pickles ``Updater.states`` (and, with ``dump_optimizer=True``, the optimizer) with the
standard pickle module. An NDArray appears as ``mxnet.ndarray.ndarray.NDArray(None)`` followed by
the state ``{'handle': bytearray(<one array record of the .params format>)}``; optimizers and
schedulers appear under ``mxnet.optimizer.optimizer`` and ``mxnet.lr_scheduler``. :func:`loads`
maps those names onto mxmod's classes, and :func:`dumps` writes mxmod objects under MXNet's names,
so the files move both ways."""
import io
import pickle
import sys

from ..base import MXNetError
from ..context import Context
from ..ndarray.ndarray import NDArray, from_xp
from ..ndarray import serialization
from .safe_unpickle import restricted_loads

__all__ = ['dumps', 'loads', 'load_states', 'read_states_file']

_NDARRAY = ('mxnet.ndarray.ndarray', 'NDArray')
_MODULE_RENAMES = (('mxmod.optimizer.contrib', 'mxnet.optimizer.contrib'),
                   ('mxmod.ndarray.sparse_ndarray', 'mxnet.ndarray.sparse'),
                   ('mxmod.optimizer', 'mxnet.optimizer.optimizer'),
                   ('mxmod.lr_scheduler', 'mxnet.lr_scheduler'),
                   ('numpy._core', 'numpy.core'))
_MXNET_OPTIMIZER_MODULES = ('mxnet.optimizer.optimizer', 'mxnet.optimizer.contrib',
                            'mxnet.optimizer')


class _PickledNDArray(NDArray):
    """Stand-in that MXNet's pickled NDArray reduces to; becomes a plain NDArray on setstate."""
    __slots__ = ()

    def __init__(self, handle=None):  # pylint: disable=super-init-not-called
        self._ctx = Context('cpu', 0)
        self._data = None
        if handle is not None:
            raise MXNetError('pickled NDArray: expected NDArray(None) then a state, got %r'
                             % (handle,))

    def __setstate__(self, state):
        raw = state.get('handle') if isinstance(state, dict) else None
        if raw is None:
            raise MXNetError('pickled NDArray has no data (state %r); MXNet writes '
                             "{'handle': bytearray(record)}" % (state,))
        data = serialization.record_from_bytes(raw, 'a pickled NDArray')
        if data is None:
            raise MXNetError('pickled NDArray holds an uninitialized (none) array')
        self._data = data
        self.__class__ = NDArray if getattr(data, 'stype', None) is None else \
            type(from_xp(data, self._ctx))


class _MXNetNDArrayName(object):
    """Marker whose global name is written as mxnet.ndarray.ndarray.NDArray."""


def _resolve(module, name):
    """What a global of a states pickle may name: MXNet's NDArray, registered optimizers and
    learning-rate schedulers (MXNet's names or the classes' own), nothing else."""
    if (module, name) == _NDARRAY:
        return _PickledNDArray
    if module == 'mxnet.ndarray.sparse' and name in ('RowSparseNDArray', 'CSRNDArray'):
        # sparse states (lazy optimizers on row_sparse weights), as MXNet pickles them
        from ..ndarray import sparse_ndarray  # pylint: disable=import-outside-toplevel
        return getattr(sparse_ndarray, name)
    from .base import Optimizer  # pylint: disable=import-outside-toplevel
    from .. import lr_scheduler  # pylint: disable=import-outside-toplevel
    if module in _MXNET_OPTIMIZER_MODULES:
        cls = Optimizer.opt_registry.get(name.lower())
        return cls if cls is not None and cls.__name__ == name else None
    for cls in Optimizer.opt_registry.values():
        if (cls.__module__, cls.__qualname__) == (module, name):
            return cls
    if module == 'mxnet.lr_scheduler':
        module = lr_scheduler.__name__
    owner = sys.modules.get(module)  # user schedulers: only from modules already imported
    cls = getattr(owner, name, None) if owner is not None and '.' not in name else None
    if isinstance(cls, type) and issubclass(cls, lr_scheduler.LRScheduler):
        return cls
    return None


class _Pickler(pickle._Pickler):  # pylint: disable=protected-access
    """Pure-Python pickler that writes NDArrays and mxmod optimizers under MXNet's names."""

    def reducer_override(self, obj):  # pylint: disable=method-hidden
        if isinstance(obj, NDArray) and obj.stype == 'default' and not isinstance(obj, type):
            record = serialization.record_to_bytes(obj)
            return (_MXNetNDArrayName, (None,), {'handle': bytearray(record)})
        return NotImplemented

    def save_global(self, obj, name=None):
        target = _global_name(obj)
        if target is None:
            return super(_Pickler, self).save_global(obj, name)
        module, qualname = target
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + module.encode('utf-8') + b'\n'
                       + qualname.encode('utf-8') + b'\n')
        self.memoize(obj)
        return None


def _global_name(obj):
    """MXNet's (module, name) for mxmod classes that MXNet knows, else None."""
    if obj is _MXNetNDArrayName:
        return _NDARRAY
    module = getattr(obj, '__module__', None) or ''
    for prefix, replacement in _MODULE_RENAMES:
        if module == prefix or module.startswith(prefix + '.'):
            if prefix == 'numpy._core':
                return replacement + module[len(prefix):], obj.__qualname__
            return replacement, obj.__qualname__
    return None


def dumps(obj, protocol=4):
    """Pickle ``obj`` (states dict, optionally with the optimizer) in MXNet's format.

    Parameters
    ----------
    obj : object
        What to pickle.
    protocol : int, optional
        Pickle protocol (MXNet 1.9 on Python 3 writes 4).

    Returns
    -------
    bytes
    """
    buf = io.BytesIO()
    _Pickler(buf, protocol=protocol).dump(obj)
    return buf.getvalue()


def loads(data, source=None):
    """Unpickle bytes written by MXNet or by :func:`dumps` into mxmod objects.

    Only NDArrays, registered optimizers and learning-rate schedulers (and the plain data they
    hold) can be created; anything else, and any damaged pickle, raises
    :class:`~mxmod.optimizer.safe_unpickle.StatesFileError` (an MXNetError) naming ``source``.

    Parameters
    ----------
    data : bytes
    source : str, optional
        What the bytes came from (a file name), for error messages.

    Returns
    -------
    object
    """
    if source is None:
        source = 'a buffer of %d bytes' % len(data) if hasattr(data, '__len__') else 'a buffer'
    return restricted_loads(data, _resolve, source)


def load_states(data, source=None):
    """Unpickle a ``.states`` payload and check its structure.

    Parameters
    ----------
    data : bytes
        What ``Updater.get_states`` (mxmod's or MXNet's) returned.
    source : str, optional
        What the bytes came from, for error messages.

    Returns
    -------
    (dict, Optimizer or None)
        The states by update key, and the optimizer when it was saved with them.
    """
    from .states_check import check_states_object  # pylint: disable=import-outside-toplevel
    if source is None:
        source = 'a buffer of %d bytes' % len(data) if hasattr(data, '__len__') else 'a buffer'
    return check_states_object(loads(data, source), source)


def read_states_file(fname):
    """The bytes of an optimizer states file; an MXNetError naming it when it cannot be read.

    Parameters
    ----------
    fname : str

    Returns
    -------
    bytes
    """
    if not isinstance(fname, (str, bytes)) and not hasattr(fname, '__fspath__'):
        raise TypeError('fname must be a file name, got %s' % type(fname).__name__)
    try:
        with open(fname, 'rb') as fin:
            return fin.read()
    except OSError as err:
        raise MXNetError('cannot read optimizer states file %r: %s'
                         % (fname, err.strerror or err)) from None
