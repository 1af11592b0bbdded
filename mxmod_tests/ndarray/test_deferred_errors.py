"""Errors met while computing on the values (take with mode='raise' and an index out of range)
are reported when a result is read, as MXNet 1.9.1's asynchronous engine does: the call returns,
the result (and what is computed from it) carries the error, and the first read raises it once.
Also: mx.nd.stack / mx.nd.concat are recorded by autograd."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError


@pytest.fixture(autouse=True)
def _fresh_names():
    """Symbols made here get their own name counters (later tests expect fresh ones)."""
    with mx.name.NameManager():
        yield


def test_imperative_take_raises_at_read():
    a = mx.nd.array([[1, 2], [3, 4]])
    y = mx.nd.take(a, mx.nd.array([0, 5]), mode='raise')
    assert y.shape == (2, 2)
    z = y + 1
    with pytest.raises(MXNetError, match='out of bound'):
        y.asnumpy()
    # raised once: the arrays that shared the error read normally afterwards (as in MXNet)
    y.asnumpy()
    z.asnumpy()


def test_error_propagates_to_dependent_results():
    a = mx.nd.array([[1, 2], [3, 4]])
    y = mx.nd.take(a, mx.nd.array([7]), mode='raise')
    z = (y * 2).sum()
    with pytest.raises(MXNetError, match='out of bound'):
        z.wait_to_read()


def test_in_range_raise_mode_and_other_modes():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([2, 0, 1])
    got = mx.nd.take(mx.nd.array(a), mx.nd.array(idx), axis=0, mode='raise').asnumpy()
    np.testing.assert_array_equal(got, np.take(a, idx, axis=0))
    for mode in ('clip', 'wrap'):
        bad = np.array([-4, 5])
        got = mx.nd.take(mx.nd.array(a), mx.nd.array(bad), axis=1, mode=mode).asnumpy()
        np.testing.assert_array_equal(got, np.take(a, bad, axis=1, mode=mode))


def test_executor_forward_returns_and_output_raises():
    sym = mx.sym.take(mx.sym.var('a'), mx.sym.var('i'), mode='raise')
    exe = sym.simple_bind(mx.cpu(), a=(2, 2), i=(2,))
    exe.arg_dict['a'][:] = mx.nd.array([[1, 2], [3, 4]])
    exe.arg_dict['i'][:] = mx.nd.array([0, 5])
    exe.forward(is_train=True)
    with pytest.raises(MXNetError, match='out of bound'):
        exe.outputs[0].asnumpy()
    exe.arg_dict['i'][:] = mx.nd.array([1, 0])
    exe.forward(is_train=True)
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), [[3, 4], [1, 2]])
    exe.backward(mx.nd.ones((2, 2)))
    np.testing.assert_array_equal(exe.grad_dict['a'].asnumpy(), np.ones((2, 2)))


def test_stack_and_concat_are_recorded():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        s = mx.nd.stack(x * 2, x * x)
        c = mx.nd.concat(x.reshape((1, 3)), (x * 3).reshape((1, 3)), dim=0)
        loss = (s * c).sum()
    loss.backward()
    xv = np.array([1.0, 2.0, 3.0])
    # loss = 2x * x + x^2 * 3x = 2x^2 + 3x^3
    np.testing.assert_allclose(x.grad.asnumpy(), 4 * xv + 9 * xv ** 2)


@pytest.mark.parametrize('call, message', [
    (lambda: mx.nd.random.normal(0, -1, shape=(2, 2)), 'scale parameter in gaussian'),
    (lambda: mx.nd.random.normal(0, 0, shape=(2,)), r'param.scale > 0 \(0 vs. 0\)'),
    (lambda: mx.nd.random.uniform(1, 0, shape=(2,)), 'low must be less or equal to high'),
    (lambda: mx.nd.random.gamma(1, -1, shape=(2,)), 'beta parameter in gamma'),
    (lambda: mx.nd.random.gamma(-1, 1, shape=(2,)), 'alpha parameter in gamma'),
    (lambda: mx.nd.random.exponential(-1, shape=(2,)), 'lambda parameter in exponential'),
    (lambda: mx.nd.random.poisson(-1, shape=(2,)), 'lambda parameter in poisson'),
    (lambda: mx.nd.random.negative_binomial(-1, 0.5, shape=(2,)), 'k parameter in negative'),
    (lambda: mx.nd.random.generalized_negative_binomial(-1, 1, shape=(2,)),
     'mu parameter in generalized'),
    (lambda: mx.nd.random.randint(5, 2, shape=(2,)), r'param.high >= param.low \(2 vs. 5\)'),
    (lambda: mx.nd.random.normal_like(mx.nd.ones(2), 0, -1), 'scale parameter in gaussian'),
])
def test_invalid_random_parameters_raise_at_read(call, message):
    out = call()                        # the call itself returns, as in MXNet
    with pytest.raises(MXNetError, match=message):
        out.asnumpy()
    # edge values MXNet accepts
    np.testing.assert_array_equal(mx.nd.random.uniform(2, 2, shape=(2,)).asnumpy(), [2, 2])
    assert mx.nd.random.poisson(0, shape=(3,)).asnumpy().sum() == 0


def test_errors_follow_copies_views_and_rows():
    bad = mx.nd.random.normal(0, -1, shape=(2, 2))
    first, second = bad.copyto(mx.cpu())
    with pytest.raises(MXNetError, match='gaussian'):
        first.asnumpy()
    second.asnumpy()                    # one error, raised once (MXNet's engine shares it)
    for derive in (lambda a: a.copy(), lambda a: a.reshape((4,)), lambda a: a[1],
                   lambda a: a.astype('float64'), lambda a: a.as_in_context(mx.cpu(1)),
                   lambda a: mx.nd.dot(a, a)):
        with pytest.raises(MXNetError, match='gaussian'):
            derive(mx.nd.random.normal(0, -1, shape=(2, 2))).wait_to_read()
    target = mx.nd.zeros((2, 2))
    mx.nd.random.normal(0, -1, shape=(2, 2)).copyto(target)
    with pytest.raises(MXNetError, match='gaussian'):
        target.asnumpy()


def test_waitall_raises_the_first_unread_error_once():
    mx.nd.waitall()
    kept = mx.nd.random.normal(0, -1, shape=(2,))
    mx.nd.random.gamma(-1, 1, shape=(2,))       # a second one, never read
    with pytest.raises(MXNetError, match='gaussian'):
        mx.nd.waitall()
    mx.nd.waitall()                     # nothing left
    kept.asnumpy()                      # and the array no longer raises
    # an error raised by a read is not raised again by waitall
    read = mx.nd.random.normal(0, -1, shape=(2,))
    with pytest.raises(MXNetError):
        read.asnumpy()
    mx.nd.waitall()


def test_symbolic_sampler_error_reaches_outputs_gradients_and_waitall():
    data = mx.sym.var('data')
    noise = mx.sym.random.normal(0, -1, shape=(2, 2))
    out = mx.sym.make_loss(mx.sym.dot(data, noise))
    exe = out.bind(mx.cpu(), {'data': mx.nd.ones((2, 2))}, args_grad={'data': mx.nd.zeros((2, 2))})
    outputs = exe.forward(is_train=True)
    exe.backward()
    with pytest.raises(MXNetError, match='gaussian'):
        outputs[0].asnumpy()
    with pytest.raises(MXNetError, match='gaussian'):
        mx.nd.waitall()


def test_opencv_failures_raise_at_read():
    img = mx.nd.ones((12, 16, 3))
    resized = mx.image.imresize(img, 32, 24, interp=-1)
    assert resized.shape == (24, 32, 3)
    with pytest.raises(MXNetError, match='interpolation'):
        resized.asnumpy()
