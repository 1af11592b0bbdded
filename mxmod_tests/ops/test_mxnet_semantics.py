"""Elementwise corner cases where MXNet 1.9.1 differs from numpy, against values MXNet printed:
float math on integer arrays (computed in floating point, cast back by truncation, NaN and
overflow to INT_MIN), % by zero (0), integer ** negative integer (no error), sign(NaN) = 0,
gamma at -inf and at the positive integers (exact factorials), relu's gradient at NaN (NaN,
while Activation's is 0)."""
import numpy as np
import pytest

import mxmod as mx

INT_MIN = -2147483648
INTS = [-7, -3, -1, 0, 1, 2, 5, 100]
UNARY_ON_INTS = {
    'sqrt': [INT_MIN, INT_MIN, INT_MIN, 0, 1, 1, 2, 10],
    'exp': [0, 0, 0, 1, 2, 7, 148, INT_MIN],
    'log': [INT_MIN, INT_MIN, INT_MIN, INT_MIN, 0, 0, 1, 4],
    'sin': [0, 0, 0, 0, 0, 0, 0, 0],
    'cos': [0, 0, 0, 1, 0, 0, 0, 0],
    'tan': [0, 0, -1, 0, 1, -2, -3, 0],
    'arctan': [-1, -1, 0, 0, 0, 1, 1, 1],
    'sinh': [-548, -10, -1, 0, 1, 3, 74, INT_MIN],
    'degrees': [-401, -171, -57, 0, 57, 114, 286, 5729],
    'reciprocal': [0, 0, -1, INT_MIN, 1, 0, 0, 0],
    'rsqrt': [INT_MIN, INT_MIN, INT_MIN, INT_MIN, 1, 0, 0, 0],
    'log1p': [INT_MIN, INT_MIN, INT_MIN, 0, 0, 1, 1, 4],
    'cbrt': [-1, -1, -1, 0, 1, 1, 1, 4],
    'softsign': [0, 0, 0, 0, 0, 0, 0, 0],
    'sigmoid': [0, 0, 0, 0, 0, 0, 0, 1],
}


@pytest.mark.parametrize('name', sorted(UNARY_ON_INTS))
def test_float_math_on_integer_arrays(name):
    out = getattr(mx.nd, name)(mx.nd.array(INTS, dtype='int32'))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), UNARY_ON_INTS[name])
    # int64 keeps its dtype too; the same truncation
    wide = getattr(mx.nd, name)(mx.nd.array(INTS, dtype='int64')).asnumpy()
    assert wide.dtype == np.int64
    finite = np.array(UNARY_ON_INTS[name]) != INT_MIN
    np.testing.assert_array_equal(wide[finite], np.array(UNARY_ON_INTS[name])[finite])


