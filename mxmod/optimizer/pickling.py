"""Optimizer states in MXNet's pickle format (the ``.states`` files).

MXNet pickles ``Updater.states`` (and, with ``dump_optimizer=True``, the optimizer) with the
standard pickle module. An NDArray appears as ``mxnet.ndarray.ndarray.NDArray(None)`` followed by
the state ``{'handle': bytearray(<one array record of the .params format>)}``; optimizers and
schedulers appear under ``mxnet.optimizer.optimizer`` and ``mxnet.lr_scheduler``. :func:`loads`
maps those names onto mxmod's classes, and :func:`dumps` writes mxmod objects under MXNet's names,
so the files move both ways."""
import importlib
import io
import pickle

from ..base import MXNetError
from ..context import Context
from ..ndarray.ndarray import NDArray, from_xp
from ..ndarray import serialization

__all__ = ['dumps', 'loads']

_NDARRAY = ('mxnet.ndarray.ndarray', 'NDArray')
_MODULE_RENAMES = (('mxmod.optimizer.contrib', 'mxnet.optimizer.contrib'),
                   ('mxmod.ndarray.sparse_ndarray', 'mxnet.ndarray.sparse'),
                   ('mxmod.optimizer', 'mxnet.optimizer.optimizer'),
                   ('mxmod.lr_scheduler', 'mxnet.lr_scheduler'),
                   ('numpy._core', 'numpy.core'))


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


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) == _NDARRAY:
            return _PickledNDArray
        if module == 'mxnet.optimizer.optimizer':
            return getattr(importlib.import_module('mxmod.optimizer'), name)
        if module.startswith('mxnet.') or module == 'mxnet':
            target = 'mxmod' + module[len('mxnet'):]
            try:
                return getattr(importlib.import_module(target), name)
            except (ImportError, AttributeError):
                raise MXNetError('cannot unpickle %s.%s: mxmod has no %s.%s'
                                 % (module, name, target, name)) from None
        return super(_Unpickler, self).find_class(module, name)


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


def loads(data):
    """Unpickle bytes written by MXNet or by :func:`dumps` into mxmod objects.

    Parameters
    ----------
    data : bytes

    Returns
    -------
    object
    """
    return _Unpickler(io.BytesIO(data)).load()
