"""moments, cumsum, histogram, eye, split_v2, ravel/unravel, depth_to_space/space_to_depth,
im2col/col2im, the AMP casts and the finiteness checks: forwards against numpy, gradients by
float64 central differences, MXNet's checks, and the ``mx.nd`` / ``mx.sym`` wrappers."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad, make, run_forward

RNG = np.random.RandomState(5)


@pytest.mark.parametrize('axes,keepdims', [((1,), False), ((0, 2), True), ((0, 1, 2), False)])
def test_moments(axes, keepdims):
    x = RNG.uniform(-1, 1, (3, 4, 2))
    mean = x.mean(axis=axes, keepdims=keepdims)
    var = x.var(axis=axes, keepdims=keepdims)
    check_forward('moments', {'axes': axes, 'keepdims': keepdims}, [x],
                  [mean.reshape(mean.shape or (1,)), var.reshape(var.shape or (1,))])
    check_grad('moments', {'axes': axes, 'keepdims': keepdims}, [x])
    with pytest.raises(MXNetError, match='axes'):     # as MXNet: when shapes are inferred
        make('moments').infer_shape([(2, 3)], [None, None])


@pytest.mark.parametrize('attrs', [{}, {'axis': 0}, {'axis': 2}, {'axis': 1, 'dtype': 'float64'}])
def test_cumsum(attrs):
    x = RNG.uniform(-1, 1, (2, 3, 4))
    want = np.cumsum(x, axis=attrs.get('axis'))
    check_forward('cumsum', attrs, [x], [want])
    check_grad('_np_cumsum', attrs, [x])
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert run_forward(make('cumsum'), [ints])[0].dtype == np.int32


@pytest.mark.parametrize('bins', [3, 7])
def test_histogram_equal_bins_and_edges(bins):
    x = RNG.normal(size=(4, 5, 3)).astype(np.float32)
    x[0, 0, 0] = 1.5        # on the right edge: counted in the last bin
    counts, edges = run_forward(make('_histogram', bin_cnt=bins, range=(-1.5, 1.5)), [x])
    want_counts, want_edges = np.histogram(x, bins=bins, range=(-1.5, 1.5))
    np.testing.assert_array_equal(counts, want_counts)
    assert counts.dtype == np.int64
    np.testing.assert_allclose(edges, want_edges, rtol=1e-6)
    given = np.array([-1, -0.2, 0.5, 2.5], dtype=np.float32)
    counts, edges = run_forward(make('_histogram'), [x, given])
    np.testing.assert_array_equal(counts, np.histogram(x, bins=given)[0])
    with pytest.raises(MXNetError, match='both'):
        make('_histogram', bin_cnt=3)


def test_eye_and_nd_wrappers():
    np.testing.assert_array_equal(run_forward(make('_eye', N=3, M=5, k=2), [])[0], np.eye(3, 5, 2))
    assert mx.nd.eye(4, k=-1, dtype='int32').dtype == np.int32
    t = mx.nd.zeros((3, 4, 5))
    assert mx.nd.moveaxis(t, [0, 1], [-1, -2]).shape == np.moveaxis(t.asnumpy(), [0, 1],
                                                                   [-1, -2]).shape
    assert mx.nd.moveaxis(t, 0, 2).shape == (4, 5, 3)
    with pytest.raises(ValueError):
        mx.nd.moveaxis(t, 3, 0)
    x = mx.nd.array(RNG.normal(size=50))
    counts, edges = mx.nd.histogram(x, bins=mx.nd.array([-1, 0, 1]))
    np.testing.assert_array_equal(counts.asnumpy(), np.histogram(x.asnumpy(), [-1, 0, 1])[0])


@pytest.mark.parametrize('how,axis,squeeze', [((1, 3), 2, False), (3, 1, True), ((2,), 0, False)])
def test_split_v2(how, axis, squeeze):
    x = RNG.uniform(-1, 1, (2, 3, 4))
    parts = mx.nd.split_v2(mx.nd.array(x, dtype=x.dtype), how, axis=axis, squeeze_axis=squeeze)
    want = np.split(x, how, axis=axis)
    if squeeze:
        want = [w.squeeze(axis) for w in want]
    assert len(parts) == len(want)
    for got, ref in zip(parts, want):
        np.testing.assert_array_equal(got.asnumpy(), ref)
    indices = [0] + list(how) if isinstance(how, tuple) else []
    attrs = {'indices': indices, 'axis': axis, 'squeeze_axis': squeeze,
             'sections': how if isinstance(how, int) else 0}
    check_grad('_split_v2', attrs, [x])
    with pytest.raises(MXNetError, match='within the axis'):
        mx.nd.split_v2(mx.nd.array(x), (1, 7), axis=2)


def test_ravel_and_unravel():
    shape = (3, 4, 5)
    coords = np.stack([RNG.randint(0, d, 7) for d in shape]).astype(np.float32)
    flat = np.ravel_multi_index(coords.astype(np.int64), shape).astype(np.float32)
    check_forward('ravel_multi_index', {'shape': shape}, [coords], [flat])
    check_forward('_ravel_multi_index', {'shape': (-1, 4, 5)}, [coords], [flat])
    check_forward('unravel_index', {'shape': shape}, [flat], [coords])
    check_forward('unravel_index', {'shape': (-1, 4, 5)}, [flat], [coords])
    # the first coordinate keeps what is left (MXNet does not wrap it)
    check_forward('unravel_index', {'shape': (3, 4)}, [np.array([50.])], [np.array([[12.], [2.]])])


def _depth_to_space(x, b):
    n, c, h, w = x.shape
    t = x.reshape(n, b, b, c // b ** 2, h, w).transpose(0, 3, 4, 1, 5, 2)
    return t.reshape(n, c // b ** 2, h * b, w * b)


def _space_to_depth(x, b):
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


@pytest.mark.parametrize('block', [2, 3])
def test_depth_space_round_trip(block):
    x = RNG.uniform(-1, 1, (2, 2 * block * block, 2, 3))
    y = _depth_to_space(x, block)
    check_forward('depth_to_space', {'block_size': block}, [x], [y])
    check_forward('space_to_depth', {'block_size': block}, [y], [_space_to_depth(y, block)])
    np.testing.assert_array_equal(_space_to_depth(y, block), x)
    check_grad('depth_to_space', {'block_size': block}, [x])
    check_grad('space_to_depth', {'block_size': block}, [y])
    for bad, size in (((1, block * block - 1, 2, 2), block), ((1, 4, 0, 3), 2), ((1, 4, 2, 2), 0)):
        with pytest.raises(MXNetError):
            mx.nd.depth_to_space(mx.nd.zeros(bad), size)
    with pytest.raises(MXNetError):
        mx.nd.space_to_depth(mx.nd.zeros((1, 1, 3, 4)), 2)


def _im2col_reference(x, kernel, stride, pad, dilate):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dilate[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    ow = (w + 2 * pad[1] - dilate[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    cols = np.zeros((n, c, kernel[0], kernel[1], oh, ow))
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            r, s = i * dilate[0], j * dilate[1]
            cols[:, :, i, j] = xp[:, :, r:r + stride[0] * oh:stride[0], s:s + stride[1] * ow:stride[1]]
    return cols.reshape(n, c * kernel[0] * kernel[1], oh * ow)


@pytest.mark.parametrize('kernel,stride,pad,dilate', [((3, 3), (1, 1), (1, 1), (1, 1)),
                                                      ((2, 3), (2, 1), (0, 1), (2, 1))])
def test_im2col_col2im(kernel, stride, pad, dilate):
    x = RNG.uniform(-1, 1, (2, 3, 6, 5))
    attrs = {'kernel': kernel, 'stride': stride, 'pad': pad, 'dilate': dilate}
    cols = _im2col_reference(x, kernel, stride, pad, dilate)
    check_forward('im2col', attrs, [x], [cols])
    check_grad('im2col', attrs, [x])
    back = dict(attrs, output_size=(6, 5))
    check_grad('col2im', back, [cols])
    # col2im is the adjoint of im2col: <im2col(x), c> == <x, col2im(c)>
    c = RNG.uniform(-1, 1, cols.shape)
    image = run_forward(make('col2im', **back), [c])[0]
    np.testing.assert_allclose(np.sum(cols * c), np.sum(x * image), rtol=1e-10)


def test_amp_casts_and_gradients():
    half, single, double = (np.ones((2, 2), d) for d in (np.float16, np.float32, np.float64))
    assert run_forward(make('amp_cast', dtype='float16'), [single])[0].dtype == np.float16
    assert run_forward(make('amp_cast', dtype='float16'), [double])[0].dtype == np.float64
    outs = run_forward(make('amp_multicast', num_outputs=3), [half, single, double])
    assert [o.dtype for o in outs] == [np.float32, np.float32, np.float64]
    outs = run_forward(make('amp_multicast', num_outputs=2, cast_narrow=True), [half, single])
    assert [o.dtype for o in outs] == [np.float16, np.float16]
    x = mx.sym.var('x')
    exe = mx.sym.amp_cast(x, dtype='float16').bind(
        mx.cpu(), {'x': mx.nd.array(single)}, args_grad={'x': mx.nd.zeros((2, 2))})
    assert exe.forward(is_train=True)[0].dtype == np.float16
    exe.backward([mx.nd.ones((2, 2), dtype='float16')])
    grad = exe.grad_dict['x']
    assert grad.dtype == np.float32 and grad.asnumpy().sum() == 4

def test_all_finite_and_accumulating_flag():
    ok, bad = mx.nd.ones((3,)), mx.nd.array([1, np.inf, 0])
    assert mx.nd.all_finite(ok).asnumpy().tolist() == [1.0]
    assert mx.nd.all_finite(bad).asnumpy().tolist() == [0.0]
    assert mx.nd.multi_all_finite(ok, bad, num_arrays=2).asnumpy().tolist() == [0.0]
    flag = mx.nd.ones((1,))
    mx.nd.multi_all_finite(ok, ok, num_arrays=2, init_output=False, out=flag)
    assert flag.asnumpy().tolist() == [1.0]
    mx.nd.multi_all_finite(bad, num_arrays=1, init_output=False, out=flag)
    mx.nd.multi_all_finite(ok, num_arrays=1, init_output=False, out=flag)
    assert flag.asnumpy().tolist() == [0.0]
