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
