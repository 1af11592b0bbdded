"""mx.test_utils: comparisons, tolerances, gradient checks and generator checks behave as
MXNet 1.9.1's (and fail when they should), and the thread-local scopes MXNet's tests assign."""
import threading

import numpy as np
import pytest

import mxmod as mx
from mxmod import test_utils as tu


def test_assert_almost_equal_broadcasts_and_locates_the_worst_mismatch():
    tu.assert_almost_equal(np.ones((2, 3)), mx.nd.ones((3,)))
    a = np.zeros((2, 3), dtype=np.float32)
    b = a.copy()
    b[1, 2] = 0.5
    b[0, 0] = 0.01
    with pytest.raises(AssertionError) as err:
        tu.assert_almost_equal(a, b, names=('got', 'want'))
    text = str(err.value)
    assert 'Location of maximum error: (1, 2), got=0.00000000, want=0.50000000' in text
    assert 'rtol=1.000000e-04, atol=1.000000e-03' in text        # float32 defaults
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.ones((2, 3)), np.ones((3,)), use_broadcast=False)


def test_tolerances_follow_the_dtypes():
    assert tu.get_tols(np.float16(1), np.ones(1, dtype=np.float64), None, None) == (1e-2, 1e-1)
    assert tu.get_tols(mx.nd.ones(1), np.ones(1, dtype=np.float64), None, None) == (1e-4, 1e-3)
    tu.assert_almost_equal(np.float64(1.0), np.float64(1.0 + 1e-6))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.float64(1.0), np.float64(1.0 + 1e-4))
    tu.assert_almost_equal(np.array([1.0, np.nan]), np.array([1.0, np.nan]), equal_nan=True)


def _dot_symbol():
    return mx.sym.dot(mx.sym.var('a'), mx.sym.var('b'))


def test_check_numeric_gradient_with_transposed_inputs_in_float64():
    a = np.random.uniform(-1, 1, (4, 3)).T          # not C-contiguous
    b = np.random.uniform(-1, 1, (4, 2))
    tu.check_numeric_gradient(_dot_symbol(), [a, b], rtol=1e-6, atol=1e-8, dtype=np.float64)


def test_check_numeric_gradient_catches_a_wrong_gradient():
    data = mx.sym.var('x')
    wrong = mx.sym.BlockGrad(data) * data            # true gradient 2x, backward gives x
    with pytest.raises(AssertionError):
        tu.check_numeric_gradient(wrong, [np.random.uniform(1, 2, (3,))], dtype=np.float64)


def test_check_symbolic_backward_checks_add_and_null():
    a, b = np.random.rand(2, 3), np.random.rand(3, 2)
    head = np.ones((2, 2))
    grads = tu.check_symbolic_backward(_dot_symbol(), [a, b], [head], [head @ b.T, a.T @ head],
                                       grad_req={'a': 'add', 'b': 'null'}, dtype=np.float64)
    assert set(grads) == {'a', 'b'}
    with pytest.raises(AssertionError):
        tu.check_symbolic_backward(_dot_symbol(), [a, b], [head], [head @ b.T, 2 * a.T @ head],
                                   dtype=np.float64)
    out = tu.check_symbolic_forward(_dot_symbol(), {'a': a.astype(np.int32), 'b': b.astype(np.int32)},
                                    [np.zeros((2, 2))], dtype='asnumpy')
    assert out[0].dtype == np.int32


def test_verify_generator_passes_the_true_distribution_and_fails_another():
    import scipy.stats as ss
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda x: ss.norm.ppf(x, 0, 1), 5)
    assert len(tu.verify_generator(lambda n: np.random.normal(size=n), buckets, probs,
                                   nsamples=20000)) == 5
    with pytest.raises(AssertionError, match='Generator test fails'):
        tu.verify_generator(lambda n: np.random.normal(0.2, 1, size=n), buckets, probs,
                            nsamples=20000)
    values = tu.verify_generator(lambda n: np.random.randint(0, 3, size=n), [0, 1, 2],
                                 [1 / 3.0] * 3, nsamples=20000)
    assert all(p > 0 for p in values)


def test_retry_random_sample_and_environment():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) == 3
    flaky()
    assert len(calls) == 3
    picked = tu.random_sample(list(range(10)), 4)
    assert len(set(picked)) == 4 and set(picked) <= set(range(10))
    with tu.environment('MXMOD_TEST_VARIABLE', 'on'):
        assert mx.util.getenv('MXMOD_TEST_VARIABLE') == 'on'
    assert mx.util.getenv('MXMOD_TEST_VARIABLE') is None
    names = {}
    exec('from mxmod.test_utils import *', names)  # pylint: disable=exec-used
    assert names['mx'] is mx and names['rnd'] is np.random and 'assert_almost_equal' in names


def test_scopes_are_thread_local_class_attributes():
    seen = {}

    def worker():
        tu.set_default_context(mx.cpu(7))
        mx.AttrScope.current = mx.AttrScope(x='worker')
        seen['ctx'] = mx.Context.default_ctx
        seen['attr'] = mx.AttrScope.current._attr
        seen['name'] = mx.name.NameManager.current.get(None, 'w')
    mx.name.NameManager.current = mx.name.NameManager()
    mx.name.NameManager.current.get(None, 'w')
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == {'ctx': mx.cpu(7), 'attr': {'x': 'worker'}, 'name': 'w0'}
    assert mx.Context.default_ctx == mx.cpu(0) and mx.AttrScope.current._attr == {}
    with mx.cpu(3):
        assert mx.Context.default_ctx == mx.cpu(3)
    assert mx.current_context() == mx.cpu(0)
