"""The density operators _random_pdf_<distr> / random_pdf_<distr>: values against scipy.stats,
float64 gradients against central differences, layout and shape inference as MXNet 1.9.1."""
import numpy as np
import pytest
from scipy import stats

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad, run_forward, make


@pytest.fixture(autouse=True)
def _fresh_names():
    """Symbols made here get their own name counters (later tests expect fresh ones)."""
    with mx.name.NameManager():
        yield

RNG = np.random.RandomState(11)
P = (2, 3)           # shape of the parameter arrays
N = 4                # samples per distribution


def _params(low, high):
    return RNG.uniform(low, high, size=P)


def _scipy(distr):
    """(sample generator, parameters, scipy log-density(x, *params)) for one distribution."""
    if distr == 'uniform':
        low, high = _params(-1, 0), _params(1, 2)
        sample = RNG.uniform(0, 1, P + (N,))
        return sample, [low, high], lambda x, a, b: stats.uniform.logpdf(x, a, b - a)
    if distr == 'normal':
        return (RNG.normal(size=P + (N,)), [_params(-1, 1), _params(0.5, 2)],
                lambda x, m, s: stats.norm.logpdf(x, m, s))
    if distr == 'gamma':
        return (RNG.uniform(0.2, 3, P + (N,)), [_params(0.5, 3), _params(0.5, 2)],
                lambda x, a, b: stats.gamma.logpdf(x, a, scale=1.0 / b))
    if distr == 'exponential':
        return (RNG.uniform(0.1, 3, P + (N,)), [_params(0.5, 2)],
                lambda x, lam: stats.expon.logpdf(x, scale=1.0 / lam))
    if distr == 'poisson':
        return (RNG.randint(0, 6, P + (N,)).astype(np.float64), [_params(0.5, 4)],
                lambda x, lam: stats.poisson.logpmf(x, lam))
    if distr == 'negative_binomial':
        return (RNG.randint(0, 6, P + (N,)).astype(np.float64), [_params(1, 5), _params(0.2, 0.8)],
                lambda x, k, p: stats.nbinom.logpmf(x, k, p))
    if distr == 'generalized_negative_binomial':
        return (RNG.randint(0, 6, P + (N,)).astype(np.float64),
                [_params(1, 4), _params(0.2, 1.5)],
                lambda x, mu, alpha: stats.nbinom.logpmf(x, 1.0 / alpha, 1.0 / (1 + mu * alpha)))
    raise KeyError(distr)


DISTRS = ['uniform', 'normal', 'gamma', 'exponential', 'poisson', 'negative_binomial',
          'generalized_negative_binomial']
DISCRETE = {'poisson', 'negative_binomial', 'generalized_negative_binomial'}


