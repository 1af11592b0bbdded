"""Elementwise operators: unary math, same-shape binary, broadcast_* and scalar forms; forward
against numpy, backward against float64 central differences, naming/aliases as MXNet's."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.ops.base import OPS
from mxmod_tests.ops.opcheck import check_forward, check_grad

RNG = np.random.RandomState(0)

# name: (numpy reference, input sampler, differentiable)
POS = lambda shape: RNG.uniform(0.5, 2.0, shape)  # noqa: E731
ANY = lambda shape: RNG.uniform(-2.0, 2.0, shape)  # noqa: E731
UNIT = lambda shape: RNG.uniform(-0.8, 0.8, shape)  # noqa: E731
BIG = lambda shape: RNG.uniform(1.2, 3.0, shape)  # noqa: E731
AWAY = lambda shape: RNG.choice([-1, 1], shape) * RNG.uniform(0.2, 2.0, shape)  # noqa: E731
UNARY = {
    'relu': (lambda x: np.maximum(x, 0), AWAY, True),
    'sigmoid': (lambda x: 1 / (1 + np.exp(-x)), ANY, True),
    'tanh': (np.tanh, ANY, True), 'softsign': (lambda x: x / (1 + np.abs(x)), ANY, True),
    'exp': (np.exp, ANY, True), 'expm1': (np.expm1, ANY, True), 'log': (np.log, POS, True),
    'log1p': (np.log1p, POS, True), 'log2': (np.log2, POS, True), 'log10': (np.log10, POS, True),
    'sqrt': (np.sqrt, POS, True), 'rsqrt': (lambda x: 1 / np.sqrt(x), POS, True),
    'cbrt': (np.cbrt, POS, True), 'rcbrt': (lambda x: 1 / np.cbrt(x), POS, True),
    'square': (np.square, ANY, True), 'abs': (np.abs, AWAY, True), 'sign': (np.sign, AWAY, False),
    'round': (np.round, ANY, False), 'rint': (np.rint, ANY, False), 'ceil': (np.ceil, ANY, False),
    'floor': (np.floor, ANY, False), 'trunc': (np.trunc, ANY, False), 'fix': (np.fix, ANY, False),
    'reciprocal': (lambda x: 1 / x, POS, True), 'negative': (np.negative, ANY, True),
    'sin': (np.sin, ANY, True), 'cos': (np.cos, ANY, True), 'tan': (np.tan, UNIT, True),
    'arcsin': (np.arcsin, UNIT, True), 'arccos': (np.arccos, UNIT, True),
    'arctan': (np.arctan, ANY, True), 'sinh': (np.sinh, ANY, True), 'cosh': (np.cosh, ANY, True),
    'arcsinh': (np.arcsinh, ANY, True), 'arccosh': (np.arccosh, BIG, True),
    'arctanh': (np.arctanh, UNIT, True), 'degrees': (np.degrees, ANY, True),
    'radians': (np.radians, ANY, True), 'identity': (lambda x: x, ANY, True),
    'BlockGrad': (lambda x: x, ANY, False), 'zeros_like': (np.zeros_like, ANY, False),
    'ones_like': (np.ones_like, ANY, False),
}


@pytest.mark.parametrize('name', sorted(UNARY))
def test_unary_forward_and_gradient(name):
    ref, sample, differentiable = UNARY[name]
    x = sample((3, 4))
    check_forward(name, {}, [x.astype(np.float32)], [ref(x).astype(np.float32)], rtol=1e-5, atol=1e-6)
    grads = check_grad(name, {}, [x]) if differentiable else None
    if not differentiable:
        op = OPS[name]({})
        from mxmod.ops.base import OpContext
        octx = OpContext(np, mx.cpu(), is_train=True, need_grad=[True])
        out = op.forward(octx, [x], [])
        grads = op.backward(octx, [np.ones_like(x)], [x] if 'inputs' in op.backward_uses else [None],
                            out if 'outputs' in op.backward_uses else [None], [])
        np.testing.assert_array_equal(grads[0], np.zeros_like(x))


BINARY = {'elemwise_add': np.add, 'elemwise_sub': np.subtract, 'elemwise_mul': np.multiply,
          'elemwise_div': np.divide, '_power': np.power, '_maximum': np.maximum,
          '_minimum': np.minimum, '_hypot': np.hypot, '_mod': np.mod}


@pytest.mark.parametrize('name', sorted(BINARY))
def test_binary_same_shape(name):
    a, b = RNG.uniform(0.5, 2.0, (3, 4)), RNG.uniform(0.5, 2.0, (3, 4))
    if name in ('_maximum', '_minimum'):
        b = a + RNG.choice([-0.3, 0.3], a.shape)   # no ties: the gradient is defined
    if name == '_mod':
        a, b = RNG.uniform(0.1, 0.9, (3, 4)) + 2 * np.arange(12).reshape(3, 4) % 3, np.full((3, 4), 1.7)
    check_forward(name, {}, [a.astype(np.float32), b.astype(np.float32)],
                  [BINARY[name](a, b).astype(np.float32)], rtol=1e-5, atol=1e-5)
    check_grad(name, {}, [a, b])


@pytest.mark.parametrize('name', ['broadcast_add', 'broadcast_sub', 'broadcast_mul', 'broadcast_div',
                                  'broadcast_power', 'broadcast_maximum', 'broadcast_minimum',
                                  'broadcast_hypot'])
def test_broadcast_forward_gradient_and_shape(name):
    fn = BINARY['elemwise_' + name[10:] if name[10:] in ('add', 'sub', 'mul', 'div') else '_' + name[10:]]
    a, b = RNG.uniform(0.5, 2.0, (2, 3, 4)), RNG.uniform(0.6, 1.9, (1, 3, 1))
    check_forward(name, {}, [a.astype(np.float32), b.astype(np.float32)],
                  [fn(a, b).astype(np.float32)], rtol=1e-5, atol=1e-5)
    grads = check_grad(name, {}, [a, b])
    assert grads[1].shape == (1, 3, 1)
    op = OPS[name]({})
    assert op.infer_shape([(2, 3, 4), (1, 3, 1)], [None])[1] == [(2, 3, 4)]
    with pytest.raises(mx.MXNetError, match='broadcast'):
        op.infer_shape([(2, 3), (4, 3)], [None])


COMPARE = {'equal': np.equal, 'not_equal': np.not_equal, 'greater': np.greater,
           'greater_equal': np.greater_equal, 'lesser': np.less, 'lesser_equal': np.less_equal}


@pytest.mark.parametrize('key', sorted(COMPARE))
def test_comparisons_return_input_dtype(key):
    a = np.array([[1., 2., 3.]], np.float32)
    b = np.array([[3., 2., 1.]], np.float32)
    out = check_forward('_' + key, {}, [a, b], [COMPARE[key](a, b).astype(np.float32)])
    assert out[0].dtype == np.float32
    check_forward('broadcast_' + key, {}, [a, b.T], [COMPARE[key](a, b.T).astype(np.float32)])
    check_forward('_%s_scalar' % key, {'scalar': '2'}, [a], [COMPARE[key](a, 2).astype(np.float32)])


SCALAR = {'_plus_scalar': lambda x, s: x + s, '_minus_scalar': lambda x, s: x - s,
          '_rminus_scalar': lambda x, s: s - x, '_mul_scalar': lambda x, s: x * s,
          '_div_scalar': lambda x, s: x / s, '_rdiv_scalar': lambda x, s: s / x,
          '_power_scalar': lambda x, s: x ** s, '_rpower_scalar': lambda x, s: s ** x,
          '_maximum_scalar': np.maximum, '_minimum_scalar': np.minimum,
          '_hypot_scalar': np.hypot, '_mod_scalar': np.mod, '_rmod_scalar': lambda x, s: np.mod(s, x)}


@pytest.mark.parametrize('name', sorted(SCALAR))
def test_scalar_ops(name):
    x = RNG.uniform(0.5, 2.0, (3, 4))
    if name in ('_maximum_scalar', '_minimum_scalar'):
        x = np.where(np.abs(x - 1.3) < 0.05, 1.5, x)
    check_forward(name, {'scalar': '1.3'}, [x.astype(np.float32)],
                  [SCALAR[name](x, 1.3).astype(np.float32)], rtol=1e-5, atol=1e-5)
    if name != '_rmod_scalar':
        check_grad(name, {'scalar': 1.3}, [x])


def test_integer_arrays_keep_their_dtype_with_float_scalars():
    x = np.array([1, 2, 3], np.int32)
    # as MXNet: the scalar is converted to int32 (1) before multiplying
    out = check_forward('_mul_scalar', {'scalar': '1.5'}, [x], [np.array([1, 2, 3], np.int32)])
    assert out[0].dtype == np.int32


def test_mxnet_aliases_and_naming():
    assert OPS['_Plus'] is OPS['elemwise_add'] and OPS['_RMinusScalar'] is OPS['_rminus_scalar']
    assert OPS['broadcast_plus'] is OPS['broadcast_add'] and OPS['stop_gradient'] is OPS['BlockGrad']
    with mx.name.NameManager():
        assert mx.sym.broadcast_plus(mx.sym.var('a'), mx.sym.var('b')).name == 'broadcast_plus0'


def test_add_n_and_sources():
    xs = [RNG.uniform(size=(2, 3)) for _ in range(3)]
    check_forward('add_n', {'num_args': 3}, [x.astype(np.float32) for x in xs],
                  [sum(xs).astype(np.float32)], rtol=1e-6)
    check_grad('add_n', {'num_args': 3}, xs)
    check_forward('_full', {'shape': '(2, 2)', 'value': '3'}, [], [np.full((2, 2), 3, np.float32)])
    check_forward('_arange', {'start': '1', 'stop': '4', 'repeat': '2'}, [],
                  [np.array([1, 1, 2, 2, 3, 3], np.float32)])
