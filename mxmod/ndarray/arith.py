"""Arithmetic, comparison and in-place operators of NDArray, with MXNet's dtype and broadcast rules.

Array-array operations broadcast (MXNet's ``broadcast_*``); results keep the left operand's dtype,
and comparisons return 0/1 in that dtype, as MXNet does."""
import operator

import numpy as np

from ..base import MXNetError, numeric_types
from .ndarray import NDArray, from_xp, on_device, _put


def _operand(self, other):
    if isinstance(other, NDArray):
        if other._ctx != self._ctx:
            raise MXNetError('operands live on different contexts: %s and %s' % (self._ctx, other._ctx))
        return other._data
    if isinstance(other, numeric_types):
        # MXNet converts the scalar to the array's dtype first (int32 * 1.5 multiplies by 1)
        return self._data.dtype.type(other)
    if isinstance(other, np.ndarray):
        return _put(other, self._ctx)
    raise TypeError('unsupported operand type %s for NDArray arithmetic' % type(other).__name__)


def _result(self, value):
    if value.dtype != self._data.dtype:
        value = value.astype(self._data.dtype)
    return from_xp(value, self._ctx)


def _binary(fn, reflected=False):
    @on_device
    def method(self, other):
        rhs = _operand(self, other)
        return _result(self, fn(rhs, self._data) if reflected else fn(self._data, rhs))
    return method


def _inplace(fn):
    @on_device
    def method(self, other):
        rhs = _operand(self, other)
        self._data[...] = fn(self._data, rhs)
        return self
    return method


_OPS = {
    'add': operator.add, 'sub': operator.sub, 'mul': operator.mul,
    'truediv': operator.truediv, 'div': operator.truediv, 'mod': operator.mod, 'pow': operator.pow,
}
for _name, _fn in _OPS.items():
    setattr(NDArray, '__%s__' % _name, _binary(_fn))
    setattr(NDArray, '__r%s__' % _name, _binary(_fn, reflected=True))
    setattr(NDArray, '__i%s__' % _name, _inplace(_fn))

for _name, _fn in {'eq': operator.eq, 'ne': operator.ne, 'gt': operator.gt, 'ge': operator.ge,
                   'lt': operator.lt, 'le': operator.le}.items():
    setattr(NDArray, '__%s__' % _name, _binary(_fn))


@on_device
def _neg(self):
    return from_xp(-self._data, self._ctx)


@on_device
def _abs(self):
    return from_xp(abs(self._data), self._ctx)


NDArray.__neg__ = _neg
NDArray.__pos__ = lambda self: self
NDArray.__abs__ = _abs
NDArray.__hash__ = lambda self: id(self)

