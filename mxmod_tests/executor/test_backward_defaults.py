"""Executor.backward in the cases MXNet 1.9.1 allows (observed with the oracle): no head
gradient where none is needed, integer %, head gradients of another dtype, backward after an
inference forward, and even before any forward (MXNet's own tests do; mxmod computes the
forward values there, where MXNet reads whatever its buffers hold)."""
import numpy as np
import pytest

import mxmod as mx


def _bind(sym, **args):
    grads = {k: mx.nd.ones(v.shape, dtype=v.dtype) * 7 for k, v in args.items()}
    return sym.bind(mx.cpu(), args=args, args_grad=grads), grads


def test_comparisons_need_no_head_gradient_and_give_zero():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    values = {'a': mx.nd.array([1, 2, 3]), 'b': mx.nd.array([1, 0, 3])}
    for sym in (a == b, a > 1, mx.sym.broadcast_lesser(a, b)):
        exe, grads = _bind(sym, **{k: values[k] for k in sym.list_arguments()})
        exe.forward(is_train=True)
        exe.backward()
        assert all(not g.asnumpy().any() for g in grads.values())
    exe, _ = _bind(a * b, a=mx.nd.array([1, 2]), b=mx.nd.array([3, 4]))
    exe.forward(is_train=True)
    with pytest.raises(mx.MXNetError, match='head gradient is required'):
        exe.backward()


def test_integer_modulo_has_zero_gradient():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    sym = mx.sym.cast(a, dtype='int32') % mx.sym.cast(b, dtype='int32')
    exe, grads = _bind(sym, a=mx.nd.array([5, 7, 9]), b=mx.nd.array([2, 3, 4]))
    exe.forward(is_train=True)
    exe.backward([mx.nd.array([1.0, 2.0, 3.0])])
    assert not grads['a'].asnumpy().any() and not grads['b'].asnumpy().any()
    exe, grads = _bind(a % b, a=mx.nd.array([5.5, 7.0]), b=mx.nd.array([2.0, 3.0]))
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((2,))])
    np.testing.assert_array_equal(grads['a'].asnumpy(), [1, 1])
    np.testing.assert_array_equal(grads['b'].asnumpy(), [-2, -2])


def test_backward_before_forward_and_after_inference_forward():
    x = mx.sym.var('x')
    sym = mx.sym.tanh(x * x)
    exe, grads = _bind(sym, x=mx.nd.array([0.5, -1.0, 2.0]))
    head = mx.nd.array([1.0, 0.5, 2.0])
    xv = np.array([0.5, -1.0, 2.0])
    expected = head.asnumpy() * (1 - np.tanh(xv * xv) ** 2) * 2 * xv
    exe.backward([head])
    np.testing.assert_allclose(grads['x'].asnumpy(), expected, rtol=1e-4)
    exe.forward(is_train=False)
    exe.backward([head])
    after_inference = grads['x'].asnumpy().copy()
    np.testing.assert_allclose(after_inference, expected, rtol=1e-4)
    exe.forward(is_train=True)
    exe.backward([head])
    np.testing.assert_array_equal(grads['x'].asnumpy(), after_inference)


@pytest.mark.parametrize('extra', ['blocked', 'blocked_twice', 'computed_from_blocked'])
def test_outputs_past_blockgrad_need_no_head_gradient(extra):
    """Outputs whose gradient reaches no argument (BlockGrad, the same BlockGrad output listed
    twice as keras-mxnet's metrics do, arithmetic on a blocked value) need no head gradient in
    MXNet 1.9.1; the loss's gradient is the one a lone MakeLoss gives."""
    data, label = mx.sym.var('data'), mx.sym.var('label')
    fc = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    loss = mx.sym.MakeLoss(mx.sym.mean(mx.sym.square(fc - label)))
    blocked = mx.sym.BlockGrad(mx.sym.mean(mx.sym.abs(fc - label)))
    heads = {'blocked': [loss, blocked], 'blocked_twice': [loss, blocked, fc * 2, blocked],
             'computed_from_blocked': [loss, mx.sym.BlockGrad(fc) * 2 + 1]}[extra]
    if extra == 'blocked_twice':
        heads[2] = mx.sym.BlockGrad(heads[2])
    rng = np.random.RandomState(0)
    values = {'data': rng.randn(4, 5), 'label': rng.randn(4, 3), 'fc_weight': rng.randn(3, 5),
              'fc_bias': rng.randn(3)}
    grads = []
    for sym in (mx.sym.Group(heads), loss):
        exe = sym.simple_bind(mx.cpu(), data=(4, 5), label=(4, 3))
        for name, value in values.items():
            exe.arg_dict[name][:] = value
        exe.forward(is_train=True)
        exe.backward()
        grads.append(exe.grad_dict['fc_weight'].asnumpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
    assert np.abs(grads[1]).sum() > 0


def test_inference_passes_keep_values_once_backward_follows_them():
    """MXNet allows backward after forward(is_train=False) (neural-style does it every step). The
    first such backward runs the pass again to get the values an inference pass frees; from then
    on this executor's inference passes keep them, so backward runs no forward step. Gradients
    are the pass's own: the Dropout mask it drew, tanh's values against numpy."""
    x, w, v = mx.sym.Variable('x'), mx.sym.Variable('w'), mx.sym.Variable('v')
    dropped = mx.sym.MakeLoss(mx.sym.sum(mx.sym.Dropout(x * w, p=0.5, mode='always')))
    fc = mx.sym.tanh(mx.sym.FullyConnected(x, v, num_hidden=4, no_bias=True))
    net = mx.sym.Group([dropped, mx.sym.MakeLoss(mx.sym.sum(mx.sym.square(fc)))])
    exe = net.simple_bind(mx.cpu(), x=(3, 5), w=(3, 5), v=(4, 5))
    exe.arg_dict['w'][:] = 1.0
    V = np.random.RandomState(0).rand(4, 5).astype(np.float32)
    exe.arg_dict['v'][:] = V
    steps = []
    real = exe._run_step

    def counted(*args, **kwargs):
        steps.append(1)
        return real(*args, **kwargs)
    exe._run_step = counted
    for it in range(3):
        X = np.random.RandomState(it + 1).rand(3, 5).astype(np.float32) + 0.5
        exe.arg_dict['x'][:] = X
        outs = [o.asnumpy() for o in exe.forward(is_train=False)]
        del steps[:]
        exe.backward()
        assert len(steps) == (len(exe._plan.steps) if it == 0 else 0), (it, len(steps))
        # d out0 / d w = mask * 2 * x: summed against w = 1 it is out0 (the same mask)
        np.testing.assert_allclose((exe.grad_dict['w'].asnumpy()).sum(), outs[0].sum(),
                                   rtol=1e-5)
        t = np.tanh(X @ V.T)
        np.testing.assert_allclose(exe.grad_dict['v'].asnumpy(), (2 * t * (1 - t * t)).T @ X,
                                   rtol=1e-4, atol=1e-5)
