"""Arithmetic, comparison and in-place operators of NDArray, with MXNet's dtype and broadcast rules.

Array-array operations broadcast (MXNet's ``broadcast_*``); results keep the left operand's dtype,
and comparisons return 0/1 in that dtype, as MXNet does."""
import operator


from ..base import MXNetError, numeric_types
from ..profiler.hooks import run_op
from ..profiler.state import PROFILER
from . import tape
from .ndarray import NDArray, from_xp, on_device, defer_error, pending_error


def _operand(self, other):
    if isinstance(other, NDArray):
        if other._ctx != self._ctx:
            raise MXNetError('operands live on different contexts: %s and %s' % (self._ctx, other._ctx))
        if other._data.dtype != self._data.dtype:
            raise MXNetError('Incompatible attr in node at 1-th input: expected %s, got %s (MXNet '
                             'does not promote: cast one operand with astype)'
                             % (self._data.dtype, other._data.dtype))
        return other._data
    if isinstance(other, numeric_types):
        # MXNet converts the scalar to the array's dtype first (int32 * 1.5 multiplies by 1)
        return self._data.dtype.type(other)
    raise TypeError('type %s not supported' % type(other))


def _result(self, value):
    if value.dtype != self._data.dtype:
        value = value.astype(self._data.dtype)
    return from_xp(value, self._ctx)


def _apply(fn, lhs, rhs):
    return fn(lhs, rhs)


def _profiled(fn, names, self, other, lhs, rhs):
    """``fn(lhs, rhs)`` recorded as the MXNet operator it stands for (``names``: the
    array-array and array-scalar operator names)."""
    return run_op(names[0] if isinstance(other, NDArray) else names[1], self._ctx, _apply, fn,
                  lhs, rhs)


def _recorded(self, other):
    return tape.is_recording() and (tape.in_graph(self) or
                                    (isinstance(other, NDArray) and tape.in_graph(other)))


def _record_binary(names, self, other, reflected):
    """The operation as the operator call autograd records (array-array broadcasting, or with
    a scalar)."""
    from .register import invoke  # pylint: disable=import-outside-toplevel
    if isinstance(other, NDArray):
        lhs, rhs = (other, self) if reflected else (self, other)
        return invoke(names[0], (lhs, rhs), {})
    if not isinstance(other, numeric_types):
        raise TypeError('type %s not supported' % type(other))
    return invoke(names[1], (self,), {'scalar': other})


def _binary(fn, names, reflected=False):
    @on_device
    def method(self, other):
        if _recorded(self, other):
            return _record_binary(names, self, other, reflected)
        rhs = _operand(self, other)
        lhs, rhs = (rhs, self._data) if reflected else (self._data, rhs)
        if PROFILER.imperative:
            out = _result(self, _profiled(fn, names, self, other, lhs, rhs))
        else:
            out = _result(self, fn(lhs, rhs))
        pending = pending_error((self, other))
        if pending is not None:     # computed from a value that carries an error: so does this
            defer_error([out], pending)
        return out
    return method


def _inplace(fn, names):
    @on_device
    def method(self, other):
        if tape.is_recording():
            from .grad_methods import check_assignment  # pylint: disable=import-outside-toplevel
            check_assignment(self, other)
        rhs = _operand(self, other)
        if PROFILER.imperative:
            self._data[...] = _profiled(fn, names, self, other, self._data, rhs)
        else:
            self._data[...] = fn(self._data, rhs)
        return self
    return method


def _module_of(*values):
    from ..sparse_storage import array_module  # pylint: disable=import-outside-toplevel
    return array_module(next(v for v in values if hasattr(v, 'dtype') and hasattr(v, 'shape')))


def _mod(lhs, rhs):
    """MXNet's % (0 where the divisor is 0)."""
    from ..ops.elemwise import mx_mod  # pylint: disable=import-outside-toplevel
    return mx_mod(_module_of(lhs, rhs), lhs, rhs)


def _pow(lhs, rhs):
    """MXNet's ** (integers raised in floating point and cast back)."""
    from ..ops.elemwise import mx_power  # pylint: disable=import-outside-toplevel
    return mx_power(_module_of(lhs, rhs), lhs, rhs)


# method: (function, MXNet's operator names for the profiler: array-array, array-scalar,
# scalar-array, in-place array-array)
_OPS = {
    'add': (operator.add, 'broadcast_add', '_plus_scalar', '_plus_scalar', '_plus'),
    'sub': (operator.sub, 'broadcast_sub', '_minus_scalar', '_rminus_scalar', '_minus'),
    'mul': (operator.mul, 'broadcast_mul', '_mul_scalar', '_mul_scalar', '_mul'),
    'truediv': (operator.truediv, 'broadcast_div', '_div_scalar', '_rdiv_scalar', '_div'),
    'div': (operator.truediv, 'broadcast_div', '_div_scalar', '_rdiv_scalar', '_div'),
    'mod': (_mod, 'broadcast_mod', '_mod_scalar', '_rmod_scalar', '_mod'),
    'pow': (_pow, 'broadcast_power', '_power_scalar', '_rpower_scalar', '_power'),
}
for _name, (_fn, _array, _scalar, _rscalar, _inplace_array) in _OPS.items():
    setattr(NDArray, '__%s__' % _name, _binary(_fn, (_array, _scalar)))
    setattr(NDArray, '__r%s__' % _name, _binary(_fn, (_array, _rscalar), reflected=True))
    setattr(NDArray, '__i%s__' % _name, _inplace(_fn, (_inplace_array, _scalar)))

for _name, (_fn, _op) in {'eq': (operator.eq, 'equal'), 'ne': (operator.ne, 'not_equal'),
                          'gt': (operator.gt, 'greater'), 'ge': (operator.ge, 'greater_equal'),
                          'lt': (operator.lt, 'lesser'),
                          'le': (operator.le, 'lesser_equal')}.items():
    setattr(NDArray, '__%s__' % _name, _binary(_fn, ('broadcast_' + _op, '_%s_scalar' % _op)))


@on_device
def _neg(self):
    if _recorded(self, None):
        return _record_unary('negative', self)
    return from_xp(-self._data, self._ctx)


@on_device
def _abs(self):
    if _recorded(self, None):
        return _record_unary('abs', self)
    return from_xp(abs(self._data), self._ctx)


def _record_unary(op_name, self):
    from .register import invoke  # pylint: disable=import-outside-toplevel
    return invoke(op_name, (self,), {})


NDArray.__neg__ = _neg
NDArray.__pos__ = lambda self: self
NDArray.__abs__ = _abs
NDArray.__hash__ = lambda self: id(self)

