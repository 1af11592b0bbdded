"""The compiled kernels split over threads (mxmod/ops/kpool.py): forward and gradients of
convolution and BatchNorm (with and without the fused relu) are bit-identical for 1, 2 and 3
threads and agree with the numpy path; weight gradients are the partial gradients of fixed image
groups summed in group order; a residual network trains to bit-identical parameters;
the pool passes errors on, serves two calling threads, and works in a forked child."""
import os
import threading

import numpy as np
import pytest

import mxmod as mx
from mxmod.ops import jit, kpool
from mxmod.ops.base import OpContext
from mxmod_tests.ops.opcheck import make
from mxmod_tests.ops.test_conv import _conv_attrs
from mxmod_tests.ops.test_jit_training import _train

pytest.importorskip('numba')
rng = np.random.RandomState(11)


@pytest.fixture
def threads(monkeypatch):
    """set(n): the kernels split their work into up to n pieces, however small."""
    monkeypatch.setattr(kpool, 'MIN_WORK', 1)
    state = {'n': 1}
    monkeypatch.setattr(kpool, 'threads', lambda: state['n'])
    run = kpool.run

    def counted(fn, pieces):
        state['split'] = state.get('split', 0) + (len(pieces) > 1)
        return run(fn, pieces)
    monkeypatch.setattr(kpool, 'run', counted)

    def choose(count):
        """Use ``count`` threads from now on; returns the kernel calls split so far."""
        state['n'] = count
        return state.get('split', 0)
    return choose


CONV_CASES = [
    # x shape, F, kernel, stride, pad, dilate
    ((5, 16, 10, 12), 16, (3, 3), (1, 1), (1, 1), (1, 1)),       # Winograd, 16 filters
    ((3, 32, 6, 10), 48, (3, 3), (1, 1), (1, 1), (1, 1)),        # Winograd, 48 filters
    ((4, 16, 9, 12), 16, (3, 3), (1, 1), (1, 1), (1, 1)),        # direct forward, stride 1
    ((5, 16, 17, 18), 32, (3, 3), (2, 2), (1, 1), (1, 1)),       # strided: scatter, 4-ch. blocks
    ((3, 16, 16, 16), 32, (1, 1), (2, 2), (0, 0), (1, 1)),       # 1x1 shortcut: merged taps
    ((4, 3, 9, 11), 16, (3, 3), (1, 1), (1, 1), (1, 1)),         # 3 channels: taps split
    ((3, 20, 12, 12), 50, (5, 5), (1, 1), (0, 0), (1, 1)),       # LeNet's second layer
    ((3, 24, 13, 7), 7, (3, 2), (2, 3), (2, 1), (2, 1)),         # uneven, 8-channel blocks
]


def _conv(attrs, x, w, dy):
    op = make('Convolution', **attrs)
    octx = OpContext(np, mx.cpu(), is_train=True)
    y = op.forward(octx, [x, w], [])[0]
    octx.need_grad = [True, True]
    grads = op.backward(octx, [dy], [x, w], [y], [])
    return [np.array(a) for a in [y] + list(grads)]


@pytest.mark.parametrize('xs,f,kernel,stride,pad,dilate', CONV_CASES)
def test_convolution_bit_identical_over_threads(threads, xs, f, kernel, stride, pad, dilate):
    attrs = _conv_attrs(kernel, f, stride, pad, dilate, 1, True)
    x = rng.randn(*xs).astype(np.float32)
    w = rng.randn(f, xs[1], *kernel).astype(np.float32)
    threads(1)
    dy = rng.randn(*_conv_forward_shape(attrs, x, w)).astype(np.float32)
    one = _conv(attrs, x, w, dy)
    assert threads(2) == 0
    for count in (2, 3):
        threads(count)
        for got, want in zip(_conv(attrs, x, w, dy), one):
            assert got.dtype == np.float32
            np.testing.assert_array_equal(got, want)
    assert threads(1) >= 6         # forward, data and weight gradients, on 2 and 3 threads
    previous = jit.set_enabled(False)
    try:
        reference = _conv(attrs, x, w, dy)
    finally:
        jit.set_enabled(previous)
    for got, want in zip(one, reference):
        np.testing.assert_allclose(got, want, rtol=0, atol=3e-5 * np.abs(want).max())