def test_mod_by_zero_is_zero():
    a = mx.nd.array([-3.5, -2.5, 3, 7, 0, 5])
    b = mx.nd.array([2, 0, -2, 0, 0, -3])
    want = [0.5, 0.0, -1.0, 0.0, 0.0, -1.0]
    np.testing.assert_array_equal((a % b).asnumpy(), want)
    np.testing.assert_array_equal(mx.nd.broadcast_mod(a, b).asnumpy(), want)
    np.testing.assert_array_equal(mx.nd.elemwise_mod(a, b).asnumpy()
                                  if hasattr(mx.nd, 'elemwise_mod') else want, want)
    np.testing.assert_array_equal((a % 0).asnumpy(), np.zeros(6))
    np.testing.assert_array_equal((3 % b).asnumpy(), [1.0, 0.0, -1.0, 0.0, 0.0, 0.0])
    ai = mx.nd.array([-7, -3, 7, 6, 5, 9, 3], dtype='int32')
    bi = mx.nd.array([2, 2, -2, 3, 1, 4, -3], dtype='int32')
    np.testing.assert_array_equal((ai % bi).asnumpy(), [1, 1, -1, 0, 0, 1, 0])
    np.testing.assert_array_equal((ai % 3).asnumpy(), [2, 0, 1, 0, 2, 0, 0])
    x = mx.nd.array([1.0, 2.0, 3.0])
    x %= mx.nd.array([0.0, 2.0, 2.0])
    np.testing.assert_array_equal(x.asnumpy(), [0, 0, 1])
    sym = mx.sym.var('a') % mx.sym.var('b')
    got = sym.bind(mx.cpu(), {'a': a, 'b': b}).forward()[0]
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_integer_powers_with_negative_exponents():
    ai = mx.nd.array([-7, -3, 7, 6, 5, 9, 3], dtype='int32')
    bi = mx.nd.array([2, 2, -2, 3, 1, 4, -3], dtype='int32')
    want = [49, 9, 0, 216, 5, 6561, 0]
    np.testing.assert_array_equal((ai ** bi).asnumpy(), want)
    np.testing.assert_array_equal(mx.nd.power(ai, bi).asnumpy(), want)
    np.testing.assert_array_equal((2.5 ** ai).asnumpy(), [0, 0, 128, 64, 32, 512, 8])
    np.testing.assert_array_equal((ai ** -1).asnumpy(), np.zeros(7))
    assert (ai ** bi).dtype == np.int32
    # float powers are numpy's
    f = mx.nd.array([0.5, 2.0, 4.0])
    np.testing.assert_allclose((f ** -2).asnumpy(), [4.0, 0.25, 0.0625])


def test_sign_of_nan_and_gamma_special_values():
    np.testing.assert_array_equal(mx.nd.sign(mx.nd.array([np.nan, -2, 0, 3])).asnumpy(),
                                  [0, -1, 0, 1])
    np.testing.assert_array_equal(mx.nd.contrib.sign_ste(mx.nd.array([np.nan])).asnumpy(), [0])
    got = mx.nd.gamma(mx.nd.array([-np.inf, np.inf, np.nan, 5, -2])).asnumpy()
    np.testing.assert_array_equal(got, [np.nan, np.inf, np.nan, 24.0, np.nan])
    np.testing.assert_array_equal(mx.nd.gamma(mx.nd.array([5, 4, 1, 3], dtype='int32')).asnumpy(),
                                  [24, 6, 1, 2])
    exact = mx.nd.gamma(mx.nd.array(np.arange(1, 25), dtype='float64')).asnumpy()
    np.testing.assert_array_equal(exact, [float(np.prod(np.arange(1, n), dtype=np.float64))
                                          for n in range(1, 25)])


def test_integer_products_keep_their_dtype():
    xi = mx.nd.array([[3, 1, 7, 2], [5, 5, 1, -1]], dtype='int32')
    for fn in (mx.nd.prod, mx.nd.nanprod):
        out = fn(xi, axis=1)
        assert out.dtype == np.int32
        np.testing.assert_array_equal(out.asnumpy(), [42, -25])
    small = mx.nd.prod(xi.astype('uint8'))
    assert small.dtype == np.uint8 and small.asscalar() == 230     # wraps as MXNet's does


def test_relu_gradient_keeps_nan_activation_does_not():
    # MXNet 1.9.1 printed: relu's output [[nan, 1], [2, 0]], gradient [[nan, 1], [1, 0]];
    # Activation(relu)'s (float32, MKL-DNN) output [[0, 1], [2, 0]], gradient [[0, 1], [1, 0]]
    x = np.array([[np.nan, 1.], [2., -1.]], dtype=np.float32)
    for op, forward, expected in (
            (mx.nd.relu, [[np.nan, 1], [2, 0]], [[np.nan, 1], [1, 0]]),
            (lambda d: mx.nd.Activation(d, act_type='relu'), [[0, 1], [2, 0]], [[0, 1], [1, 0]])):
        data = mx.nd.array(x)
        data.attach_grad()
        with mx.autograd.record():
            out = op(data)
        out.backward()
        np.testing.assert_array_equal(out.asnumpy(), forward)
        np.testing.assert_array_equal(data.grad.asnumpy(), np.array(expected, dtype=np.float32))
