"""contrib.hawkesll: the log-likelihood of marked Hawkes processes against a per-event Python
reference, its gradients (lda, alpha, beta) against float64 central differences, MXNet's own
example values, shapes and dtypes through symbols, and bad input."""
import math

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward

RNG = np.random.RandomState(3)


def hawkes_ref(mu, alpha, beta, state, lags, marks, valid, max_time):
    n, k = mu.shape
    lls, states = np.zeros(n), np.zeros((n, k))
    for i in range(n):
        phi, last, t, ll = list(state[i]), [0.0] * k, 0.0, 0.0
        for j in range(int(math.ceil(valid[i]))):
            c = int(marks[i, j])
            t += lags[i, j]
            d = t - last[c]
            ed = math.exp(-beta[c] * d)
            ll += math.log(mu[i, c] + alpha[c] * beta[c] * phi[c] * ed)
            ll -= mu[i, c] * d + alpha[c] * phi[c] * (1 - ed)
            phi[c] = 1 + phi[c] * ed
            last[c] = t
        for c in range(k):
            d = max_time[i] - last[c]
            ed = math.exp(-beta[c] * d)
            ll -= mu[i, c] * d + alpha[c] * phi[c] * (1 - ed)
            states[i, c] = phi[c] * ed
        lls[i] = ll
    return lls, states


def case(n=3, k=3, steps=6):
    mu = RNG.uniform(0.5, 2, (n, k))
    alpha = RNG.uniform(0.1, 0.6, k)
    beta = RNG.uniform(0.5, 2, k)
    state = RNG.uniform(0, 1, (n, k))
    lags = RNG.uniform(0.1, 2, (n, steps))
    marks = RNG.randint(0, k, (n, steps))
    valid = RNG.randint(0, steps + 1, n).astype(np.float64)
    max_time = lags.sum(axis=1) + 1
    return [mu, alpha, beta, state, lags, marks, valid, max_time]


def test_forward_matches_reference():
    args = case()
    check_forward('_contrib_hawkesll', {}, args, list(hawkes_ref(*args)), rtol=1e-10, atol=1e-10)


def test_gradients_match_central_differences():
    args = case(n=2, k=2, steps=5)
    args[6] = np.array([5.0, 3.0])
    head = np.array([0.7, -1.3])
    arrays = [mx.nd.array(a, dtype='int32' if i == 5 else 'float64') for i, a in enumerate(args)]
    for a in arrays[:3]:
        a.attach_grad()
    with mx.autograd.record():
        ll, _ = mx.nd.contrib.hawkesll(*arrays)
    ll.backward(mx.nd.array(head, dtype='float64'))
    for which in range(3):
        want = np.zeros_like(args[which])
        for i in range(want.size):
            total = []
            for sign in (1, -1):
                shifted = [a.copy() for a in args]
                shifted[which].reshape(-1)[i] += sign * 1e-6
                total.append((hawkes_ref(*shifted)[0] * head).sum())
            want.reshape(-1)[i] = (total[0] - total[1]) / 2e-6
        np.testing.assert_allclose(arrays[which].grad.asnumpy(), want, rtol=1e-5, atol=1e-7)


def test_mxnet_example_values():
    n, k = 2, 3
    mu = mx.nd.array([1.5, 2.0, 3.0]).tile((n, 1))
    lags = mx.nd.array([[6, 7, 8, 9, 3, 2, 5, 1, 7], [1, 2, 3, 4, 2, 1, 2, 1, 4]])
    marks = mx.nd.array([[0, 1, 2, 1, 0, 2, 1, 0, 2], [1, 2, 0, 0, 0, 2, 2, 1, 0]]).astype('int32')
    ll, state = mx.nd.contrib.hawkesll(mu, mx.nd.array([0.2, 0.3, 0.4]),
                                       mx.nd.array([2.0, 2.0, 2.0]), mx.nd.zeros((n, k)), lags,
                                       marks, mx.nd.array([7, 9]), mx.nd.ones((n,)) * 100.0)
    np.testing.assert_allclose(ll.asnumpy(), [-647.01240372, -646.28617272], rtol=1e-6)
    assert ll.dtype == np.float32 and state.shape == (n, k)


def test_symbol_shapes_types_and_bad_input():
    args = [mx.sym.var(n) for n in ('lda', 'alpha', 'beta', 'state', 'lags', 'marks', 'valid',
                                   'tmax')]
    sym = mx.sym.contrib.hawkesll(*args)
    assert sym.list_outputs() == ['hawkesll0_output', 'hawkesll0_out_state']
    given = dict(lda=(4, 3), alpha=(3,), beta=(3,), state=(4, 3), lags=(4, 7), marks=(4, 7),
                 valid=(4,), tmax=(4,))
    shapes, outs, _ = sym.infer_shape(**given)
    assert shapes == [(4, 3), (3,), (3,), (4, 3), (4, 7), (4, 7), (4,), (4,)]
    assert outs == [(4,), (4, 3)]
    with pytest.raises(MXNetError, match='alpha'):   # as MXNet: the inputs are not inferred
        sym.infer_shape(lda=(4, 3), lags=(4, 7))
    types, out_types, _ = sym.infer_type(lda='float64')
    assert types[5] == np.int32 and out_types == [np.float64, np.float64]
    good = [mx.nd.array(a, dtype='int32' if i == 5 else 'float32') for i, a in enumerate(case())]
    with pytest.raises(MXNetError, match='marks'):
        mx.nd.contrib.hawkesll(*(good[:5] + [good[5] + 5] + good[6:]))
    with pytest.raises(MXNetError, match='expected lda|lda must (have 2 dimensions|be 2-D)'):
        mx.nd.contrib.hawkesll(*([good[0][0]] + good[1:]))
