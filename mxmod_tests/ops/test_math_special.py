"""Special functions (erf, erfinv, gamma, gammaln and the digamma behind their gradients) against
scipy.special, hard_sigmoid and logical_not against numpy; gradients by float64 central
differences."""
import numpy as np
import pytest

from mxmod.ops import specfun
from mxmod_tests.ops.opcheck import check_forward, check_grad

special = pytest.importorskip('scipy.special')
RNG = np.random.RandomState(3)


def _close(got, want, rtol):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=1e-300)


def test_erf_and_erfc_match_scipy_everywhere():
    x = np.concatenate([np.linspace(-7, 7, 4001), [0, -0.0, 1e-300, 2.5, 26.9, 40, np.inf,
                                                  -np.inf, np.nan]])
    _close(specfun.erf(np, x), special.erf(x), 1e-14)
    _close(specfun.erfc(np, x), special.erfc(x), 1e-11)


def test_erfinv_inverts_erf_up_to_the_poles():
    y = np.concatenate([np.linspace(-1, 1, 4001), [1 - 1e-12, -1 + 1e-15, 1e-12, 1.5, -2, np.nan]])
    _close(specfun.erfinv(np, y), special.erfinv(y), 1e-12)


def test_gamma_family_matches_scipy():
    x = np.concatenate([np.linspace(-9.7, 35, 3001), [1, 2, 0.5, 1e-8, -1e-8, 170.5, 171.7, 200]])
    with np.errstate(all='ignore'):
        _close(specfun.gammaln(np, x), special.gammaln(x), 1e-10)
        _close(specfun.gamma(np, x), special.gamma(x), 1e-12)
        _close(specfun.digamma(np, x), special.digamma(x), 1e-8)
    poles = np.array([0.0, -1.0, -4.0])
    assert np.all(np.isinf(specfun.gammaln(np, poles)))
    assert np.all(np.isnan(specfun.gamma(np, poles[1:])))
    assert specfun.gammaln(np, np.array([1.0, 2.0])).tolist() == [0.0, 0.0]


@pytest.mark.parametrize('name,ref,sample', [
    ('erf', special.erf, lambda s: RNG.uniform(-3, 3, s)),
    ('erfinv', special.erfinv, lambda s: RNG.uniform(-0.99, 0.99, s)),
    ('gamma', special.gamma, lambda s: RNG.uniform(0.2, 5, s)),
    ('gamma', special.gamma, lambda s: RNG.uniform(-2.9, -2.1, s)),
    ('gammaln', special.gammaln, lambda s: RNG.uniform(0.2, 9, s)),
    ('gammaln', special.gammaln, lambda s: RNG.uniform(-3.9, -3.1, s)),
])
def test_special_operator_forward_and_gradient(name, ref, sample):
    x = sample((3, 5))
    check_forward(name, {}, [x], [ref(x)], rtol=1e-10, atol=0)
    check_forward(name, {}, [x.astype(np.float32)], [ref(x).astype(np.float32)], rtol=1e-6)
    check_grad(name, {}, [x], rtol=1e-6)


@pytest.mark.parametrize('attrs', [{}, {'alpha': 0.3, 'beta': 0.4}])
def test_hard_sigmoid(attrs):
    alpha, beta = attrs.get('alpha', 0.2), attrs.get('beta', 0.5)
    x = RNG.uniform(-4, 4, (4, 6))
    x[np.abs(alpha * x + beta) < 1e-3] += 0.01
    x[np.abs(alpha * x + beta - 1) < 1e-3] += 0.01
    check_forward('hard_sigmoid', attrs, [x], [np.clip(alpha * x + beta, 0, 1)])
    check_grad('hard_sigmoid', attrs, [x])


def test_logical_not_keeps_dtype_and_has_zero_gradient():
    for dtype in (np.float32, np.int32):
        x = np.array([[-2, 0, 1], [0, 3, 0]], dtype=dtype)
        outs = check_forward('logical_not', {}, [x], [(x == 0).astype(dtype)])
        assert outs[0].dtype == dtype
    grads = check_grad('logical_not', {}, [RNG.uniform(0.5, 1, (2, 3))])
    assert not grads[0].any()
