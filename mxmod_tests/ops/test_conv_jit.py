"""The compiled (numba) float32 convolution kernels against the float64 numpy path, which
test_conv.py checks against naive loops and central differences; and the numpy float32 path
(numba bypassed) against the same references, so that both stay exercised."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.ops import jit
from mxmod.ops.base import OpContext
from mxmod_tests.ops.opcheck import make
from mxmod_tests.ops.test_conv import naive_conv, _conv_attrs

pytest.importorskip('numba')
rng = np.random.RandomState(7)

CASES = [
    # x shape, F, kernel, stride, pad, dilate, no_bias
    ((2, 16, 10, 12), 16, (3, 3), (1, 1), (1, 1), (1, 1), True),       # Winograd, partial block
    ((2, 32, 6, 10), 48, (3, 3), (1, 1), (1, 1), (1, 1), False),       # Winograd, 48 filters
    ((2, 16, 9, 12), 16, (3, 3), (1, 1), (1, 1), (1, 1), True),        # odd height: direct
    ((3, 16, 32, 32), 32, (3, 3), (1, 1), (1, 1), (1, 1), False),      # 32 filters: 2x8 blocks
    ((2, 64, 8, 8), 64, (3, 3), (1, 1), (1, 1), (1, 1), True),
    ((2, 16, 17, 18), 32, (3, 3), (2, 2), (1, 1), (1, 1), True),       # strided, odd sizes
    ((2, 16, 16, 16), 32, (1, 1), (2, 2), (0, 0), (1, 1), True),       # strided 1x1 shortcut
    ((2, 48, 17, 17), 16, (3, 3), (2, 2), (1, 1), (1, 1), True),       # scatter: 32 + 16 channels
    ((2, 3, 9, 11), 16, (3, 3), (1, 1), (1, 1), (1, 1), False),        # 3 input channels
    ((2, 1, 28, 28), 20, (5, 5), (1, 1), (0, 0), (1, 1), False),       # LeNet: 20 filters
    ((2, 20, 12, 12), 50, (5, 5), (1, 1), (0, 0), (1, 1), False),      # 50 filters
    ((3, 5, 13, 7), 7, (3, 2), (2, 3), (2, 1), (2, 1), False),         # everything uneven
    ((2, 5, 13, 17), 33, (3, 3), (1, 1), (3, 1), (2, 2), False),       # dilation, pad > reach
    ((2, 9, 6, 6), 12, (1, 1), (1, 1), (0, 0), (1, 1), True),
    ((1, 4, 5, 4), 3, (2, 2), (1, 2), (2, 1), (1, 1), False),
    # data gradient as columns (_data_grad_gemm): one input channel, or output rows < 8 pixels
    ((3, 1, 11, 20), 24, (3, 20), (1, 1), (0, 0), (1, 1), False),      # text CNN: 1-pixel rows
    ((2, 1, 13, 9), 8, (3, 3), (2, 1), (1, 2), (2, 1), False),         # 1 channel, uneven
    ((2, 24, 7, 7), 16, (3, 3), (2, 2), (1, 1), (1, 1), True),         # 4-pixel rows, strided
    ((2, 3, 12, 5), 10, (4, 2), (1, 2), (0, 1), (1, 2), False),        # 2-pixel rows, dilated
]


@pytest.fixture(params=[True, False], ids=['numba', 'numpy'])
def compiled(request):
    previous = jit.set_enabled(request.param)
    yield request.param
    jit.set_enabled(previous)


def _forward_backward(attrs, x, w, b, dy, req=None):
    op = make('Convolution', **attrs)
    octx = OpContext(np, mx.cpu(), is_train=True)
    ins = [x, w] if b is None else [x, w, b]
    y = op.forward(octx, ins, [])[0]
    if dy is None:
        return y, None
    octx.need_grad = req
    return y, op.backward(octx, [dy], ins, [y], [])


@pytest.mark.parametrize('xs,f,kernel,stride,pad,dilate,no_bias', CASES)
def test_float32_kernels_match_float64(compiled, xs, f, kernel, stride, pad, dilate, no_bias):
    x = rng.randn(*xs)
    w = rng.randn(f, xs[1], *kernel)
    b = None if no_bias else rng.randn(f)
    attrs = _conv_attrs(kernel, f, stride, pad, dilate, 1, no_bias)
    y64, g64 = _forward_backward(attrs, x, w, b, None)
    np.testing.assert_allclose(y64, naive_conv(x, w, b, stride, pad, dilate, 1), rtol=1e-10,
                               atol=1e-10)
    dy = rng.randn(*y64.shape)
    _, g64 = _forward_backward(attrs, x, w, b, dy)
    f32 = [a.astype(np.float32) for a in (x, w) + (() if b is None else (b,))]
    y32, g32 = _forward_backward(attrs, f32[0], f32[1], f32[2] if b is not None else None,
                                 dy.astype(np.float32))
    assert y32.dtype == np.float32 and all(g.dtype == np.float32 for g in g32)
    for got, want in zip([y32] + list(g32), [y64] + list(g64)):
        scale = np.abs(want).max()
        np.testing.assert_allclose(got, want, rtol=0, atol=3e-6 * scale)
    # the kernels hand results on as NCHW-shaped views of channels-last memory
    assert y32.transpose(0, 2, 3, 1).flags.c_contiguous or not compiled
    assert g32[0].shape == x.shape and g32[1].shape == w.shape


@pytest.mark.parametrize('need', [[True, False, False], [False, True, True], [False, False, True]])
def test_partial_gradients(compiled, need):
    x = rng.randn(2, 8, 9, 9).astype(np.float32)
    w = rng.randn(16, 8, 3, 3).astype(np.float32)
    b = rng.randn(16).astype(np.float32)
    dy = rng.randn(2, 16, 5, 5).astype(np.float32)
    attrs = _conv_attrs((3, 3), 16, (2, 2), (1, 1), (1, 1), 1)
    _, full = _forward_backward(attrs, x, w, b, dy)
    _, part = _forward_backward(attrs, x, w, b, dy, need)
    for flag, got, want in zip(need, part, full):
        if flag:
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        else:
            assert got is None


def test_channels_last_input_and_nhwc_layout(compiled):
    """Inputs in either memory order give the same values; NHWC layout through the kernels."""
    x = rng.randn(2, 16, 8, 8).astype(np.float32)
    w = rng.randn(16, 16, 3, 3).astype(np.float32)
    attrs = _conv_attrs((3, 3), 16, (1, 1), (1, 1), (1, 1), 1, True)
    y1, _ = _forward_backward(attrs, x, w, None, None)
    x_cl = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    y2, _ = _forward_backward(attrs, x_cl, w, None, None)
    np.testing.assert_array_equal(y1, y2)
    nhwc = dict(attrs, layout='NHWC')
    y3, _ = _forward_backward(nhwc, np.ascontiguousarray(x.transpose(0, 2, 3, 1)),
                              np.ascontiguousarray(w.transpose(0, 2, 3, 1)), None, None)
    np.testing.assert_allclose(y3.transpose(0, 3, 1, 2), y1, rtol=1e-6, atol=1e-5)


def test_executor_grad_req_add(compiled):
    """grad_req='add' accumulates the kernels' gradients over two backward passes."""
    data = mx.sym.Variable('data')
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=16, pad=(1, 1), stride=(2, 2),
                             name='c')
    shapes = {'data': (2, 16, 9, 9)}
    args = {'data': mx.nd.array(rng.randn(2, 16, 9, 9)), 'c_weight': mx.nd.array(rng.randn(16, 16, 3, 3)),
            'c_bias': mx.nd.array(rng.randn(16))}
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    exe = net.bind(mx.cpu(), args=args, args_grad=grads, grad_req='add')
    head = mx.nd.array(rng.randn(*exe.forward(is_train=True)[0].shape))
    exe.backward([head])
    once = {k: v.asnumpy().copy() for k, v in grads.items()}
    exe.forward(is_train=True)
    exe.backward([head])
    assert shapes['data'] == exe.arg_dict['data'].shape
    for k, v in grads.items():
        np.testing.assert_allclose(v.asnumpy(), 2 * once[k], rtol=1e-5, atol=1e-5)


