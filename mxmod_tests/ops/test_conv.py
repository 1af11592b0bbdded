"""Convolution, Deconvolution and Pooling: naive numpy references, adjointness, float64 gradient
checks, MXNet output-shape rules and frozen MXNet 1.9.1 results."""
import itertools
import math

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.ops.base import OpContext
from mxmod_tests.ops import nn_oracle
from mxmod_tests.ops.opcheck import check_forward, check_grad, make, run_forward

rng = np.random.RandomState(1)


@pytest.mark.parametrize('case', nn_oracle.case_names(('Convolution', 'Deconvolution', 'Pooling', 'UpSampling')))
def test_matches_mxnet(case):
    nn_oracle.run_case(case)


@pytest.mark.parametrize('case', nn_oracle.shape_names(('Convolution', 'Deconvolution', 'Pooling', 'UpSampling')))
def test_shape_inference_matches_mxnet(case):
    nn_oracle.shape_case(case)


# ---- naive references -------------------------------------------------------------------------
def naive_conv(x, w, b, stride, pad, dilate, groups):
    """Direct N-D grouped convolution by looping over output positions (test sizes only)."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    f, cg = w.shape[:2]
    k = w.shape[2:]
    out_sz = [(xp.shape[2 + i] - (1 + (k[i] - 1) * dilate[i])) // stride[i] + 1 for i in range(nd)]
    out = np.zeros((x.shape[0], f) + tuple(out_sz))
    fg = f // groups
    for pos in itertools.product(*[range(o) for o in out_sz]):
        idx = tuple(slice(pos[i] * stride[i], pos[i] * stride[i] + (k[i] - 1) * dilate[i] + 1, dilate[i])
                    for i in range(nd))
        for g in range(groups):
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + idx]
            wg = w[g * fg:(g + 1) * fg]
            out[(slice(None), slice(g * fg, (g + 1) * fg)) + pos] = np.tensordot(
                patch, wg, axes=(list(range(1, nd + 2)), list(range(1, nd + 2))))
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


def _conv_attrs(kernel, f, stride, pad, dilate, groups, no_bias=False):
    return {'kernel': str(tuple(kernel)), 'num_filter': str(f), 'stride': str(tuple(stride)),
            'pad': str(tuple(pad)), 'dilate': str(tuple(dilate)), 'num_group': str(groups),
            'no_bias': str(no_bias)}


CONV_CASES = [
    # x shape, F, kernel, stride, pad, dilate, groups
    ((2, 3, 7, 6), 4, (3, 3), (1, 1), (0, 0), (1, 1), 1),
    ((2, 4, 8, 7), 6, (3, 2), (2, 1), (1, 2), (2, 1), 2),
    ((1, 3, 9), 2, (4,), (3,), (2,), (1,), 1),
    ((1, 2, 4, 5, 4), 2, (2, 3, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2), 2),
]


@pytest.mark.parametrize('xs,f,kernel,stride,pad,dilate,groups', CONV_CASES)
def test_convolution_forward_and_grad(xs, f, kernel, stride, pad, dilate, groups):
    x = rng.randn(*xs)
    w = rng.randn(f, xs[1] // groups, *kernel)
    b = rng.randn(f)
    attrs = _conv_attrs(kernel, f, stride, pad, dilate, groups)
    check_forward('Convolution', attrs, [x, w, b], [naive_conv(x, w, b, stride, pad, dilate, groups)])
    if len(xs) <= 4:
        check_grad('Convolution', attrs, [x, w, b], rtol=1e-4, atol=1e-5)


CHANNELS_LAST_CASES = [
    # 2-D, one group (conv_cl.py): data gradient as a correlation of dy, by col2im (strides,
    # padding beyond the kernel, many filters), pointwise kernels
    ((2, 4, 9, 8), 4, (3, 3), (1, 1), (1, 1), (1, 1)),
    ((2, 6, 9, 8), 5, (3, 2), (1, 1), (2, 0), (1, 2)),
    ((2, 4, 9, 8), 4, (3, 3), (2, 2), (1, 1), (1, 1)),
    ((2, 4, 6, 7), 3, (1, 1), (2, 2), (0, 0), (1, 1)),
    ((2, 5, 6, 7), 3, (1, 1), (1, 1), (1, 0), (1, 1)),
    ((2, 4, 6, 7), 3, (1, 1), (1, 1), (0, 0), (1, 1)),
    ((2, 4, 8, 8), 9, (3, 3), (1, 1), (0, 0), (2, 2)),
    ((1, 4, 5, 4), 3, (2, 2), (1, 2), (2, 1), (1, 1)),
]


@pytest.mark.parametrize('xs,f,kernel,stride,pad,dilate', CHANNELS_LAST_CASES)
def test_convolution_channels_last_kernels(xs, f, kernel, stride, pad, dilate):
    x, w, b = rng.randn(*xs), rng.randn(f, xs[1], *kernel), rng.randn(f)
    attrs = _conv_attrs(kernel, f, stride, pad, dilate, 1)
    check_forward('Convolution', attrs, [x, w, b], [naive_conv(x, w, b, stride, pad, dilate, 1)])
    check_grad('Convolution', attrs, [x, w, b], rtol=1e-4, atol=1e-5)
    # the output is channels-last memory; a following convolution reads it without a copy
    op = make('Convolution', **attrs)
    y = op.forward(OpContext(np, mx.cpu(), is_train=True), [x, w, b], [])[0]
    assert y.transpose(0, 2, 3, 1).flags.c_contiguous
    x_cl = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    y2 = op.forward(OpContext(np, mx.cpu(), is_train=True), [x_cl, w, b], [])[0]
    np.testing.assert_array_equal(y, y2)


def test_convolution_grad_3d():
    x, w = rng.randn(1, 2, 3, 4, 3), rng.randn(2, 1, 2, 2, 2)
    check_grad('Convolution', _conv_attrs((2, 2, 2), 2, (1, 2, 1), (1, 0, 0), (1, 1, 1), 2, True), [x, w])


def test_convolution_nhwc_layout():
    x, w, b = rng.randn(2, 3, 6, 5), rng.randn(4, 3, 3, 3), rng.randn(4)
    want = naive_conv(x, w, b, (1, 1), (1, 1), (1, 1), 1).transpose(0, 2, 3, 1)
    attrs = dict(_conv_attrs((3, 3), 4, (1, 1), (1, 1), (1, 1), 1), layout='NHWC')
    check_forward('Convolution', attrs, [x.transpose(0, 2, 3, 1), w.transpose(0, 2, 3, 1), b], [want])
    op = make('Convolution', **attrs)
    ins, outs = op.infer_shape([(2, 6, 5, 3), None, None], [None])
    assert ins[1] == (4, 3, 3, 3) and outs == [(2, 6, 5, 4)]
    check_grad('Convolution', attrs, [rng.randn(1, 4, 3, 3), rng.randn(4, 3, 3, 3), b])


def test_convolution_partial_inference_and_errors():
    op = make('Convolution', kernel='(3, 3)', num_filter='8', num_group='2', pad='(1, 1)')
    assert op.list_arguments() == ['data', 'weight', 'bias']
    ins, outs = op.infer_shape([(0, 4, 0, 9), None, None], [(5, 8, 7, 0)])
    assert ins == [(5, 4, 7, 9), (8, 2, 3, 3), (8,)] and outs == [(5, 8, 7, 9)]
    with pytest.raises(MXNetError, match='divisible'):
        op.infer_shape([(1, 3, 5, 5), None, None], [None])
    with pytest.raises(MXNetError, match='exceeds'):
        make('Convolution', kernel=(5, 5), num_filter=1).infer_shape([(1, 1, 3, 3), None, None], [None])
    with pytest.raises(MXNetError):
        make('Convolution', kernel='(3, 3)', num_filter='8', stride='(1, 1, 1)')
    with pytest.raises(MXNetError, match='num_filter'):
        make('Convolution', kernel='(3, 3)')


def test_convolution_float32_and_string_attrs():
    op = make('Convolution', kernel='(3, 3)', num_filter='2', no_bias='True', cudnn_tune='off',
              workspace='512', cudnn_off='False')
    assert op.list_arguments() == ['data', 'weight']
    x, w = rng.randn(1, 2, 5, 5).astype(np.float32), rng.randn(2, 2, 3, 3).astype(np.float32)
    assert run_forward(op, [x, w])[0].dtype == np.float32



def test_convolution_pointwise_kernels():
    """1x1 kernels (no im2col/col2im) against the naive reference, with groups and stride."""
    x, b = rng.randn(3, 4, 5, 6), rng.randn(6)
    for groups, stride in ((1, (1, 1)), (2, (1, 1)), (2, (2, 2))):
        w = rng.randn(6, 4 // groups, 1, 1)
        attrs = _conv_attrs((1, 1), 6, stride, (0, 0), (1, 1), groups)
        check_forward('Convolution', attrs, [x, w, b], [naive_conv(x, w, b, stride, (0, 0), (1, 1), groups)])
        check_grad('Convolution', attrs, [x[:2, :, :3, :4], w, b])


def test_convolution_scratch_columns_never_leak():
    """Columns live in a reused buffer: results of earlier calls, of other sizes and of other
    threads stay intact and exact."""
    import threading
    cases = [(rng.randn(2, 3, 9, 8), rng.randn(4, 3, 3, 3)), (rng.randn(4, 5, 12, 11), rng.randn(6, 5, 3, 2)),
             (rng.randn(1, 2, 5, 5), rng.randn(3, 2, 2, 2))]
    results, errors = {}, []

    def work(tag):
        try:
            for rep in range(3):
                for i, (x, w) in enumerate(cases):
                    op = make('Convolution', kernel=w.shape[2:], num_filter=w.shape[0], no_bias=True)
                    octx = OpContext(np, mx.cpu(), is_train=True)
                    y = op.forward(octx, [x, w], [])[0]
                    dx, dw = op.backward(octx, [np.ones_like(y)], [x, w], [y], [])
                    results[(tag, rep, i)] = (y, dx, dw)
        except Exception as err:  # pylint: disable=broad-except
            errors.append(err)
    threads = [threading.Thread(target=work, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for (tag, rep, i), (y, dx, dw) in results.items():
        x, w = cases[i]
        np.testing.assert_allclose(y, naive_conv(x, w, None, (1, 1), (0, 0), (1, 1), 1), rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(y, results[(0, 0, i)][0])
        np.testing.assert_array_equal(dx, results[(0, 0, i)][1])
        np.testing.assert_array_equal(dw, results[(0, 0, i)][2])

# ---- Deconvolution ----------------------------------------------------------------------------
@pytest.mark.parametrize('xs,f,kernel,stride,pad,dilate,groups', CONV_CASES)
def test_deconvolution_is_adjoint_of_convolution(xs, f, kernel, stride, pad, dilate, groups):
    """<conv(x, w), y> == <x, deconv(y, w)> with the same weight tensor."""
    x = rng.randn(*xs)
    w = rng.randn(f, xs[1] // groups, *kernel)
    y_conv = naive_conv(x, w, None, stride, pad, dilate, groups)
    y = rng.randn(*y_conv.shape)
    attrs = _conv_attrs(kernel, xs[1], stride, pad, dilate, groups, no_bias=True)
    nd = len(kernel)
    # adj makes the deconvolution output exactly x's spatial size
    attrs['adj'] = str(tuple(xs[2 + i] + 2 * pad[i] - (1 + (kernel[i] - 1) * dilate[i])
                             - stride[i] * (y.shape[2 + i] - 1) for i in range(nd)))
    dx = run_forward(make('Deconvolution', **attrs), [y, w])[0]
    assert dx.shape == x.shape
    np.testing.assert_allclose(np.sum(y_conv * y), np.sum(x * dx), rtol=1e-10)


def test_deconvolution_grad_and_target_shape():
    attrs = {'kernel': '(3, 3)', 'num_filter': '4', 'num_group': '2', 'stride': '(2, 2)',
             'dilate': '(1, 2)', 'target_shape': '(8, 11)', 'no_bias': 'False'}
    op = make('Deconvolution', **attrs)
    ins, outs = op.infer_shape([(2, 2, 4, 4), None, None], [None])
    assert ins[1:] == [(2, 2, 3, 3), (4,)] and outs == [(2, 4, 8, 11)]
    x, w, b = rng.randn(2, 2, 4, 4), rng.randn(2, 2, 3, 3), rng.randn(4)
    assert run_forward(op, [x, w, b])[0].shape == (2, 4, 8, 11)
    check_grad('Deconvolution', attrs, [x, w, b])
    assert make('Deconvolution', kernel='(2,)', num_filter=1).list_arguments() == ['data', 'weight']
    with pytest.raises(MXNetError, match='adj'):
        make('Deconvolution', kernel='(3,)', num_filter=1, adj='(2,)', stride='(2,)').infer_shape(
            [(1, 1, 4), None], [None])


# ---- Pooling ----------------------------------------------------------------------------------
def naive_pool(x, kernel, stride, pad, kind, convention='valid', include_pad=True):
    """Direct 2-D pooling following MXNet's window clipping rules."""
    n, c, h, w = x.shape
    rnd = math.floor if convention == 'valid' else math.ceil
    oh = 1 + int(rnd((h + 2 * pad[0] - kernel[0]) / stride[0]))
    ow = 1 + int(rnd((w + 2 * pad[1] - kernel[1]) / stride[1]))
    out = np.zeros((n, c, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        hs, ws = i * stride[0] - pad[0], j * stride[1] - pad[1]
        he, we = min(hs + kernel[0], h + pad[0]), min(ws + kernel[1], w + pad[1])
        size = (he - hs) * (we - ws)
        hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
        win = x[:, :, hs:he, ws:we]
        if kind == 'max':
            out[:, :, i, j] = win.max(axis=(2, 3))
        elif kind == 'sum':
            out[:, :, i, j] = win.sum(axis=(2, 3))
        else:
            out[:, :, i, j] = win.sum(axis=(2, 3)) / (size if include_pad else (he - hs) * (we - ws))
    return out


POOL_CASES = [
    ('max', (2, 2), (2, 2), (0, 0), 'valid', True),
    ('max', (3, 3), (2, 2), (1, 1), 'full', True),
    ('avg', (3, 3), (2, 2), (1, 1), 'full', True),
    ('avg', (3, 2), (2, 3), (1, 1), 'valid', False),
    ('avg', (2, 2), (3, 3), (0, 0), 'full', True),
    ('sum', (3, 3), (1, 2), (1, 0), 'full', True),
]


@pytest.mark.parametrize('kind,kernel,stride,pad,conv,incl', POOL_CASES)
def test_pooling_forward_and_grad(kind, kernel, stride, pad, conv, incl):
    x = rng.randn(2, 2, 7, 8)
    attrs = {'kernel': str(kernel), 'stride': str(stride), 'pad': str(pad), 'pool_type': kind,
             'pooling_convention': conv, 'count_include_pad': str(incl)}
    check_forward('Pooling', attrs, [x], [naive_pool(x, kernel, stride, pad, kind, conv, incl)])
    check_grad('Pooling', attrs, [x])


def test_max_pooling_gradient_goes_to_first_maximum():
    x = np.array([[[[1.0, 3.0], [3.0, 0.0]]]])
    op = make('Pooling', kernel='(2, 2)', pool_type='max')
    y = run_forward(op, [x])
    dx = op.backward(OpContext(np, mx.cpu()), [np.ones((1, 1, 1, 1))], [x], y, [])[0]
    np.testing.assert_array_equal(dx, [[[[0.0, 1.0], [0.0, 0.0]]]])



def argmax_pool_grad(x, dy, kernel, stride, pad):
    """Max-pooling gradient via argmax over materialised windows (the first maximum of each
    window, the first NaN if it holds one): the reference for the offset-by-offset mask."""
    xpad = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad], constant_values=np.finfo(x.dtype).min)
    dxp = np.zeros_like(xpad)
    for i, j in itertools.product(range(dy.shape[2]), range(dy.shape[3])):
        hs, ws = i * stride[0], j * stride[1]
        win = xpad[:, :, hs:hs + kernel[0], ws:ws + kernel[1]].reshape(x.shape[0], x.shape[1], -1)
        first = win.argmax(axis=2)
        for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
            a, b = divmod(first[n, c], kernel[1])
            dxp[n, c, hs + a, ws + b] += dy[n, c, i, j]
    return dxp[:, :, pad[0]:pad[0] + x.shape[2], pad[1]:pad[1] + x.shape[3]]


