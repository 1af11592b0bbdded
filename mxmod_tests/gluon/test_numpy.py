"""mx.np against MXNet 1.9.1 (recorded reprs, dtypes, shapes and values of creation
functions, arithmetic, indexing and reductions under numpy shape semantics), autograd
through mx.np arrays, conversions, and the errors for what mxmod leaves out."""
import json
import os
import threading

import numpy as np
import pytest

import mxmod as mx

from . import gluon_cases

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, 'fixtures', 'gluon_meta.json')) as _f:
    NP = json.load(_f)['np']


@pytest.fixture
def np_shape():
    previous = mx.set_np_shape(True)
    yield
    mx.set_np_shape(previous)


@pytest.mark.parametrize('expr', gluon_cases.NP_EXPRESSIONS)
def test_expression_matches_mxnet(expr, np_shape):  # pylint: disable=redefined-outer-name,unused-argument
    got = gluon_cases.np_results(mx)[expr]
    want = NP[expr]
    if expr.startswith('np.empty'):
        got.pop('values'), want.pop('values'), got.pop('repr'), want.pop('repr')
    assert got == want


def test_autograd_through_np_arrays(np_shape):  # pylint: disable=redefined-outer-name,unused-argument
    x = mx.np.array([[1., 2.], [3., 4.]])
    x.attach_grad()
    with mx.autograd.record():
        y = (x * x).sum() + x[1, 0] * 3 + x.reshape(-1)[1]
    y.backward()
    assert y.shape == () and isinstance(y, mx.np.ndarray)
    assert isinstance(x.grad, mx.np.ndarray)
    np.testing.assert_allclose(x.grad.asnumpy(), [[2., 5.], [9., 8.]])


def test_conversions_share_storage():
    legacy = mx.nd.arange(4)
    arr = legacy.as_np_ndarray()
    assert type(arr) is mx.np.ndarray and isinstance(arr, mx.nd.NDArray)
    arr[1] = 10
    assert legacy.asnumpy().tolist() == [0, 10, 2, 3]
    back = arr.as_nd_ndarray()
    assert type(back) is mx.nd.NDArray and back.dtype == np.float32
    with pytest.raises(ValueError, match='zero-copy as_np_ndarray'):
        mx.np.array(legacy)
    assert mx.np.array(np.arange(3, dtype=np.int64)).dtype == np.int64
    moved = arr.copyto(mx.cpu(1))
    assert type(moved) is mx.np.ndarray and moved.context == mx.cpu(1)
    assert type(arr.as_in_context(mx.cpu(2))) is mx.np.ndarray
    target = mx.nd.zeros((4,))
    assert arr.copyto(target) is target and target.asnumpy().tolist() == [0, 10, 2, 3]


def test_zero_size_and_scalars_need_numpy_shapes():
    with pytest.raises(mx.MXNetError, match='numpy shape semantics'):
        mx.np.ones(shape=())
    with pytest.raises(mx.MXNetError, match='numpy shape semantics'):
        mx.np.zeros((0, 2))
    assert mx.np.ones((2, 2)).shape == (2, 2)


def test_np_global_shape_in_a_thread():
    """MXNet's test_thread_local.py::test_np_global_shape: set_np_shape(2) reaches every
    thread."""
    mx.set_np_shape(2)
    data = []

    def run():
        data.append(mx.np.ones(shape=()))
        data.append(mx.np.ones(shape=(0, 1, 2)))
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
        np.testing.assert_array_equal(data[0].asnumpy(), np.ones(()))
        assert data[1].asnumpy().shape == (0, 1, 2)
    finally:
        mx.set_np_shape(0)


def test_dense_in_a_thread():
    """MXNet's test_thread_local.py::test_createblock: a layer created, initialized and called
    in another thread (its own name scope and autograd state)."""
    result = []

    def run():
        net = mx.gluon.nn.Dense(2)
        net.initialize()
        out = net(mx.nd.array([1, 2, 3]))
        out.wait_to_read()
        result.append((net.prefix, out.shape, net.weight.shape))
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert result == [('dense0_', (3, 2), (2, 1))]


def test_left_out_names_raise_clear_errors():
    with pytest.raises(mx.MXNetError, match=r'mx\.np\.random is not available.*of mx\.np it '
                       r'implements only the ndarray type and array, zeros'):
        mx.np.random  # pylint: disable=pointless-statement
    with pytest.raises(mx.MXNetError, match=r'mx\.npx\.relu is not available.*set_np'):
        mx.npx.relu  # pylint: disable=pointless-statement
    with pytest.raises(AttributeError, match='has no attribute exp'):
        mx.np.ones((2,)).exp()
    mx.npx.set_np()
    try:
        assert mx.npx.is_np_array() and mx.npx.is_np_shape()
    finally:
        mx.npx.reset_np()
    assert not mx.npx.is_np_array()