def test_nan_propagates(compiled):
    x = np.ones((1, 4, 6, 6), np.float32)
    x[0, 1, 2, 3] = np.nan
    w = np.ones((16, 4, 3, 3), np.float32)
    y, _ = _forward_backward(_conv_attrs((3, 3), 16, (1, 1), (1, 1), (1, 1), 1, True), x, w,
                             None, None)
    bad = np.isnan(y[0, 0])
    assert bad[1:4, 2:5].all() and bad.sum() == 9


def test_results_never_share_scratch_memory(compiled):
    """Kernels work in reused scratch buffers; no result may be one of them (an unpadded strided
    1x1 convolution's data gradient once was), so results of earlier calls stay intact."""
    cases = [((2, 16, 8, 8), 16, (1, 1), (2, 2), (0, 0)), ((2, 16, 8, 8), 16, (3, 3), (2, 2), (1, 1)),
             ((2, 16, 8, 8), 16, (1, 1), (1, 1), (0, 0)), ((2, 16, 8, 8), 16, (3, 3), (1, 1), (0, 0))]
    results = []
    for xs, f, kernel, stride, pad in cases * 2:
        x = np.random.RandomState(len(results)).randn(*xs).astype(np.float32)
        w = np.random.RandomState(1).randn(f, xs[1], *kernel).astype(np.float32)
        attrs = _conv_attrs(kernel, f, stride, pad, (1, 1), 1, True)
        y, _ = _forward_backward(attrs, x, w, None, None)
        dy = np.ones_like(y)
        y, grads = _forward_backward(attrs, x, w, None, dy)
        results.append((x, w, attrs, dy, [a.copy() for a in [y] + list(grads)], [y] + list(grads)))
    for x, w, attrs, dy, copies, arrays in results:
        for c, a in zip(copies, arrays):
            np.testing.assert_array_equal(a, c)
        _, again = _forward_backward(attrs, x, w, None, dy)
        for c, a in zip(copies[1:], again):
            np.testing.assert_array_equal(a, c)