@pytest.mark.parametrize('kernel,stride,pad', [((2, 2), (2, 2), (0, 0)), ((3, 3), (1, 1), (1, 1)),
                                               ((3, 2), (2, 1), (1, 0))])
def test_max_pooling_gradient_ties_and_nans_like_argmax(kernel, stride, pad):
    x = rng.randint(0, 3, size=(2, 3, 6, 7)).astype(np.float32)      # many tied maxima
    x[0, 0, 1, 1] = x[1, 2, 4, 3] = x[1, 2, 4, 5] = np.nan
    op = make('Pooling', kernel=kernel, stride=stride, pad=pad, pool_type='max')
    y = run_forward(op, [x])
    dy = rng.randn(*y[0].shape).astype(np.float32)
    dx = op.backward(OpContext(np, mx.cpu()), [dy], [x], y, [])[0]
    # overlapping windows add in another order here: equal up to float32 rounding
    np.testing.assert_allclose(dx, argmax_pool_grad(x, dy, kernel, stride, pad), rtol=1e-6, atol=1e-6)

def test_pooling_global_lp_1d_3d_and_layouts():
    x = rng.randn(2, 3, 5, 4)
    check_forward('Pooling', {'kernel': '(1, 1)', 'global_pool': 'True', 'pool_type': 'avg'}, [x],
                  [x.mean(axis=(2, 3), keepdims=True)])
    check_forward('Pooling', {'global_pool': True}, [x], [x.max(axis=(2, 3), keepdims=True)])
    xl = rng.rand(1, 2, 4, 4) + 0.5
    lp = np.sqrt((xl ** 2).reshape(1, 2, 2, 2, 2, 2).sum(axis=(3, 5)))
    check_forward('Pooling', {'kernel': '(2, 2)', 'stride': '(2, 2)', 'pool_type': 'lp', 'p_value': '2'},
                  [xl], [lp])
    check_grad('Pooling', {'kernel': '(2, 2)', 'pool_type': 'lp', 'p_value': 3}, [xl])
    x1 = rng.randn(2, 3, 9)
    check_forward('Pooling', {'kernel': '(3,)', 'stride': '(3,)', 'pool_type': 'sum'}, [x1],
                  [x1.reshape(2, 3, 3, 3).sum(axis=3)])
    same = run_forward(make('Pooling', kernel='(3,)', stride='(2,)', pad='(0, 0, 0)',
                            pooling_convention='same'), [x1])[0]
    assert same.shape == (2, 3, 5)
    np.testing.assert_allclose(same[..., -1], x1[..., 8])
    x3 = rng.randn(1, 2, 4, 4, 6)
    check_forward('Pooling', {'kernel': '(2, 2, 2)', 'stride': '(2, 2, 2)', 'pool_type': 'avg'}, [x3],
                  [x3.reshape(1, 2, 2, 2, 2, 2, 3, 2).mean(axis=(3, 5, 7))])
    xn = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    check_forward('Pooling', {'kernel': '(2, 2)', 'stride': '(2, 2)', 'layout': 'NHWC'}, [xn],
                  [naive_pool(x, (2, 2), (2, 2), (0, 0), 'max').transpose(0, 2, 3, 1)])
    check_grad('Pooling', {'kernel': '(2, 2)', 'layout': 'NHWC', 'pool_type': 'avg'}, [xn])


