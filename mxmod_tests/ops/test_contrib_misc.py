"""Small contrib operators and the contrib resizes against numpy, with float64 central-difference
gradients: index_copy, quadratic, arange_like, boolean_mask, index_array, allclose,
div_sqrt_dim, BilinearResize2D, AdaptiveAvgPooling2D."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad, make, run_forward

RNG = np.random.RandomState(13)


def test_index_copy_quadratic_div_sqrt_dim():
    old, new = RNG.randn(5, 3), RNG.randn(2, 3)
    index = np.array([4, 1], dtype=np.int64)
    want = old.copy()
    want[index] = new
    check_forward('_contrib_index_copy', {}, [old, index, new], [want])
    grads = check_grad('_contrib_index_copy', {}, [old, index, new], wrt=[0, 2])
    assert not grads[0][index].any()
    x = RNG.randn(3, 4)
    check_forward('_contrib_quadratic', {'a': 0.5, 'b': -2, 'c': 1}, [x], [0.5 * x * x - 2 * x + 1])
    check_grad('_contrib_quadratic', {'a': 0.5, 'b': -2, 'c': 1}, [x])
    check_forward('_contrib_div_sqrt_dim', {}, [x], [x / 2.0])
    check_grad('_contrib_div_sqrt_dim', {}, [x])


def test_arange_like_index_array_allclose():
    x = np.zeros((2, 3), dtype=np.float32)
    want = 1 + 0.5 * np.floor(np.arange(6) / 2).reshape(2, 3)
    check_forward('_contrib_arange_like', {'start': 1, 'step': 0.5, 'repeat': 2}, [x], [want])
    check_forward('_contrib_arange_like', {'axis': -1}, [x], [np.arange(3.0)])
    idx = run_forward(make('_contrib_index_array', axes=(1,)), [x])[0]
    assert idx.dtype == np.int64 and idx.shape == (2, 3, 1)
    np.testing.assert_array_equal(idx[..., 0], np.broadcast_to(np.arange(3), (2, 3)))
    full = run_forward(make('_contrib_index_array'), [x])[0]
    np.testing.assert_array_equal(full, np.stack(np.indices((2, 3)), -1))
    a = RNG.randn(4)
    assert run_forward(make('_contrib_allclose'), [a, a + 1e-9])[0] == 1
    assert run_forward(make('_contrib_allclose'), [a, a + 1e-3])[0] == 0
    nan = np.array([np.nan, 1.0])
    assert run_forward(make('_contrib_allclose'), [nan, nan])[0] == 1
    assert run_forward(make('_contrib_allclose', equal_nan=False), [nan, nan])[0] == 0


def test_boolean_mask():
    data = RNG.randn(4, 3)
    index = np.array([0, 1, 0, 2.0])
    check_forward('_contrib_boolean_mask', {}, [data, index], [data[[1, 3]]])
    grads = check_grad('_contrib_boolean_mask', {}, [data, index], wrt=[0])
    assert not grads[0][[0, 2]].any()
    empty = mx.nd.contrib.boolean_mask(mx.nd.array(data), mx.nd.zeros(4))
    assert empty.shape == (0, 3)
    with pytest.raises(MXNetError, match='axis=0'):
        make('_contrib_boolean_mask', axis=1)


def _bilinear_ref(x, oh, ow, align):
    """MXNet's BilinearResize2D, one output pixel at a time."""
    n, c, h, w = x.shape

    def source(dst, out, size):
        if out <= 1:
            return 0.0
        if align:
            return np.float32(size - 1) / np.float32(out - 1) * np.float32(dst)
        return max(np.float32(size) / np.float32(out) * np.float32(dst + 0.5) - np.float32(0.5), 0)
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y, xx = source(i, oh, h), source(j, ow, w)
            y0, x0 = int(y), int(xx)
            y1, x1 = y0 + (y0 < h - 1), x0 + (x0 < w - 1)
            ly, lx = y - y0, xx - x0
            out[:, :, i, j] = ((1 - ly) * ((1 - lx) * x[:, :, y0, x0] + lx * x[:, :, y0, x1])
                               + ly * ((1 - lx) * x[:, :, y1, x0] + lx * x[:, :, y1, x1]))
    return out


@pytest.mark.parametrize('attrs,size', [({'height': 7, 'width': 4}, (7, 4)),
                                        ({'height': 3, 'width': 9, 'align_corners': False}, (3, 9)),
                                        ({'mode': 'to_odd_down'}, (5, 5))])
def test_bilinear_resize(attrs, size):
    x = RNG.randn(2, 2, 5, 6)
    check_forward('_contrib_BilinearResize2D', attrs, [x],
                  [_bilinear_ref(x, size[0], size[1], attrs.get('align_corners', True))])
    check_grad('_contrib_BilinearResize2D', attrs, [x])


def test_bilinear_resize_like_and_adaptive_pooling():
    x, like = RNG.randn(1, 2, 5, 6), np.zeros((1, 2, 8, 3))
    out = run_forward(make('_contrib_BilinearResize2D', mode='like'), [x, like])[0]
    assert out.shape == (1, 2, 8, 3)
    check_grad('_contrib_BilinearResize2D', {'mode': 'like'}, [x, like], wrt=[0])
    want = np.zeros((1, 2, 3, 4))
    for i in range(3):
        for j in range(4):
            r0, r1 = (i * 5) // 3, -((-(i + 1) * 5) // 3)
            c0, c1 = (j * 6) // 4, -((-(j + 1) * 6) // 4)
            want[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
    check_forward('_contrib_AdaptiveAvgPooling2D', {'output_size': (3, 4)}, [x], [want])
    check_grad('_contrib_AdaptiveAvgPooling2D', {'output_size': (3, 4)}, [x])
    check_forward('_contrib_AdaptiveAvgPooling2D', {}, [x], [x.mean(axis=(2, 3), keepdims=True)])
