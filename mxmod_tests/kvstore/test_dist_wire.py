"""The 2-bit wire format (pack / unpack) against numpy, the nccl store's missing-GPU error and
its allreduce on GPUs (skipped without an NVIDIA GPU), and create() routing of dist names."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.context import num_gpus
from mxmod.kvstore.twobit_wire import pack, packed_size, unpack_add


@pytest.mark.parametrize('size', [1, 3, 4, 5, 1001])
def test_pack_unpack_roundtrip(size):
    rs = np.random.RandomState(size)
    thr = np.float32(0.5)
    quantized = rs.choice(np.array([-thr, 0, thr], np.float32), size=size)
    packed = pack(quantized)
    assert packed.dtype == np.uint8 and packed.size == packed_size(size) == (size + 3) // 4
    out = np.full(size, 1.0, np.float32)
    unpack_add(packed, thr, out)
    np.testing.assert_array_equal(out, 1.0 + quantized)


def test_pack_matches_compression_output():
    """What travels is exactly what the 2-bit compressor produced (residual kept locally)."""
    comp = mx.kv.TwoBitCompression(0.5)
    grad = mx.nd.array(np.array([0.7, -0.2, -0.6, 0.3, 0.0], np.float32))
    quantized = comp.quantize('k', 0, grad).asnumpy()
    np.testing.assert_array_equal(quantized, [0.5, 0, -0.5, 0, 0])
    total = np.zeros(5, np.float32)
    unpack_add(pack(quantized), 0.5, total)
    np.testing.assert_array_equal(total, quantized)


def test_create_routes_dist_and_nccl_names():
    from mxmod.kvstore import base
    assert ('dist', 'dist', 'DistKVStore') in base._NATIVE_TYPES
    from mxmod.kvstore.dist import DistKVStore
    from mxmod.kvstore.dist_async import DistAsyncKVStore
    assert issubclass(DistAsyncKVStore, DistKVStore)


@pytest.mark.skipif(num_gpus() > 0, reason='checks the error raised without a GPU')
def test_nccl_without_gpu_is_a_clear_error():
    with pytest.raises(MXNetError, match="kvstore 'nccl' needs"):
        mx.kv.create('nccl')


@pytest.mark.gpu
@pytest.mark.skipif(num_gpus() < 1, reason='needs an NVIDIA GPU with cupy and NCCL')
def test_nccl_allreduce_matches_numpy():
    ngpu = num_gpus()
    devs = [mx.gpu(i) for i in range(ngpu)]
    kv = mx.kv.create('nccl')
    rs = np.random.RandomState(0)
    vals = [rs.rand(3, 4).astype(np.float32) for _ in devs]
    kv.init(['a', 'b'], [mx.nd.zeros((3, 4)), mx.nd.zeros((3, 4))])
    grads = [[mx.nd.array(v, ctx=d) for v, d in zip(vals, devs)] for _ in range(2)]
    kv.pushpull(['a', 'b'], grads)
    for row in grads:
        for g in row:
            np.testing.assert_allclose(g.asnumpy(), np.sum(vals, axis=0), rtol=1e-6)
    kv.set_optimizer(mx.optimizer.create('test', rescale_grad=2.0))
    out = [mx.nd.zeros((3, 4), d) for d in devs]
    kv.pushpull('a', [mx.nd.array(v, ctx=d) for v, d in zip(vals, devs)], out=out)
    np.testing.assert_allclose(out[-1].asnumpy(), 3 * np.sum(vals, axis=0), rtol=1e-5)
