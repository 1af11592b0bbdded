"""mx.autograd: gradients of recorded NDArray computations against float64 central differences
and numpy, and MXNet 1.9.1's rules (grad_req, retained graphs, in-place writes, modes)."""
import numpy as np
import pytest

import mxmod as mx


def _central(fn, x, eps=1e-6):
    """Central-difference gradient of the scalar fn at float64 x."""
    grad = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step.reshape(-1)[i] = eps
        grad.reshape(-1)[i] = (fn(x + step) - fn(x - step)) / (2 * eps)
    return grad


def test_chain_of_operators_matches_central_differences():
    x_np = np.random.uniform(-1, 1, (3, 4))
    w_np = np.random.uniform(-1, 1, (5, 4))
    x = mx.nd.array(x_np, dtype='float64')
    w = mx.nd.array(w_np, dtype='float64')
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        h = mx.nd.FullyConnected(x, w, num_hidden=5, no_bias=True)
        y = (mx.nd.tanh(h) * 2 - x.sum(axis=1, keepdims=True)) ** 2
        loss = y.mean()
    loss.backward()

    def f_x(xv):
        return np.mean((np.tanh(xv @ w_np.T) * 2 - xv.sum(1, keepdims=True)) ** 2)

    def f_w(wv):
        return np.mean((np.tanh(x_np @ wv.T) * 2 - x_np.sum(1, keepdims=True)) ** 2)
    np.testing.assert_allclose(x.grad.asnumpy(), _central(f_x, x_np), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(w.grad.asnumpy(), _central(f_w, w_np), rtol=1e-6, atol=1e-9)


def test_indexing_reshape_and_methods_are_recorded():
    x_np = np.arange(12, dtype=np.float64).reshape(3, 4) / 10
    x = mx.nd.array(x_np, dtype='float64')
    x.attach_grad()
    with mx.autograd.record():
        y = x[1:, ::2].reshape((-1,)) * x.T[0:2].reshape((-1,))[:4] + x[[0, 0, 2], [1, 1, 3]].sum()
    y.backward()

    def f(xv):
        return np.sum(xv[1:, ::2].reshape(-1) * xv.T[0:2].reshape(-1)[:4] + xv[[0, 0, 2], [1, 1, 3]].sum())
    np.testing.assert_allclose(x.grad.asnumpy(), _central(f, x_np), rtol=1e-6, atol=1e-9)


def test_grad_req_add_null_and_head_gradient():
    x = mx.nd.array([1.0, 2.0, 3.0])
    gx = mx.nd.ones((3,))
    mx.autograd.mark_variables([x], [gx], grad_reqs='add')
    z = mx.nd.array([1.0, 1.0, 1.0])
    z.attach_grad(grad_req='null')
    for _ in range(2):
        with mx.autograd.record():
            y = x * x + z
        y.backward(mx.nd.array([1.0, 0.5, 2.0]))
    np.testing.assert_allclose(gx.asnumpy(), 1 + 2 * np.array([2.0, 2.0, 12.0]))
    np.testing.assert_array_equal(z.grad.asnumpy(), [0, 0, 0])


def test_backward_twice_needs_retain_graph():
    x = mx.nd.array([2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = x * 3
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.asscalar() == 3
    with pytest.raises(mx.MXNetError, match='not in a computational graph'):
        y.backward()


def test_inplace_writes_refused_while_recording():
    x = mx.nd.ones((2, 2))
    y = mx.nd.ones((2,))
    y.attach_grad()
    with pytest.raises(mx.MXNetError, match=r'Inplace operations \(\+=, -=, x\[:\]=, etc\)'):
        with mx.autograd.record():
            x[0] = y
    with pytest.raises(mx.MXNetError, match='already in a computational graph'):
        with mx.autograd.record():
            y += 1
    x[0] = y        # outside recording: allowed
    np.testing.assert_array_equal(x.asnumpy(), [[1, 1], [1, 1]])


def test_grad_returns_new_arrays_for_variables_and_intermediates():
    x = mx.nd.array([0.5, -1.0])
    x.attach_grad()
    with mx.autograd.record():
        h = x * 3
        z = mx.nd.exp(h)
    dh, dx = mx.autograd.grad(z, [h, x])
    np.testing.assert_allclose(dh.asnumpy(), np.exp([1.5, -3.0]), rtol=1e-6)
    np.testing.assert_allclose(dx.asnumpy(), 3 * np.exp([1.5, -3.0]), rtol=1e-6)
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 0])
    with pytest.raises(mx.MXNetError, match='retain_graph'):
        mx.autograd.grad(z, [x])        # the first grad freed the graph


def test_modes_and_dropout():
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    x = mx.nd.ones((1000,))
    with mx.autograd.record():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        dropped = mx.nd.Dropout(x, p=0.5)
        with mx.autograd.pause():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
            kept = mx.nd.Dropout(x, p=0.5)
        with mx.autograd.predict_mode():
            assert mx.autograd.is_recording() and not mx.autograd.is_training()
    with mx.autograd.train_mode():
        assert mx.autograd.is_training() and not mx.autograd.is_recording()
    assert 0.3 < (dropped.asnumpy() == 0).mean() < 0.7
    np.testing.assert_array_equal(kept.asnumpy(), x.asnumpy())


def test_function_uses_the_user_backward():
    class Sigmoid(mx.autograd.Function):
        def forward(self, x):
            y = 1 / (1 + mx.nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            y, = self.saved_tensors
            return dy * y * (1 - y) * 10      # scaled, to see it is this backward that ran

    x = mx.nd.array([0.0, 1.0])
    x.attach_grad()
    with mx.autograd.record():
        out = Sigmoid()(x)
    out.backward()
    sig = 1 / (1 + np.exp(-np.array([0.0, 1.0])))
    np.testing.assert_allclose(x.grad.asnumpy(), 10 * sig * (1 - sig), rtol=1e-6)


def test_contrib_grad_and_loss():
    def loss(a, b):
        return (a * b).sum()
    grads, value = mx.contrib.autograd.grad_and_loss(loss)(mx.nd.array([1.0, 2.0]),
                                                         mx.nd.array([3.0, 4.0]))
    np.testing.assert_array_equal(grads[0].asnumpy(), [3, 4])
    np.testing.assert_array_equal(grads[1].asnumpy(), [1, 2])
    assert value.asscalar() == 11
