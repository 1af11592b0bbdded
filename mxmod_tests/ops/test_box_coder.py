"""box_encode / box_decode (contrib) against a per-box numpy reference, the oracle's values for a
hand-made case, shapes/dtypes through symbols, zero gradients, and bad input; gradientmultiplier
(identity forward, scaled backward) against finite differences; round / rint ties as MXNet
rounds them and the straight-through estimators round_ste / sign_ste."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad

RNG = np.random.RandomState(5)


def corner(*shape):
    lo = RNG.uniform(0, 1, shape + (2,))
    return np.concatenate([lo, lo + RNG.uniform(0.2, 1.5, shape + (2,))], axis=-1)


def encode_ref(samples, matches, anchors, refs, means, stds):
    out = np.zeros(anchors.shape)
    mask = np.zeros(anchors.shape)
    for b in range(anchors.shape[0]):
        for i in range(anchors.shape[1]):
            if samples[b, i] <= 0.5:
                continue
            a, r = anchors[b, i], refs[b, int(matches[b, i])]
            aw, ah, rw, rh = a[2] - a[0], a[3] - a[1], r[2] - r[0], r[3] - r[1]
            ax, ay, rx, ry = a[0] + aw / 2, a[1] + ah / 2, r[0] + rw / 2, r[1] + rh / 2
            raw = np.array([(rx - ax) / aw, (ry - ay) / ah, np.log(rw / aw), np.log(rh / ah)])
            out[b, i] = (raw - means) / stds
            mask[b, i] = 1
    return out, mask


def decode_ref(data, anchors, stds, clip, fmt):
    out = np.zeros(data.shape)
    for b in range(data.shape[0]):
        for i in range(data.shape[1]):
            a = anchors[0, i]
            if fmt == 'corner':
                aw, ah = a[2] - a[0], a[3] - a[1]
                ax, ay = a[0] + aw / 2, a[1] + ah / 2
            else:
                ax, ay, aw, ah = a
            d = data[b, i] * stds
            dw, dh = (min(d[2], clip), min(d[3], clip)) if clip > 0 else (d[2], d[3])
            x, y = ax + d[0] * aw, ay + d[1] * ah
            w, h = np.exp(dw) * aw / 2, np.exp(dh) * ah / 2
            out[b, i] = [x - w, y - h, x + w, y + h]
    return out


def test_box_encode_matches_reference():
    samples = RNG.choice([-1.0, 0.0, 1.0], size=(3, 8))
    matches = RNG.randint(0, 5, size=(3, 8)).astype(np.float64)
    matches[samples < 0.5] = -1          # ignored where the sample is not positive
    anchors, refs = corner(3, 8), corner(3, 5)
    means, stds = np.array([0.1, -0.2, 0.0, 0.3]), np.array([0.1, 0.1, 0.2, 0.2])
    want = encode_ref(samples, matches, anchors, refs, means, stds)
    check_forward('_contrib_box_encode', {}, [samples, matches, anchors, refs, means, stds],
                  list(want), rtol=1e-10, atol=1e-12)
    for dtype in ('float32', 'float16'):
        args = [mx.nd.array(x, dtype=dtype) for x in
                (samples, matches, anchors, refs, means, stds)]
        target, mask = mx.nd.contrib.box_encode(*args)
        assert target.dtype == np.dtype(dtype) and mask.dtype == np.dtype(dtype)
        tol = 1e-5 if dtype == 'float32' else 2e-2
        np.testing.assert_allclose(target.asnumpy(), want[0], rtol=tol, atol=tol * 10)
        np.testing.assert_array_equal(mask.asnumpy(), want[1])


def test_box_encode_oracle_case():
    # MXNet's own example: identical anchors and references give zero targets
    anchors = mx.nd.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]).reshape((1, -1, 4))
    target, mask = mx.nd.contrib.box_encode(
        mx.nd.array([[0, 1]]), mx.nd.array([[0, 1]]), anchors, anchors.copy(),
        mx.nd.array([0.0, 0.0, 0.0, 0.0]), mx.nd.array([0.1, 0.1, 0.2, 0.2]))
    np.testing.assert_allclose(target.asnumpy(), np.zeros((1, 2, 4)), atol=1e-6)
    np.testing.assert_array_equal(mask.asnumpy(), [[[0] * 4, [1] * 4]])


@pytest.mark.parametrize('fmt', ['center', 'corner'])
@pytest.mark.parametrize('clip', [-1.0, 0.25])
def test_box_decode_matches_reference(fmt, clip):
    data = RNG.normal(0, 1, (2, 6, 4))
    anchors = corner(1, 6)
    stds = np.array([0.1, 0.2, 0.3, 0.4])
    attrs = dict(std0=0.1, std1=0.2, std2=0.3, std3=0.4, clip=clip, format=fmt)
    want = decode_ref(data, anchors, stds, clip, fmt)
    check_forward('_contrib_box_decode', attrs, [data, anchors], [want], rtol=1e-10, atol=1e-12)
    got = mx.nd.contrib.box_decode(mx.nd.array(data), mx.nd.array(anchors), **attrs)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_box_decode_oracle_values():
    # values printed by MXNet 1.9.1 for this call (its unit test's case)
    data = mx.nd.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]).reshape((1, -1, 4))
    got = mx.nd.contrib.box_decode(data, data.copy(), .1, .1, .2, .2)
    np.testing.assert_allclose(got.asnumpy(), [[[-0.0562755, -0.00865743, 0.26227552, 0.42465743],
                                                [0.13240421, 0.17859563, 0.93759584, 1.1174043]]],
                               rtol=1e-6, atol=1e-7)


def test_box_coder_symbols_and_zero_gradients():
    sym = mx.sym.contrib.box_encode(*[mx.sym.var(n) for n in ('s', 'm', 'a', 'r', 'mean', 'std')])
    assert sym.list_outputs() == ['box_encode0_output0', 'box_encode0_output1']
    args, outs, _ = sym.infer_shape(s=(2, 3), m=(2, 3), a=(2, 3, 4), r=(2, 5, 4))
    assert args == [(2, 3), (2, 3), (2, 3, 4), (2, 5, 4), (4,), (4,)]
    assert outs == [(2, 3, 4), (2, 3, 4)]
    dec = mx.sym.contrib.box_decode(mx.sym.var('d'), mx.sym.var('a'))
    assert dec.list_arguments() == ['d', 'a']
    assert dec.infer_shape(d=(2, 3, 4), a=(1, 3, 4))[1] == [(2, 3, 4)]
    data = mx.nd.array(RNG.normal(size=(1, 3, 4)))
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.box_decode(data, mx.nd.array(corner(1, 3)))
    out.backward()
    np.testing.assert_array_equal(data.grad.asnumpy(), np.zeros((1, 3, 4)))


def test_box_coder_bad_input():
    with pytest.raises(MXNetError, match='anchors'):
        mx.nd.contrib.box_decode(mx.nd.zeros((2, 3, 4)), mx.nd.zeros((2, 3, 4)))
    with pytest.raises(MXNetError, match='data'):
        mx.nd.contrib.box_decode(mx.nd.zeros((3, 4)), mx.nd.zeros((1, 3, 4)))
    with pytest.raises(MXNetError, match='samples'):
        mx.nd.contrib.box_encode(mx.nd.zeros((1, 2, 1)), mx.nd.zeros((1, 2)),
                                 mx.nd.zeros((1, 2, 4)), mx.nd.zeros((1, 2, 4)),
                                 mx.nd.zeros(4), mx.nd.ones(4))
    with pytest.raises(MXNetError, match='matches'):
        mx.nd.contrib.box_encode(mx.nd.ones((1, 2)), mx.nd.array([[0, 7]]),
                                 mx.nd.zeros((1, 2, 4)), mx.nd.zeros((1, 2, 4)),
                                 mx.nd.zeros(4), mx.nd.ones(4))
    with pytest.raises(MXNetError):
        mx.nd.contrib.box_decode(mx.nd.zeros((1, 3, 4)), mx.nd.zeros((1, 3, 4), dtype='float64'))


@pytest.mark.parametrize('scalar', [0.5, -1.25])
def test_gradientmultiplier(scalar):
    x = RNG.normal(size=(3, 4))
    check_forward('_contrib_gradientmultiplier', {'scalar': scalar}, [x], [x])
    # backward = scalar * head: the finite differences of the identity, times the scalar
    xa = mx.nd.array(x)
    xa.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.gradientmultiplier(mx.nd.contrib.quadratic(xa, a=0.7, b=-0.3, c=1),
                                             scalar=scalar)
    head = RNG.normal(size=x.shape)
    y.backward(mx.nd.array(head))
    np.testing.assert_allclose(y.asnumpy(), 0.7 * x * x - 0.3 * x + 1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(xa.grad.asnumpy(), scalar * head * (1.4 * x - 0.3),
                               rtol=1e-5, atol=1e-5)
    check_grad('_contrib_gradientmultiplier', {'scalar': 1.0}, [x])


def test_gradientmultiplier_symbol_and_sparse():
    sym = mx.sym.contrib.gradientmultiplier(mx.sym.var('x'), scalar=0.5)
    assert sym.attr_dict()[sym.name] == {'scalar': '0.5'}
    for stype in ('csr', 'row_sparse'):
        sp = mx.nd.array([[0, 1], [0, 0]]).tostype(stype)
        out = mx.nd.contrib.gradientmultiplier(sp, scalar=2)
        assert out.stype == stype
        np.testing.assert_array_equal(out.asnumpy(), [[0, 1], [0, 0]])
    ints = mx.nd.contrib.gradientmultiplier(mx.nd.array([1, 2], dtype='int32'), scalar=1.5)
    assert ints.dtype == np.int32


def test_round_and_rint_ties_as_mxnet():
    # MXNet 1.9.1's values: round sends halves away from zero (C round), rint to the floor
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.4, 0.6, 8388609.0], np.float32)
    np.testing.assert_array_equal(mx.nd.round(mx.nd.array(x)).asnumpy(),
                                  [-3, -2, -1, 1, 2, 3, 4, -0.0, 1, 8388609])
    np.testing.assert_array_equal(mx.nd.rint(mx.nd.array(x)).asnumpy(),
                                  [-3, -2, -1, 0, 1, 2, 3, -0.0, 1, 8388609])
    for dtype in ('float64', 'float16'):
        got = mx.nd.round(mx.nd.array(x[:7], dtype=dtype)).asnumpy()
        np.testing.assert_array_equal(got, np.sign(x[:7]) * np.floor(np.abs(x[:7]) + 0.5))
    ints = mx.nd.array([3, -4], dtype='int32')
    np.testing.assert_array_equal(mx.nd.round(ints).asnumpy(), [3, -4])
    # random values: the reference formulas
    y = RNG.uniform(-20, 20, 1000).round(1).astype(np.float32)
    np.testing.assert_array_equal(mx.nd.round(mx.nd.array(y)).asnumpy(),
                                  np.sign(y) * np.floor(np.abs(y) + 0.5))
    low, high = np.floor(y), np.ceil(y)
    np.testing.assert_array_equal(mx.nd.rint(mx.nd.array(y)).asnumpy(),
                                  np.where(y - low <= high - y, low, high))


@pytest.mark.parametrize('name, ref', [
    ('round_ste', lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)), ('sign_ste', np.sign)])
def test_straight_through_estimators(name, ref):
    x = np.array([-1.5, 1.5, -1.9, 1.9, 2.7, 0.0, -0.2], np.float32)
    xa = mx.nd.array(x)
    xa.attach_grad()
    head = RNG.normal(size=x.shape)
    with mx.autograd.record():
        y = getattr(mx.nd.contrib, name)(xa * 2)
    y.backward(mx.nd.array(head))
    np.testing.assert_array_equal(y.asnumpy(), ref(x * 2))
    np.testing.assert_allclose(xa.grad.asnumpy(), 2 * head, rtol=1e-6)     # identity gradient
    sp = getattr(mx.nd.contrib, name)(mx.nd.array([[0, 1.6], [0, 0]]).tostype('csr'))
    assert sp.stype == 'csr'
    sym = getattr(mx.sym.contrib, name)(mx.sym.var('x'))
    exe = sym.bind(mx.cpu(), {'x': mx.nd.array(x)}, args_grad={'x': mx.nd.zeros(7)})
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones(7))
    np.testing.assert_array_equal(exe.grad_dict['x'].asnumpy(), np.ones(7))