@pytest.mark.parametrize('distr', DISTRS)
@pytest.mark.parametrize('is_log', [False, True])
def test_pdf_values_match_scipy(distr, is_log):
    sample, params, logpdf = _scipy(distr)
    want = logpdf(sample, *[p[..., None] for p in params])
    if not is_log:
        want = np.exp(want)
    check_forward('_random_pdf_' + distr, {'is_log': is_log}, [sample] + params, [want],
                  rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize('distr', DISTRS)
def test_pdf_float32_and_alias(distr):
    sample, params, logpdf = _scipy(distr)
    args = [mx.nd.array(a, dtype='float32') for a in [sample] + params]
    out = getattr(mx.nd, 'random_pdf_' + distr)(*args, is_log=True)
    assert out.dtype == np.float32 and out.shape == sample.shape
    want = logpdf(*[a.asnumpy().astype(np.float64) for a in args[:1]],
                  *[a.asnumpy().astype(np.float64)[..., None] for a in args[1:]])
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('distr', DISTRS)
@pytest.mark.parametrize('is_log', [False, True])
def test_pdf_gradients(distr, is_log):
    sample, params, _ = _scipy(distr)
    # discrete samples are not differentiable: MXNet gives them a zero gradient
    wrt = list(range(1, 1 + len(params))) if distr in DISCRETE else None
    grads = check_grad('_random_pdf_' + distr, {'is_log': is_log}, [sample] + params, wrt=wrt,
                       eps=1e-6, rtol=1e-5, atol=1e-8)
    if distr in DISCRETE:
        assert not np.any(grads[0])


def test_uniform_sample_gradient_is_zero():
    # the density of the uniform does not depend on the sample (no support check, as MXNet)
    out = run_forward(make('_random_pdf_uniform'), [np.array([[-5.0, 0.5, 9.0]]),
                                                    np.array([0.0]), np.array([2.0])])[0]
    np.testing.assert_allclose(out, [[0.5, 0.5, 0.5]])
    grads = check_grad('_random_pdf_uniform', {}, [np.array([[-5.0, 0.5, 9.0]]), np.array([0.0]),
                                                   np.array([2.0])])
    assert not np.any(grads[0])


def test_one_sample_per_distribution_and_docstring_examples():
    # sample of the parameters' own shape: one density per distribution
    out = mx.nd.random_pdf_normal(mx.nd.array([0.0, 1.0]), mx.nd.array([0.0, 0.0]),
                                  mx.nd.array([1.0, 2.0]))
    np.testing.assert_allclose(out.asnumpy(), stats.norm.pdf([0.0, 1.0], 0, [1.0, 2.0]),
                               rtol=1e-6)
    out = mx.nd.random_pdf_gamma(mx.nd.array([[1, 2, 3, 4, 5]]), mx.nd.array([5]),
                                 mx.nd.array([1]))
    np.testing.assert_allclose(out.asnumpy(),
                               [[0.01532831, 0.09022352, 0.16803136, 0.19536681, 0.17546739]],
                               rtol=1e-6)


# ---- Dirichlet ---------------------------------------------------------------------------------
def _dirichlet_case(k=3, m=5):
    alpha = RNG.uniform(0.5, 3, P + (k,))
    sample = np.stack([stats.dirichlet.rvs(a, size=m, random_state=RNG) for a in
                       alpha.reshape(-1, k)]).reshape(P + (m, k))
    want = np.array([stats.dirichlet.logpdf(s.T, a) for s, a in
                     zip(sample.reshape(-1, m, k), alpha.reshape(-1, k))]).reshape(P + (m,))
    return sample, alpha, want


@pytest.mark.parametrize('is_log', [False, True])
def test_dirichlet_values(is_log):
    sample, alpha, want = _dirichlet_case()
    check_forward('_random_pdf_dirichlet', {'is_log': is_log}, [sample, alpha],
                  [want if is_log else np.exp(want)], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize('is_log', [False, True])
def test_dirichlet_gradients(is_log):
    sample, alpha, _ = _dirichlet_case(k=3, m=2)
    check_grad('_random_pdf_dirichlet', {'is_log': is_log}, [sample, alpha], eps=1e-7,
               rtol=1e-5, atol=1e-8)


def test_dirichlet_single_vector_gives_shape_1():
    out = mx.nd.random_pdf_dirichlet(mx.nd.array([0.2, 0.3, 0.5]), mx.nd.array([1, 2, 3]))
    assert out.shape == (1,)
    np.testing.assert_allclose(out.asnumpy(),
                               [stats.dirichlet.pdf([0.2, 0.3, 0.5], [1, 2, 3])], rtol=1e-5)


# ---- symbols -----------------------------------------------------------------------------------
def test_pdf_symbol_arguments_and_shape_inference():
    sym = mx.sym.random_pdf_normal(mx.sym.var('x'), mx.sym.var('m'), mx.sym.var('s'))
    assert sym.list_arguments() == ['x', 'm', 's']
    assert sym.infer_shape(x=(2, 3, 5, 4), m=(2, 3), s=(2, 3)) == \
        ([(2, 3, 5, 4), (2, 3), (2, 3)], [(2, 3, 5, 4)], [])
    # as MXNet: nothing is inferred until every input shape is known
    assert sym.infer_shape_partial(x=(2, 3, 5, 4), m=(2, 3)) == \
        ([(2, 3, 5, 4), (2, 3), ()], [()], [])
    with mx.name.NameManager():
        auto = mx.sym.random_pdf_gamma(mx.sym.var('x'))
    assert auto.list_arguments() == ['x', 'random_pdf_gamma0_alpha', 'random_pdf_gamma0_beta']
    sym = mx.sym.random_pdf_dirichlet(mx.sym.var('x'), mx.sym.var('a'))
    assert sym.infer_shape(x=(2, 3, 5, 4), a=(2, 3, 4))[1] == [(2, 3, 5)]
    assert sym.infer_shape(x=(4,), a=(4,))[1] == [(1,)]


def test_pdf_parameter_shape_is_checked():
    with pytest.raises(MXNetError, match='must have shape|shape inconsistent for'):
        mx.nd.random_pdf_normal(mx.nd.ones((2, 3)), mx.nd.ones((3,)), mx.nd.ones((3,)))
    with pytest.raises(MXNetError, match='at least dimension'):
        mx.nd.random_pdf_exponential(mx.nd.ones((2,)), mx.nd.ones((2, 1)))


def test_pdf_gradient_through_executor():
    x = mx.sym.var('x')
    m = mx.sym.var('m')
    s = mx.sym.var('s')
    sym = mx.sym.random_pdf_normal(x, m, s, is_log=True)
    sample = RNG.normal(size=(2, 3))
    mu, sigma = RNG.normal(size=2), RNG.uniform(0.5, 2, 2)
    mx.test_utils.check_numeric_gradient(sym, [sample, mu, sigma], rtol=1e-4, atol=1e-6,
                                         dtype=np.float64)


def test_symbol_keywords_are_ignored_by_operators_without_inputs():
    # MXNet composes an operator without inputs without reading keyword Symbols
    # (test_random passes data= to mx.sym.random.randn)
    sym = mx.sym.random.normal(loc=0, scale=1, shape=(2, 3), data=mx.sym.ones((2, 3)))
    assert sym.list_arguments() == []
    assert sym.infer_shape()[1] == [(2, 3)]
    # (MXNet requires scale > 0: a tiny one gives the mean)
    like = mx.sym.random.normal_like(data=mx.sym.var('d'), loc=1.0, scale=1e-12)
    exe = like.bind(mx.cpu(), {'d': mx.nd.zeros((2, 2))})
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), np.ones((2, 2)))
