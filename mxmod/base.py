"""Base definitions shared by every layer: the error type, type aliases and small helpers."""
import numbers

import numpy as np

__all__ = ['MXNetError', 'string_types', 'numeric_types', 'integer_types', 'mx_real_t',
           'as_list', 'check_call']


class MXNetError(RuntimeError):
    """Error raised by mxmod where MXNet raises its MXNetError.

    It subclasses RuntimeError so that code catching either works."""


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
