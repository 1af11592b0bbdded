"""contrib DeformableConvolution (v1) and ModulatedDeformableConvolution (v2): forward against a
direct loop over taps with MXNet 1.9.1's CPU sampling rules, gradients against central
differences (offsets kept away from the grid lines, where the sampling is not differentiable)."""
import math

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad


@pytest.fixture(autouse=True)
def _fresh_names():
    """Symbols made here get their own name counters (later tests expect fresh ones)."""
    with mx.name.NameManager():
        yield

RNG = np.random.RandomState(3)


def _bilinear_v1(img, h, w):
    height, width = img.shape
    if not (0 <= h < height and 0 <= w < width):
        return 0.0
    hl, wl = math.floor(h), math.floor(w)
    if hl >= height - 1:
        hh, h = height - 1, float(hl)
    else:
        hh = hl + 1
    if wl >= width - 1:
        wh, w = width - 1, float(wl)
    else:
        wh = wl + 1
    lh, lw = h - hl, w - wl
    return ((1 - lh) * (1 - lw) * img[hl, wl] + (1 - lh) * lw * img[hl, wh]
            + lh * (1 - lw) * img[hh, wl] + lh * lw * img[hh, wh])


def _bilinear_v2(img, h, w):
    height, width = img.shape
    if not (-1 < h < height and -1 < w < width):
        return 0.0
    hl, wl = math.floor(h), math.floor(w)
    lh, lw = h - hl, w - wl

    def at(r, c):
        return img[r, c] if 0 <= r < height and 0 <= c < width else 0.0
    return ((1 - lh) * (1 - lw) * at(hl, wl) + (1 - lh) * lw * at(hl, wl + 1)
            + lh * (1 - lw) * at(hl + 1, wl) + lh * lw * at(hl + 1, wl + 1))


def _reference(x, offset, mask, weight, bias, stride, pad, dilate, dg, ng):
    n, c, height, width = x.shape
    f, _, kh, kw = weight.shape
    oh, ow = offset.shape[2:]
    cg, cng = c // dg, c // ng
    out = np.zeros((n, f, oh, ow))
    for b in range(n):
        cols = np.zeros((c, kh, kw, oh, ow))
        for ch in range(c):
            g = ch // cg
            for i in range(kh):
                for j in range(kw):
                    k = i * kw + j
                    for y in range(oh):
                        for z in range(ow):
                            base = g * 2 * kh * kw + 2 * k
                            h = y * stride[0] - pad[0] + i * dilate[0] + offset[b, base, y, z]
                            w = z * stride[1] - pad[1] + j * dilate[1] + offset[b, base + 1, y, z]
                            if mask is None:
                                cols[ch, i, j, y, z] = _bilinear_v1(x[b, ch], h, w)
                            else:
                                cols[ch, i, j, y, z] = _bilinear_v2(x[b, ch], h, w) * \
                                    mask[b, g * kh * kw + k, y, z]
        for fo in range(f):
            grp = fo // (f // ng)
            out[b, fo] = np.einsum('cijyz,cij->yz', cols[grp * cng:(grp + 1) * cng], weight[fo])
        out[b] += bias[:, None, None]
    return out


