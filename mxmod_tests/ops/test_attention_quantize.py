"""contrib's interleaved attention products against the reshapes/batch_dots MXNet documents them
by, with float64 central-difference gradients; quantize/dequantize against MXNet's reference
formulas."""
import numpy as np

from mxmod_tests.ops.opcheck import check_forward, check_grad, make, run_forward

RNG = np.random.RandomState(23)
HEADS, DIM = 3, 4


def heads_view(x, parts, index):
    length, batch, _ = x.shape
    part = x.reshape(length, batch, HEADS, parts, DIM)[:, :, :, index]
    return part.transpose(1, 2, 0, 3).reshape(batch * HEADS, length, DIM)


def test_self_attention():
    qkv = RNG.randn(5, 2, HEADS * 3 * DIM)
    q, k, v = (heads_view(qkv, 3, i) for i in range(3))
    scores = (q / np.sqrt(DIM)) @ k.transpose(0, 2, 1)
    check_forward('_contrib_interleaved_matmul_selfatt_qk', {'heads': HEADS}, [qkv], [scores])
    check_grad('_contrib_interleaved_matmul_selfatt_qk', {'heads': HEADS}, [qkv])
    att = RNG.uniform(0, 1, (2 * HEADS, 5, 5))
    out = (att @ v).reshape(2, HEADS, 5, DIM).transpose(2, 0, 1, 3).reshape(5, 2, HEADS * DIM)
    check_forward('_contrib_interleaved_matmul_selfatt_valatt', {'heads': HEADS}, [qkv, att], [out])
    check_grad('_contrib_interleaved_matmul_selfatt_valatt', {'heads': HEADS}, [qkv, att])


def test_encoder_decoder_attention():
    q, kv = RNG.randn(5, 2, HEADS * DIM), RNG.randn(6, 2, HEADS * 2 * DIM)
    qh = heads_view(q, 1, 0)
    k, v = heads_view(kv, 2, 0), heads_view(kv, 2, 1)
    scores = (qh / np.sqrt(DIM)) @ k.transpose(0, 2, 1)
    check_forward('_contrib_interleaved_matmul_encdec_qk', {'heads': HEADS}, [q, kv], [scores])
    check_grad('_contrib_interleaved_matmul_encdec_qk', {'heads': HEADS}, [q, kv])
    att = RNG.uniform(0, 1, (2 * HEADS, 5, 6))
    out = (att @ v).reshape(2, HEADS, 5, DIM).transpose(2, 0, 1, 3).reshape(5, 2, HEADS * DIM)
    check_forward('_contrib_interleaved_matmul_encdec_valatt', {'heads': HEADS}, [kv, att], [out])
    check_grad('_contrib_interleaved_matmul_encdec_valatt', {'heads': HEADS}, [kv, att])


def test_quantize_dequantize():
    data = RNG.uniform(-0.9, 1.3, (3, 4)).astype(np.float32)
    lo, hi = np.array([-0.9], np.float32), np.array([1.3], np.float32)
    q, qlo, qhi = run_forward(make('_contrib_quantize'), [data, lo, hi])
    want = ((data - lo) * (255 / (hi - lo)) + 0.5).astype(np.uint8)
    np.testing.assert_array_equal(q, want)
    assert q.dtype == np.uint8 and qlo[0] == np.float32(-0.9) and qhi[0] == np.float32(1.3)
    back = run_forward(make('_contrib_dequantize'), [q, qlo, qhi])[0]
    np.testing.assert_allclose(back, data, atol=(1.3 + 0.9) / 255)
    q8, lo8, hi8 = run_forward(make('_contrib_quantize', out_type='int8'), [data, lo, hi])
    np.testing.assert_array_equal(q8, (np.sign(data) * np.minimum(np.abs(data) * 127 / 1.3 + 0.5,
                                                                   127)).astype(np.int8))
    assert lo8[0] == np.float32(-1.3) and hi8[0] == np.float32(1.3)
    back8 = run_forward(make('_contrib_dequantize'), [q8, lo8, hi8])[0]
    np.testing.assert_allclose(back8, data, atol=1.3 / 127)
