"""Base definitions shared by every layer: the error type, type aliases and small helpers."""
import ctypes
import numbers
import os
import platform

import numpy as np

__all__ = ['MXNetError', 'string_types', 'numeric_types', 'integer_types', 'mx_real_t',
           'as_list', 'check_call', 'data_dir', 'data_dir_default', 'classproperty',
           'with_metaclass', 'NDArrayHandle', 'py_str']

# MXNet's C handle types: an NDArray passes for an NDArrayHandle where ctypes expects one
# (``ctypes.cast(arr, NDArrayHandle)``), and ``NDArray(handle)`` gives back an array on it
NDArrayHandle = ctypes.c_void_p


def data_dir_default():
    """The default folder for downloaded data and models: ``%APPDATA%\\mxnet`` on Windows,
    ``~/.mxnet`` elsewhere."""
    if platform.system() == 'Windows':
        return os.path.join(os.environ.get('APPDATA', os.path.expanduser('~')), 'mxnet')
    return os.path.join(os.path.expanduser('~'), '.mxnet')


def data_dir():
    """The folder for downloaded data and models: ``$MXNET_HOME``, else data_dir_default()."""
    return os.getenv('MXNET_HOME', data_dir_default())


class MXNetError(RuntimeError):
    """Error raised by mxmod where MXNet raises its MXNetError.

    It subclasses RuntimeError so that code catching either works."""


class MXNetIndexError(MXNetError, IndexError):
    """An index out of range, where MXNet raises IndexError (caught by either name)."""


class MXNetValueError(MXNetError, ValueError):
    """A bad value, where MXNet raises ValueError (caught by either name)."""


class MXNetTypeError(MXNetError, TypeError):
    """A value of the wrong type, where MXNet raises TypeError (caught by either name)."""


class DeferredOpError(MXNetError):
    """An error an operator meets while computing on the values (an index out of range with
    mode='raise', ...). MXNet's engine runs operators asynchronously and reports such errors
    when a result is read: the arrays the operator writes (and those computed from them) carry
    the error, and ``asnumpy`` / ``wait_to_read`` raise it once. mxmod does the same."""


string_types = (str,)
numeric_types = (float, int, np.generic, numbers.Number)
integer_types = (int, np.integer)
mx_real_t = np.float32


def as_list(obj):
    """Return ``obj`` as a list: lists and tuples become lists, anything else a one-element list."""
    if isinstance(obj, (list, tuple)):
        return list(obj)
    return [obj]


_as_list = as_list


def check_call(ret):
    """Compatibility shim: MXNet's C API guard. mxmod has no C API, so it only checks for errors."""
    if ret:
        raise MXNetError('call failed with code %r' % (ret,))


class NotImplementedForSymbol(MXNetError):
    """Raised when an NDArray-only operation (such as ``bool``) is applied to a Symbol."""

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = getattr(function, '__name__', str(function))
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = 'Function %s' % self.function
        if self.alias:
            msg += ' (namely operator "%s")' % self.alias
        if self.args:
            msg += ' with arguments (%s)' % ', '.join(self.args)
        return msg + ' is not implemented for Symbol and only available in NDArray.'


def py_str(value):
    """Decode bytes to str (MXNet's helper for C strings)."""
    return value.decode('utf-8') if isinstance(value, bytes) else str(value)


class _NullType(object):
    """Placeholder for an argument that was not given (MXNet's ``_Null``)."""

    def __repr__(self):
        return '_Null'


_Null = _NullType()


def write_file_atomic(fname, data):
    """Write ``data`` (bytes or str) to ``fname`` all-or-nothing and durably (see
    :mod:`mxmod.atomic_io`): a failed or killed write never destroys an earlier file."""
    from .atomic_io import write_file_atomic as write  # pylint: disable=import-outside-toplevel
    write(fname, data)


class _ClassProperty(object):
    """A property of the class itself (read as ``Cls.name``, assigned as ``Cls.name = v`` when the
    class's metaclass is _MXClassPropertyMetaClass)."""

    def __init__(self, fget, fset=None):
        self.fget = fget
        self.fset = fset
        self.__doc__ = getattr(fget, '__doc__', None)

    def __get__(self, obj, owner=None):
        return self.fget(owner if owner is not None else type(obj))

    def __set__(self, obj, value):
        if self.fset is None:
            raise AttributeError('can\'t set attribute')
        self.fset(obj if isinstance(obj, type) else type(obj), value)

    def setter(self, fset):
        """Declare the function that assigns the property: ``fset(cls, value)``."""
        self.fset = fset
        return self


def classproperty(fget):
    """Decorator: a read-only (until ``.setter``) property of the class, ``fget(cls)``."""
    if isinstance(fget, (classmethod, staticmethod)):
        fget = fget.__func__
    return _ClassProperty(fget)


class _MXClassPropertyMetaClass(type):
    """Metaclass that routes ``Cls.name = value`` to a classproperty's setter."""

    def __setattr__(cls, key, value):
        for klass in cls.__mro__:
            found = klass.__dict__.get(key)
            if found is not None:
                if isinstance(found, _ClassProperty):
                    found.__set__(cls, value)
                    return
                break
        super().__setattr__(key, value)


def with_metaclass(meta, *bases):
    """A base class that makes the class deriving from it use ``meta`` (as six does)."""
    return meta('_WithMetaclassBase', bases or (object,), {})
