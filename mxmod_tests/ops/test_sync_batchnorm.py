"""contrib SyncBatchNorm on one device: batch statistics over every axis but 1, outputs
(output, mean, biased var), moving statistics updated by the training backward, inference with
the moving statistics; values against numpy and gradients against central differences."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad, make, run_forward


@pytest.fixture(autouse=True)
def _fresh_names():
    """Symbols made here get their own name counters (later tests expect fresh ones)."""
    with mx.name.NameManager():
        yield

RNG = np.random.RandomState(21)


def _reference(x, gamma, beta, eps):
    axes = tuple(i for i in range(x.ndim) if i != 1)
    shape = [1] * x.ndim
    shape[1] = x.shape[1]
    mean = x.mean(axis=axes)
    var = x.var(axis=axes)
    out = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * gamma.reshape(shape) \
        + beta.reshape(shape)
    return out, mean, var


@pytest.mark.parametrize('shape', [(4, 3), (2, 3, 5), (2, 3, 4, 4)])
def test_training_forward(shape):
    x = RNG.uniform(-1, 2, shape)
    gamma, beta = RNG.uniform(0.5, 1.5, shape[1]), RNG.uniform(-1, 1, shape[1])
    out, mean, var = _reference(x, gamma, beta, 1e-3)
    check_forward('_contrib_SyncBatchNorm', {'key': 'k', 'fix_gamma': False},
                  [x, gamma, beta], [out, mean, var], aux=[np.zeros(shape[1]), np.ones(shape[1])],
                  is_train=True, rtol=1e-10, atol=1e-12)


def test_inference_uses_moving_statistics():
    x = RNG.uniform(-1, 2, (2, 3, 4))
    gamma, beta = RNG.uniform(0.5, 1.5, 3), RNG.uniform(-1, 1, 3)
    mm, mv = RNG.uniform(-1, 1, 3), RNG.uniform(0.5, 2, 3)
    want = (x - mm[:, None]) / np.sqrt(mv[:, None] + 1e-3) * gamma[:, None] + beta[:, None]
    check_forward('_contrib_SyncBatchNorm', {'key': 'k', 'fix_gamma': False},
                  [x, gamma, beta], [want, np.zeros(3), np.zeros(3)], aux=[mm, mv],
                  is_train=False, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('fix_gamma', [False, True])
def test_training_gradients(fix_gamma):
    x = RNG.uniform(-1, 2, (3, 2, 4))
    gamma, beta = RNG.uniform(0.5, 1.5, 2), RNG.uniform(-1, 1, 2)
    wrt = [0, 2] if fix_gamma else [0, 1, 2]
    grads = check_grad('_contrib_SyncBatchNorm', {'key': 'k', 'fix_gamma': fix_gamma},
                       [x, gamma, beta], aux=[np.zeros(2), np.ones(2)], wrt=wrt,
                       head=[RNG.uniform(-1, 1, x.shape), np.zeros(2), np.zeros(2)],
                       rtol=1e-5, atol=1e-8)
    if fix_gamma:
        assert not np.any(grads[1])


def test_inference_gradients():
    x = RNG.uniform(-1, 2, (3, 2, 4))
    gamma, beta = RNG.uniform(0.5, 1.5, 2), RNG.uniform(-1, 1, 2)
    check_grad('_contrib_SyncBatchNorm', {'key': 'k', 'fix_gamma': False, 'use_global_stats': True},
               [x, gamma, beta], aux=[RNG.uniform(-1, 1, 2), RNG.uniform(0.5, 2, 2)],
               head=[RNG.uniform(-1, 1, x.shape), np.zeros(2), np.zeros(2)],
               rtol=1e-6, atol=1e-9)


def test_autograd_updates_moving_statistics_and_fixes_gamma():
    x = mx.nd.array(RNG.uniform(0, 1, (4, 3, 5)))
    gamma = mx.nd.array([2.0, 3.0, 4.0])
    beta = mx.nd.zeros(3)
    mm, mv = mx.nd.zeros(3), mx.nd.ones(3)
    x.attach_grad()
    with mx.autograd.record():
        out, mean, var = mx.nd.contrib.SyncBatchNorm(x, gamma, beta, mm, mv, key='s',
                                                     momentum=0.9, output_mean_var=True)
    out.backward(mx.nd.ones_like(out))
    xb = x.asnumpy().astype(np.float64)
    np.testing.assert_allclose(gamma.asnumpy(), [1, 1, 1])        # fix_gamma is the default
    np.testing.assert_allclose(mean.asnumpy(), xb.mean(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(var.asnumpy(), xb.var(axis=(0, 2)), rtol=1e-4)
    np.testing.assert_allclose(mm.asnumpy(), 0.1 * xb.mean(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(mv.asnumpy(), 0.9 + 0.1 * xb.var(axis=(0, 2)), rtol=1e-5)


def test_symbol_names_and_key():
    with mx.name.NameManager():
        sym = mx.sym.contrib.SyncBatchNorm(mx.sym.var('x'), key='k')
    assert sym.list_arguments() == ['x', 'syncbatchnorm0_gamma', 'syncbatchnorm0_beta']
    assert sym.list_auxiliary_states() == ['syncbatchnorm0_moving_mean',
                                           'syncbatchnorm0_moving_var']
    assert sym.list_outputs() == ['syncbatchnorm0_output']
    with pytest.raises(MXNetError, match='key'):
        mx.sym.contrib.SyncBatchNorm(mx.sym.var('x'))
