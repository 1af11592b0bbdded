"""``mx.nd.add``, ``subtract``, ``maximum``, ``equal``... : array/array (broadcasting) or
array/scalar dispatch to the matching operators, as MXNet's ndarray module does."""
from ..base import numeric_types
from .ndarray import NDArray
from .register import invoke

# name: (broadcast op, scalar op, reflected scalar op or None when symmetric)
_TABLE = {
    'add': ('broadcast_add', '_plus_scalar', None),
    'subtract': ('broadcast_sub', '_minus_scalar', '_rminus_scalar'),
    'multiply': ('broadcast_mul', '_mul_scalar', None),
    'divide': ('broadcast_div', '_div_scalar', '_rdiv_scalar'),
    'true_divide': ('broadcast_div', '_div_scalar', '_rdiv_scalar'),
    'modulo': ('broadcast_mod', '_mod_scalar', '_rmod_scalar'),
    'power': ('broadcast_power', '_power_scalar', '_rpower_scalar'),
    'maximum': ('broadcast_maximum', '_maximum_scalar', None),
    'minimum': ('broadcast_minimum', '_minimum_scalar', None),
    'equal': ('broadcast_equal', '_equal_scalar', None),
    'not_equal': ('broadcast_not_equal', '_not_equal_scalar', None),
    'greater': ('broadcast_greater', '_greater_scalar', '_lesser_scalar'),
    'greater_equal': ('broadcast_greater_equal', '_greater_equal_scalar', '_lesser_equal_scalar'),
    'lesser': ('broadcast_lesser', '_lesser_scalar', '_greater_scalar'),
    'lesser_equal': ('broadcast_lesser_equal', '_lesser_equal_scalar', '_greater_equal_scalar'),
    'logical_and': ('broadcast_logical_and', '_logical_and_scalar', None),
    'logical_or': ('broadcast_logical_or', '_logical_or_scalar', None),
    'logical_xor': ('broadcast_logical_xor', '_logical_xor_scalar', None),
}


def _make(name, array_op, scalar_op, reflected_op):
    def fn(lhs, rhs, out=None):
        if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
            return invoke(array_op, (lhs, rhs), {'out': out})
        if isinstance(lhs, NDArray) and isinstance(rhs, numeric_types):
            return invoke(scalar_op, (lhs,), {'scalar': rhs, 'out': out})
        if isinstance(rhs, NDArray) and isinstance(lhs, numeric_types):
            return invoke(reflected_op or scalar_op, (rhs,), {'scalar': lhs, 'out': out})
        if isinstance(lhs, numeric_types) and isinstance(rhs, numeric_types):
            return _SCALAR_FN[name](lhs, rhs)
        raise TypeError('mx.nd.%s: expected NDArrays or numbers, got %s and %s'
                        % (name, type(lhs).__name__, type(rhs).__name__))
    fn.__name__ = name
    fn.__doc__ = 'Elementwise %s of NDArrays (with broadcasting) and/or scalars.' % name
    return fn


_SCALAR_FN = {
    'add': lambda a, b: a + b, 'subtract': lambda a, b: a - b, 'multiply': lambda a, b: a * b,
    'divide': lambda a, b: a / b, 'true_divide': lambda a, b: a / b, 'modulo': lambda a, b: a % b,
    'power': lambda a, b: a ** b, 'maximum': max, 'minimum': min,
    'equal': lambda a, b: float(a == b), 'not_equal': lambda a, b: float(a != b),
    'greater': lambda a, b: float(a > b), 'greater_equal': lambda a, b: float(a >= b),
    'lesser': lambda a, b: float(a < b), 'lesser_equal': lambda a, b: float(a <= b),
    'logical_and': lambda a, b: float(bool(a) and bool(b)),
    'logical_or': lambda a, b: float(bool(a) or bool(b)),
    'logical_xor': lambda a, b: float(bool(a) != bool(b)),
}

FUNCTIONS = {name: _make(name, *ops) for name, ops in _TABLE.items()}