def test_max_pooling_hidden_workspace_output_like_mxnet():
    """MXNet 1.9.1 max pooling (NC* layouts) has a hidden 'workspace' output; JSON counts it."""
    op = make('Pooling', kernel='(2, 2)')
    assert op.list_outputs() == ['output', 'workspace'] and op.num_visible_outputs() == 1
    assert op.infer_shape([(1, 2, 4, 4)], [None, None]) == ([(1, 2, 4, 4)], [(1, 2, 3, 3)] * 2)
    assert len(run_forward(op, [rng.randn(1, 2, 4, 4)])) == 2
    for attrs in ({'pool_type': 'avg'}, {'layout': 'NHWC'}, {'global_pool': True, 'kernel': ()}):
        assert make('Pooling', **dict({'kernel': '(2, 2)'}, **attrs)).list_outputs() == ['output']


def test_pooling_shapes_and_errors():
    op = make('Pooling', kernel='(3, 3)', stride='(2, 2)', pooling_convention='full')
    assert op.infer_shape([(2, 3, 10, 12)], [None]) == ([(2, 3, 10, 12)], [(2, 3, 5, 6)])
    assert make('Pooling', kernel=(2, 2)).list_arguments() == ['data']
    with pytest.raises(MXNetError, match='exceeds'):
        make('Pooling', kernel=(5, 5)).infer_shape([(1, 1, 3, 3)], [None])
    with pytest.raises(MXNetError, match='p_value'):
        make('Pooling', kernel=(2, 2), pool_type='lp')
    with pytest.raises(MXNetError, match='pool_type'):
        make('Pooling', kernel=(2, 2), pool_type='median')


