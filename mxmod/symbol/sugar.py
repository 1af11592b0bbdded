"""Python operators on Symbols (``a + b``, ``a * 2``, ``-a``, ``a > b``...) and fluent methods
(``x.abs()``, ``x.reshape(...)``), creating the same nodes MXNet creates."""
from ..base import numeric_types
from .register import create
from .symbol import Symbol

# python operator -> (array op hint, scalar op hint, reflected scalar op hint)
_ARITH = {
    'add': ('_Plus', '_PlusScalar', '_PlusScalar'),
    'sub': ('_Minus', '_MinusScalar', '_RMinusScalar'),
    'mul': ('_Mul', '_MulScalar', '_MulScalar'),
    'truediv': ('_Div', '_DivScalar', '_RDivScalar'),
    'div': ('_Div', '_DivScalar', '_RDivScalar'),
    'mod': ('_Mod', '_ModScalar', '_RModScalar'),
    'pow': ('_Power', '_PowerScalar', '_rpower_scalar'),
}
_COMPARE = {
    'eq': ('_equal', '_equal_scalar'), 'ne': ('_not_equal', '_not_equal_scalar'),
    'gt': ('_greater', '_greater_scalar'), 'ge': ('_greater_equal', '_greater_equal_scalar'),
    'lt': ('_lesser', '_lesser_scalar'), 'le': ('_lesser_equal', '_lesser_equal_scalar'),
}
_MIRRORED = {'gt': 'lt', 'ge': 'le', 'lt': 'gt', 'le': 'ge', 'eq': 'eq', 'ne': 'ne'}


def _apply(hint, args, **params):
    return create(hint, hint.lower(), args, params)


def _binary(array_hint, scalar_hint, reflected_hint=None, reflected=False):
    def method(self, other):
        if isinstance(other, Symbol):
            return _apply(array_hint, (other, self) if reflected else (self, other))
        if isinstance(other, numeric_types):
            return _apply(reflected_hint if reflected else scalar_hint, (self,), scalar=other)
        return NotImplemented
    return method


for _name, (_arr, _sc, _rsc) in _ARITH.items():
    setattr(Symbol, '__%s__' % _name, _binary(_arr, _sc))
    setattr(Symbol, '__r%s__' % _name, _binary(_arr, _sc, _rsc, reflected=True))


def _inplace_unsupported(name):
    def method(self, other):
        raise NotImplementedError('in-place %s is not supported on Symbol' % name)
    return method


for _name in _ARITH:
    setattr(Symbol, '__i%s__' % _name, _binary(*_ARITH[_name][:2]))

for _name, (_arr, _sc) in _COMPARE.items():
    setattr(Symbol, '__%s__' % _name, _binary(_arr, _sc))


def _neg(self):
    return _apply('_MulScalar', (self,), scalar=-1.0)


def _abs(self):
    return _apply('abs', (self,))


def _hash(self):
    return id(self)


Symbol.__neg__ = _neg
Symbol.__abs__ = _abs
Symbol.__hash__ = _hash

_FLUENT_RENAMED = {'split': 'SliceChannel', 'swapaxes': 'SwapAxis', 'flip': 'reverse',
                   'astype': 'Cast'}
_FLUENT_HINT = {'astype': 'cast'}     # MXNet names x.astype(...) 'cast<n>'


def _fluent(self, name):
    from ..ops.base import OPS  # pylint: disable=import-outside-toplevel
    op_name = name if name in OPS else _FLUENT_RENAMED.get(name, name)
    if name.startswith('_') or op_name not in OPS:
        raise AttributeError("'Symbol' object has no attribute %r" % name)

    def method(*args, **kwargs):
        return create(op_name, _FLUENT_HINT.get(name, name.lower()), (self,) + args, kwargs)
    return method


Symbol.__getattr__ = _fluent
