"""Operands as MXNet 1.9.1 checks them (behaviour taken from the oracle): no dtype promotion
between NDArrays, no numpy arrays as NDArray operands, one dtype for concat/stack inputs."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError


def test_numpy_array_operand_is_a_type_error():
    with pytest.raises(TypeError, match='not supported'):
        mx.nd.ones(2) + np.ones(2)
    # numpy scalars are scalars
    np.testing.assert_array_equal((mx.nd.ones(2) * np.float32(2)).asnumpy(), [2, 2])


def test_mismatched_dtypes_are_refused_not_promoted():
    a = mx.nd.ones(3, dtype='int32')
    b = mx.nd.ones(3, dtype='float32')
    with pytest.raises(MXNetError, match='int32|float32'):
        a + b
    with pytest.raises(MXNetError):
        mx.nd.broadcast_add(b, mx.nd.ones(3, dtype='float64'))
    np.testing.assert_array_equal((b + b.astype('float32')).asnumpy(), [2, 2, 2])


def test_concat_and_stack_need_one_dtype():
    a = mx.nd.ones((2, 2), dtype='float32')
    b = mx.nd.ones((2, 2), dtype='float16')
    for call in (lambda: mx.nd.concat(a, b, dim=0), lambda: mx.nd.stack(a, b)):
        with pytest.raises(MXNetError, match='Non-uniform data type'):
            call()
    assert mx.nd.concat(a, a, dim=0).shape == (4, 2)