# ---- UpSampling -------------------------------------------------------------------------------
def test_upsampling_nearest_concat_sum_and_grad():
    a, b = rng.randn(2, 2, 2, 3), rng.randn(2, 1, 4, 6)
    attrs = {'scale': '2', 'sample_type': 'nearest', 'num_args': '2'}
    want = np.concatenate([a.repeat(2, axis=2).repeat(2, axis=3), b], axis=1)
    check_forward('UpSampling', attrs, [a, b], [want])
    check_grad('UpSampling', attrs, [a, b])
    c = rng.randn(2, 2, 1, 1)
    attrs = dict(attrs, scale='4', multi_input_mode='sum')
    check_forward('UpSampling', attrs, [rng.randn(2, 2, 1, 1) * 0 + c, a[:, :, :1, :1]],
                  [np.broadcast_to(c + a[:, :, :1, :1], (2, 2, 4, 4))])
    op = make('UpSampling', scale=2, sample_type='nearest', num_args=3)
    assert op.list_arguments() == ['arg0', 'arg1', 'arg2']
    assert op.infer_shape([(1, 2, 3, 3), (1, 1, 6, 6), (1, 4, 2, 2)], [None])[1] == [(1, 7, 6, 6)]
    with pytest.raises(MXNetError, match='divide'):
        op.infer_shape([(1, 2, 3, 3), (1, 1, 4, 4), (1, 4, 2, 2)], [None])


def test_upsampling_bilinear_is_grouped_deconvolution():
    x, w = rng.randn(1, 2, 3, 3), rng.randn(2, 1, 4, 4)
    attrs = {'scale': '2', 'sample_type': 'bilinear', 'num_args': '1', 'num_filter': '2'}
    deconv = run_forward(make('Deconvolution', kernel=(4, 4), stride=(2, 2), pad=(1, 1),
                              num_filter=2, num_group=2), [x, w])[0]
    check_forward('UpSampling', attrs, [x, w], [deconv])
    check_grad('UpSampling', attrs, [x, w])
    assert make('UpSampling', **attrs).list_arguments() == ['data', 'weight']


@pytest.mark.slow
def test_convolution_speed_smoke():
    x, w = rng.randn(32, 16, 32, 32).astype(np.float32), rng.randn(32, 16, 3, 3).astype(np.float32)
    op = make('Convolution', kernel=(3, 3), num_filter=32, pad=(1, 1), no_bias=True)
    out = run_forward(op, [x, w])[0]
    assert out.shape == (32, 32, 32, 32) and out.dtype == np.float32
