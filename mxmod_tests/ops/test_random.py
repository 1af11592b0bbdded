"""Random operators and mx.nd.random / mx.random: reproducibility under mx.random.seed, sample
moments against the distributions' closed forms, shapes, dtypes and inference."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_grad, make

N = 40000


def _moments(arr):
    arr = arr.asnumpy().astype('float64')
    return arr.mean(), arr.var()


# (call, mean, variance)
SCALAR_CASES = [
    (lambda **k: mx.nd.random.uniform(-1, 3, **k), 1.0, 16 / 12.),
    (lambda **k: mx.nd.random.normal(2, 0.5, **k), 2.0, 0.25),
    (lambda **k: mx.nd.random.gamma(2.0, 1.5, **k), 3.0, 4.5),
    (lambda **k: mx.nd.random.exponential(2.0, **k), 2.0, 4.0),
    (lambda **k: mx.nd.random.poisson(3.0, **k), 3.0, 3.0),
    (lambda **k: mx.nd.random.negative_binomial(4, 0.4, **k), 6.0, 15.0),
    (lambda **k: mx.nd.random.generalized_negative_binomial(2.0, 0.5, **k), 2.0, 4.0),
    (lambda **k: mx.nd.random.randint(-2, 5, **k), 1.0, 4.0),
]


@pytest.mark.parametrize('index', range(len(SCALAR_CASES)))
def test_scalar_samplers_moments_and_reproducibility(index):
    draw, mean, var = SCALAR_CASES[index]
    mx.random.seed(11)
    first = draw(shape=(N,))
    got_mean, got_var = _moments(first)
    assert abs(got_mean - mean) < 5 * np.sqrt(var / N) + 1e-3
    assert abs(got_var - var) < 0.06 * var
    mx.random.seed(11)
    np.testing.assert_array_equal(draw(shape=(N,)).asnumpy(), first.asnumpy())
    mx.random.seed(12)
    assert (draw(shape=(N,)).asnumpy() != first.asnumpy()).any()


def test_uniform_range_and_randint_bounds():
    u = mx.nd.random.uniform(2, 3, shape=(1000,)).asnumpy()
    assert u.min() >= 2 and u.max() < 3
    r = mx.nd.random.randint(3, 6, shape=(1000,)).asnumpy()
    assert set(np.unique(r)) == {3, 4, 5}


def test_per_element_samplers():
    loc = mx.nd.array([0.0, 10.0, -5.0])
    scale = mx.nd.array([1.0, 0.1, 2.0])
    out = mx.nd.random.normal(loc, scale, shape=(N,))
    assert out.shape == (3, N) and out.dtype == np.float32
    arr = out.asnumpy().astype('float64')
    np.testing.assert_allclose(arr.mean(axis=1), [0, 10, -5], atol=0.05)
    np.testing.assert_allclose(arr.std(axis=1), [1, 0.1, 2], rtol=0.03)
    lam = mx.nd.array([[1.0, 4.0]], dtype='float64')
    pois = mx.nd.random.poisson(lam, shape=N).asnumpy()
    assert pois.shape == (1, 2, N)
    np.testing.assert_allclose(pois.mean(axis=2), [[1, 4]], rtol=0.03)
    exp = mx.nd.random.exponential(mx.nd.array([2.0]), shape=N).asnumpy()
    np.testing.assert_allclose(exp.mean(), 2.0, rtol=0.03)   # scale, as for scalars
    for fn, args in [(mx.nd.random.uniform, (0, 1)), (mx.nd.random.gamma, (2, 2)),
                     (mx.nd.random.negative_binomial, (3, 0.5)),
                     (mx.nd.random.generalized_negative_binomial, (2, 0.3))]:
        nd_args = [mx.nd.array([a, a]) for a in args]
        assert fn(*nd_args, shape=(4, 5)).shape == (2, 4, 5)
        assert fn(*nd_args).shape == (2,)


def test_like_samplers_and_randn_with_arrays():
    data = mx.nd.ones((300, 200), dtype='float64')
    out = mx.nd.random.normal_like(data, loc=3.0, scale=0.5)
    assert out.shape == data.shape and out.dtype == np.float64
    mean, var = _moments(out)
    assert abs(mean - 3.0) < 0.01 and abs(var - 0.25) < 0.01
    mean, var = _moments(mx.nd.random.poisson_like(data, lam=2.0))
    assert abs(mean - 2.0) < 0.03 and abs(var - 2.0) < 0.1
    assert mx.nd.random.uniform_like(data, low=1, high=2).asnumpy().min() >= 1
    assert make('_random_gamma_like').list_arguments() == ['data']
    out = mx.nd.random.randn(2, 1000, loc=mx.nd.array([0.0, 5.0]), scale=mx.nd.array([1.0, 1.0]))
    assert out.shape == (2, 2, 1000)
    np.testing.assert_allclose(out.asnumpy().mean(axis=(1, 2)), [0, 5], atol=0.1)


def test_multinomial():
    probs = mx.nd.array([[0.2, 0.3, 0.5], [0.9, 0.1, 0.0]])
    idx, logp = mx.nd.random.multinomial(probs, shape=N, get_prob=True)
    assert idx.shape == (2, N) and idx.dtype == np.int32 and logp.dtype == np.float32
    freq = np.stack([np.bincount(row, minlength=3) / N for row in idx.asnumpy()])
    np.testing.assert_allclose(freq, probs.asnumpy(), atol=0.015)
    np.testing.assert_allclose(logp.asnumpy(), np.log(np.take_along_axis(
        probs.asnumpy(), idx.asnumpy().astype(int), axis=1)), rtol=1e-6)
    assert mx.nd.random.multinomial(mx.nd.array([0.5, 0.5])).shape == (1,)
    assert mx.nd.random.multinomial(mx.nd.array([0.5, 0.5]), shape=(2, 3)).shape == (2, 3)
    assert mx.nd.random.multinomial(probs, dtype='float32').dtype == np.float32


def test_multinomial_log_prob_gradient():
    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    grads = check_grad('_sample_multinomial', {'shape': (4,), 'get_prob': True}, [probs], eps=1e-7)
    assert np.abs(grads[0]).sum() > 0


def test_shuffle():
    data = mx.nd.array(np.arange(20).reshape(10, 2))
    mx.random.seed(5)
    out = mx.nd.random.shuffle(data).asnumpy()
    assert sorted(out[:, 0].tolist()) == list(range(0, 20, 2))
    np.testing.assert_array_equal(out[:, 1] - out[:, 0], 1)
    assert (out != data.asnumpy()).any()
    mx.random.seed(5)
    np.testing.assert_array_equal(mx.nd.shuffle(data).asnumpy(), out)


def test_shapes_dtypes_and_out():
    assert mx.nd.random.uniform().shape == (1,)
    assert mx.nd.random.normal(shape=3).shape == (3,)
    assert mx.nd.random.uniform(dtype='float64', shape=(2,)).dtype == np.float64
    assert mx.nd.random.randint(0, 4, shape=2, dtype='int64').dtype == np.int64
    assert mx.nd.random.randn().shape == (1,)
    assert mx.nd.random.randn(2, 3, loc=1, scale=2, dtype='float16').dtype == np.float16
    out = mx.nd.zeros((3, 4), dtype='float64')
    res = mx.nd.random.normal(5, 1e-3, out=out)
    assert res is out and out.dtype == np.float64
    np.testing.assert_allclose(out.asnumpy(), 5, atol=0.02)
    assert np.unique(out.asnumpy()).size == 12
    assert mx.nd.uniform(low=0, high=1, shape=(2, 2)).shape == (2, 2)
    assert mx.nd.random_normal(shape=(5,)).dtype == np.float32
    assert mx.random.uniform is mx.nd.random.uniform


def test_seed_per_device():
    mx.random.seed(42)
    a0 = mx.nd.random.uniform(shape=(8,), ctx=mx.cpu(0)).asnumpy()
    a1 = mx.nd.random.uniform(shape=(8,), ctx=mx.cpu(1)).asnumpy()
    assert (a0 != a1).any()              # 'all' seeds each device differently
    mx.random.seed(42, ctx=mx.cpu(0))
    mx.random.seed(42, ctx=mx.cpu(1))
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=(8,), ctx=mx.cpu(0)).asnumpy(),
                                  mx.nd.random.uniform(shape=(8,), ctx=mx.cpu(1)).asnumpy())
    with pytest.raises(ValueError, match='int'):
        mx.random.seed(1.5)


def test_errors():
    with pytest.raises(TypeError):
        mx.nd.random.uniform(mx.nd.array([0.0]), 1.0)
    with pytest.raises(TypeError):
        mx.nd.random.randint(mx.nd.array([0]), mx.nd.array([3]))
    with pytest.raises(ValueError):
        mx.nd.random.normal('a', 1)
    with pytest.raises(MXNetError, match='dtype'):
        make('_random_uniform', dtype='int32')
    # an empty range is met when the sampler runs: reported when the result is read
    empty = mx.nd.random.randint(3, 3, shape=(2,))
    with pytest.raises(MXNetError, match='empty'):
        empty.asnumpy()
    with pytest.raises(MXNetError, match='shape'):
        mx.nd._random_uniform()     # no shape and nothing to infer it from


def test_inference():
    op = make('_random_normal', shape='(2, 3)', ctx='cpu(0)')
    assert op.list_arguments() == [] and op.infer_shape([], [None]) == ([], [(2, 3)])
    assert op.infer_type([], [None]) == ([], ['float32'])
    free = make('_random_uniform')
    assert free.infer_shape([], [None]) == ([], [None])
    assert free.infer_shape([], [(4, 5)]) == ([], [(4, 5)])
    assert free.infer_type([], ['float64']) == ([], ['float64'])
    with pytest.raises(MXNetError, match='does not match'):
        make('_random_uniform', dtype='float16').infer_type([], ['float32'])
    assert make('_random_randint', low=0, high=2).infer_type([], [None]) == ([], ['int32'])
    sample = make('_sample_uniform', shape=(3,))
    assert sample.list_arguments() == ['low', 'high']
    assert sample.infer_shape([(2,), None], [None]) == ([(2,), (2,)], [(2, 3)])
    assert sample.infer_shape([None, None], [(5, 3)]) == ([(5,), (5,)], [(5, 3)])
    assert sample.infer_type(['float64', None], [None]) == (['float64', 'float64'], ['float32'])
    multi = make('_sample_multinomial', get_prob=True)
    assert multi.list_outputs() == ['output0', 'output1']
    assert multi.infer_shape([(2, 5)], [None, None]) == ([(2, 5)], [(2,), (2,)])
    assert multi.infer_type(['float64'], [None, None]) == (['float64'], ['int32', 'float64'])


def test_like_samplers_take_parameters_positionally():
    # MXNet's generated signatures: (data, <parameters in order>, out, name)
    x = mx.nd.ones((200,))
    low_high = mx.nd.random.uniform_like(x, 5, 6).asnumpy()
    assert low_high.min() >= 5 and low_high.max() < 6
    out = mx.nd.zeros((200,))
    mx.nd.random.normal_like(x, 10, 1e-3, out)
    assert abs(out.asnumpy().mean() - 10) < 0.01
    assert mx.nd.random.poisson_like(x, 0).asnumpy().sum() == 0
    sym = mx.sym.random.uniform_like(mx.sym.var('d'), 2, 3, 'draw')
    assert sym.name == 'draw' and sym.attr_dict()['draw'] == {'low': '2', 'high': '3'}
    with pytest.raises(TypeError):
        mx.nd.random.exponential_like(x, 1.0, None, None, 'extra')
    with pytest.raises(TypeError):
        mx.nd.random.uniform_like(x, 1.0, low=2.0)
