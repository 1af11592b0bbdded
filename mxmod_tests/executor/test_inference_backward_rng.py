"""backward after forward(is_train=False) reruns the inference pass: random operators must give
the draws of that forward (MXNet keeps forward's values; Dropout mode='always' then has one mask
for output and gradient), and the rerun must not consume the random stream."""
import numpy as np
import pytest

import mxmod as mx


@pytest.fixture(autouse=True)
def _fresh_names():
    """Symbols made here get their own name counters (later tests expect fresh ones)."""
    with mx.name.NameManager():
        yield


def _always_dropout_executor(shape):
    y = mx.sym.Dropout(mx.sym.var('data'), p=0.5, mode='always')
    exe = y.simple_bind(ctx=mx.cpu(), data=shape)
    exe.arg_arrays[0][:] = 1
    return exe


def test_gradient_uses_the_mask_of_the_inference_forward():
    shape = (20, 20)
    exe = _always_dropout_executor(shape)
    for is_train in (True, False):
        exe.forward(is_train=is_train)
        out = exe.outputs[0].asnumpy()
        assert set(np.unique(out)) == {0.0, 2.0}
        exe.backward([mx.nd.ones(shape)], is_train=is_train)
        np.testing.assert_array_equal(exe.grad_arrays[0].asnumpy(), out)


def test_rerun_does_not_advance_the_stream():
    shape = (10, 10)
    mx.random.seed(3)
    exe = _always_dropout_executor(shape)
    exe.forward(is_train=False)
    exe.backward([mx.nd.ones(shape)])
    after_backward = mx.nd.random.uniform(shape=(5,)).asnumpy()
    mx.random.seed(3)
    exe2 = _always_dropout_executor(shape)
    exe2.forward(is_train=False)
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=(5,)).asnumpy(), after_backward)


def test_unseeded_stream_created_by_the_forward():
    # the stream of the context may first be created by this very forward
    from mxmod import rng
    rng._STREAMS.clear()
    rng._INITIAL.clear()
    shape = (8, 8)
    exe = _always_dropout_executor(shape)
    exe.forward(is_train=False)
    out = exe.outputs[0].asnumpy()
    exe.backward([mx.nd.ones(shape)])
    np.testing.assert_array_equal(exe.grad_arrays[0].asnumpy(), out)