@pytest.mark.parametrize('groups', [2, 4])
@pytest.mark.parametrize('case', [3, 4, 5, 7])     # strided, 1x1 merged, 3 channels, uneven
def test_weight_gradient_sums_image_groups_in_order(threads, monkeypatch, case, groups):
    """The weight gradient of a batch is the float32 sum, in group order, of the gradients of its
    image groups (here, with every group worth a piece, GROUPS groups of one image each),
    whatever the thread count. (Winograd's partials are sums in the transformed domain, mapped
    back to the taps once: the convolution test above covers its bit-identity over threads.)"""
    from mxmod.ops import conv_jit
    monkeypatch.setattr(conv_jit, 'GROUPS', groups)
    xs, f, kernel, stride, pad, dilate = CONV_CASES[case]
    attrs = _conv_attrs(kernel, f, stride, pad, dilate, 1, True)
    n = conv_jit.GROUPS
    x = rng.randn(n, *xs[1:]).astype(np.float32)
    w = rng.randn(f, xs[1], *kernel).astype(np.float32)
    threads(1)
    dy = rng.randn(*_conv_forward_shape(attrs, x, w)).astype(np.float32)
    want = _conv(attrs, x[:1], w, dy[:1])[2]
    for k in range(1, n):
        want = want + _conv(attrs, x[k:k + 1], w, dy[k:k + 1])[2]
    assert conv_jit._image_groups(n, 1 << 40) == list(range(n + 1))
    for count in (1, 2, 3):
        threads(count)
        np.testing.assert_array_equal(_conv(attrs, x, w, dy)[2], want)
    # the boundaries depend on the batch alone; a group is worth at least kpool.MIN_WORK
    assert conv_jit._image_groups(64, 1 << 40) == list(range(0, 65, 64 // groups))
    assert conv_jit._image_groups(64, 1) == [0, 64]


def _conv_forward_shape(attrs, x, w):
    op = make('Convolution', **attrs)
    return op.forward(OpContext(np, mx.cpu(), is_train=False), [x, w], [])[0].shape


def _batchnorm(x, dy, gamma, beta, relu):
    from mxmod.ops import bn_jit
    out, mean, invstd = bn_jit.train_forward(x, gamma, beta, 1e-5, 1, relu=relu)
    grads = bn_jit.train_backward(x, dy, gamma, mean, invstd, 1, False, beta if relu else None)
    return [np.array(a) for a in (out, mean, invstd) + tuple(grads)]


@pytest.mark.parametrize('shape', [(5, 16, 31, 9), (4, 32, 16, 12), (3, 48, 23, 5), (2, 16, 3, 3),
                                   (5, 3, 20, 30)])
@pytest.mark.parametrize('relu', [False, True])
@pytest.mark.parametrize('order', ['channels_last', 'nchw'])
def test_batchnorm_bit_identical_over_threads(threads, shape, relu, order):
    n, c, h, w = shape
    # channels-last memory, as the convolutions hand it on (else NCHW, as the data); a mean
    # far from zero
    x = (rng.randn(n, h, w, c) * 2 + 5).astype(np.float32).transpose(0, 3, 1, 2)
    dy = rng.randn(n, h, w, c).astype(np.float32).transpose(0, 3, 1, 2)
    if order == 'nchw':
        x, dy = np.ascontiguousarray(x), np.ascontiguousarray(dy)
    gamma = (rng.rand(c) + 0.5).astype(np.float32)
    beta = rng.randn(c).astype(np.float32) * 2
    threads(1)
    one = _batchnorm(x, dy, gamma, beta, relu)
    assert threads(1) == 0
    for count in (2, 3):
        threads(count)
        for got, want in zip(_batchnorm(x, dy, gamma, beta, relu), one):
            np.testing.assert_array_equal(got, want)
    # threads share blocks of 256 rows (channels-last, 16k channels) or images (NCHW)
    split = n * h * w > 256 and c % 16 == 0 if order == 'channels_last' else True
    assert threads(1) >= (8 if split else 0)
    # against float64 formulas
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    axes = (0, 2, 3)
    mean = x64.mean(axes, keepdims=True)
    invstd = 1 / np.sqrt(x64.var(axes, keepdims=True) + 1e-5)
    xhat = (x64 - mean) * invstd
    g, b = gamma.reshape(1, -1, 1, 1), beta.reshape(1, -1, 1, 1)
    out = xhat * g + b
    if relu:
        dy64 = dy64 * (out > 0)
        out = np.maximum(out, 0)
    dbeta = dy64.sum(axes)
    dgamma = (dy64 * xhat).sum(axes)
    dx = g * invstd * (dy64 - dbeta.reshape(g.shape) / (n * h * w)
                       - xhat * dgamma.reshape(g.shape) / (n * h * w))
    for got, want in [(one[0], out), (one[1], mean.ravel()), (one[3], dx), (one[4], dgamma),
                      (one[5], dbeta)]:
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-4 * (np.abs(want).max() + 1))


def test_residual_net_trains_bit_identically(threads):
    threads(1)
    one = _train(True)
    threads(2)
    two = _train(True)
    threads(3)
    three = _train(True)
    assert threads(1) > 0
    for name, value in one.items():
        np.testing.assert_array_equal(two[name], value, err_msg=name)
        np.testing.assert_array_equal(three[name], value, err_msg=name)


def _fill(out, value, fail):
    if fail:
        raise ValueError('piece %d failed' % value)
    out[value] = value


def test_pool_runs_every_piece_and_passes_errors_on():
    out = np.zeros(4)
    kpool.run(_fill, [(out, k, False) for k in range(4)])
    np.testing.assert_array_equal(out, [0, 1, 2, 3])
    with pytest.raises(ValueError, match='piece 2 failed'):
        kpool.run(_fill, [(out, 0, False), (out, 1, False), (out, 2, True)])
    kpool.run(_fill, [(out, 3, False), (out, 2, False)])       # usable afterwards


def _conv3x3_case(batch):
    """(attrs, x, w, dy) of a 16-filter 3x3 convolution on ``batch`` 16 x 8 x 8 images."""
    x = rng.randn(batch, 16, 8, 8).astype(np.float32)
    w = rng.randn(16, 16, 3, 3).astype(np.float32)
    attrs = _conv_attrs((3, 3), 16, (1, 1), (1, 1), (1, 1), 1, True)
    dy = rng.randn(batch, 16, 8, 8).astype(np.float32)
    return attrs, x, w, dy


def test_pool_serves_two_calling_threads(threads):
    threads(2)
    attrs, x, w, dy = _conv3x3_case(6)
    want = _conv(attrs, x, w, dy)
    errors = []

    def work():
        try:
            for _ in range(5):
                for got, ref in zip(_conv(attrs, x, w, dy), want):
                    np.testing.assert_array_equal(got, ref)
        except Exception as err:  # pylint: disable=broad-except
            errors.append(err)
    workers = [threading.Thread(target=work) for _ in range(2)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(60)
    assert not errors and not any(t.is_alive() for t in workers)


@pytest.mark.skipif(not hasattr(os, 'fork'), reason='needs fork')
def test_forked_child_runs_kernels_on_threads(threads):
    threads(2)
    attrs, x, w, dy = _conv3x3_case(4)
    want = _conv(attrs, x, w, dy)           # the parent's helpers exist now
    pid = os.fork()
    if pid == 0:                            # child: new helpers, same results
        code = 1
        try:
            got = _conv(attrs, x, w, dy)
            code = 0 if all(np.array_equal(a, b) for a, b in zip(got, want)) else 2
        finally:
            os._exit(code)
    import time
    deadline = time.time() + 60
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    pytest.fail('forked child hung')
