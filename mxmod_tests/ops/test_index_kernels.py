"""The compiled row scatter-add (mxmod/ops/index_kernels.py) behind Embedding's, take's and
gather_nd's gradients: bit-identical to the numpy bincount reference it replaces."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.ops import indexing

pytest.importorskip('numba')


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('k,nrows,width', [(1, 1, 2), (50, 7, 3), (1280, 1000, 200), (9, 4, 33)])
def test_scatter_rows_matches_bincount(jit_state, dtype, k, nrows, width):
    rs = np.random.RandomState(k + width)
    rows = rs.randint(0, nrows, k)
    values = rs.randn(k, width).astype(dtype) * 10 ** rs.uniform(-3, 3, (k, 1)).astype(dtype)
    jit_state.set_enabled(False)
    ref = indexing.scatter_rows(np, nrows, rows, values)
    jit_state.set_enabled(True)
    got = indexing.scatter_rows(np, nrows, rows, values)
    assert got.dtype == ref.dtype == np.dtype(dtype) and got.shape == (nrows, width)
    np.testing.assert_array_equal(got, ref)
    # against a plain float64 loop
    expect = np.zeros((nrows, width))
    for r, v in zip(rows, values.astype(np.float64)):
        expect[r] += v
    np.testing.assert_array_equal(got, expect.astype(dtype))


def test_scatter_rows_non_contiguous_and_int32_rows(jit_state):
    rs = np.random.RandomState(0)
    values = rs.randn(20, 12).astype(np.float32)[:, ::2]
    rows = rs.randint(0, 5, 20).astype(np.int32)
    jit_state.set_enabled(False)
    ref = indexing.scatter_rows(np, 5, rows, values)
    jit_state.set_enabled(True)
    np.testing.assert_array_equal(indexing.scatter_rows(np, 5, rows, values), ref)


def test_embedding_gradient_with_and_without_kernel(jit_state):
    rs = np.random.RandomState(1)
    data = mx.nd.array(rs.randint(0, 30, (6, 7)))
    weight = mx.nd.array(rs.randn(30, 5))
    head = mx.nd.array(rs.randn(6, 7, 5))
    grads = []
    for compiled in (False, True):
        jit_state.set_enabled(compiled)
        weight.attach_grad()
        with mx.autograd.record():
            out = mx.nd.Embedding(data, weight, input_dim=30, output_dim=5)
        out.backward(head)
        grads.append(weight.grad.asnumpy())
    np.testing.assert_array_equal(grads[1], grads[0])
    expect = np.zeros((30, 5), np.float32)
    np.add.at(expect, data.asnumpy().astype(int).reshape(-1), head.asnumpy().reshape(-1, 5))
    np.testing.assert_allclose(grads[1], expect, rtol=1e-6, atol=1e-6)