def _case(modulated, n, c, h, w, dg, ng, stride, pad, dilate, spread=3.0):
    oh = (h + 2 * pad[0] - (2 * dilate[0] + 1)) // stride[0] + 1
    ow = (w + 2 * pad[1] - (2 * dilate[1] + 1)) // stride[1] + 1
    x = RNG.rand(n, c, h, w)
    offset = (RNG.rand(n, dg * 18, oh, ow) - 0.5) * spread
    frac = offset - np.floor(offset)                    # away from the grid lines
    offset = np.floor(offset) + np.clip(frac, 0.05, 0.95)
    mask = RNG.rand(n, dg * 9, oh, ow) if modulated else None
    weight = RNG.normal(0, 0.5, (4, c // ng, 3, 3))
    bias = RNG.rand(4)
    return x, offset, mask, weight, bias


CASES = [
    (1, 4, 5, 6, 1, 1, (1, 1), (1, 1), (1, 1)),
    (2, 4, 5, 5, 2, 2, (1, 1), (2, 2), (2, 2)),
    (1, 2, 6, 5, 1, 1, (2, 2), (0, 0), (1, 1)),
]


@pytest.mark.parametrize('modulated', [False, True])
@pytest.mark.parametrize('case', CASES)
def test_forward_matches_the_loop_reference(modulated, case):
    n, c, h, w, dg, ng, stride, pad, dilate = case
    x, offset, mask, weight, bias = _case(modulated, n, c, h, w, dg, ng, stride, pad, dilate)
    want = _reference(x, offset, mask, weight, bias, stride, pad, dilate, dg, ng)
    name = '_contrib_ModulatedDeformableConvolution' if modulated else \
        '_contrib_DeformableConvolution'
    inputs = [x, offset] + ([mask] if modulated else []) + [weight, bias]
    check_forward(name, {'kernel': (3, 3), 'num_filter': 4, 'num_group': ng,
                         'num_deformable_group': dg, 'stride': stride, 'pad': pad,
                         'dilate': dilate}, inputs, [want], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('modulated', [False, True])
@pytest.mark.parametrize('case', CASES[:2])
def test_gradients_match_finite_differences(modulated, case):
    n, c, h, w, dg, ng, stride, pad, dilate = case
    x, offset, mask, weight, bias = _case(modulated, n, c, h, w, dg, ng, stride, pad, dilate)
    name = '_contrib_ModulatedDeformableConvolution' if modulated else \
        '_contrib_DeformableConvolution'
    inputs = [x, offset] + ([mask] if modulated else []) + [weight, bias]
    check_grad(name, {'kernel': (3, 3), 'num_filter': 4, 'num_group': ng,
                      'num_deformable_group': dg, 'stride': stride, 'pad': pad,
                      'dilate': dilate}, inputs, eps=1e-6, rtol=1e-5, atol=1e-7)


def test_zero_offsets_are_an_ordinary_convolution():
    x = RNG.rand(2, 3, 6, 6)
    weight, bias = RNG.normal(size=(5, 3, 3, 3)), RNG.rand(5)
    offset = np.zeros((2, 18, 6, 6))
    got = mx.nd.contrib.DeformableConvolution(
        mx.nd.array(x), mx.nd.array(offset), mx.nd.array(weight), mx.nd.array(bias),
        kernel=(3, 3), pad=(1, 1), num_filter=5)
    want = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(weight), mx.nd.array(bias),
                             kernel=(3, 3), pad=(1, 1), num_filter=5)
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-5)


def test_symbol_arguments_and_shapes():
    with mx.name.NameManager():
        sym = mx.sym.contrib.ModulatedDeformableConvolution(
            mx.sym.var('data'), mx.sym.var('offset'), mx.sym.var('mask'), kernel=(3, 3),
            num_filter=8, pad=(1, 1), num_deformable_group=2)
    assert sym.list_arguments() == ['data', 'offset', 'mask',
                                    'modulateddeformableconvolution0_weight',
                                    'modulateddeformableconvolution0_bias']
    args, outs, _ = sym.infer_shape(data=(2, 4, 5, 6), offset=(2, 36, 5, 6), mask=(2, 18, 5, 6))
    assert args == [(2, 4, 5, 6), (2, 36, 5, 6), (2, 18, 5, 6), (8, 4, 3, 3), (8,)]
    assert outs == [(2, 8, 5, 6)]
    with pytest.raises(MXNetError, match='offset'):    # as MXNet: offset is not inferred
        sym.infer_shape(data=(2, 4, 5, 6))
    nob = mx.sym.contrib.DeformableConvolution(mx.sym.var('d'), mx.sym.var('o'), kernel=(3, 3),
                                               num_filter=2, no_bias=True)
    assert len(nob.list_arguments()) == 3


def test_bad_offset_shape_is_refused():
    with pytest.raises(MXNetError, match='offset must (have shape|be a 4-D map)|shape inconsistent for offset'):
        mx.nd.contrib.DeformableConvolution(mx.nd.ones((1, 2, 5, 5)), mx.nd.ones((1, 9, 3, 3)),
                                            mx.nd.ones((2, 2, 3, 3)), mx.nd.ones((2,)),
                                            kernel=(3, 3), num_filter=2)
