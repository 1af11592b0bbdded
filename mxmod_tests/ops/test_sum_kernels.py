"""The compiled float64 column sums (mxmod/ops/sum_kernels.py) behind FullyConnected's bias
gradient: bit-identical to numpy's float64 reduction they replace."""
import numpy as np
import pytest

import mxmod as mx

pytest.importorskip('numba')
from mxmod.ops.sum_kernels import column_sums_into  # noqa: E402  pylint: disable=wrong-import-position


@pytest.mark.parametrize('shape', [(1, 1), (128, 512), (128, 10), (1000, 7), (3, 5000)])
def test_column_sums_match_numpy_float64_reduction(shape):
    rs = np.random.RandomState(shape[0] + shape[1])
    a = (rs.randn(*shape) * np.exp(rs.randn(*shape) * 3)).astype(np.float32)
    out = np.empty(shape[1], np.float32)
    column_sums_into(a, out)
    np.testing.assert_array_equal(out, np.add.reduce(a, axis=0, dtype=np.float64)
                                  .astype(np.float32))


def test_fully_connected_bias_gradient_with_and_without_kernel(jit_state):
    rs = np.random.RandomState(3)
    data = rs.randn(64, 20).astype(np.float32)
    head = (rs.randn(64, 33) * np.exp(rs.randn(64, 33) * 2)).astype(np.float32)
    sym = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=33, name='fc')
    grads = []
    for compiled in (False, True):
        jit_state.set_enabled(compiled)
        exe = sym.simple_bind(mx.cpu(), data=data.shape)
        exe.arg_dict['data'][:] = data
        exe.arg_dict['fc_weight'][:] = rs.randn(33, 20).astype(np.float32)
        exe.forward(is_train=True)
        exe.backward([mx.nd.array(head)])
        grads.append(exe.grad_dict['fc_bias'].asnumpy())
    np.testing.assert_array_equal(grads[1], grads[0])
    np.testing.assert_allclose(grads[1], head.astype(np.float64).sum(0), rtol=1e-6)
