"""BatchNorm, InstanceNorm, LayerNorm, LRN and L2Normalization: numpy references, float64
gradient checks, MXNet's BatchNorm statistics semantics, the convnet golden file and frozen
MXNet 1.9.1 results."""
import os

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.ops import jit
from mxmod.ops.base import OpContext
from mxmod_tests.conftest import GOLDEN
from mxmod_tests.ops import nn_oracle
from mxmod_tests.ops.opcheck import check_forward, check_grad, make, run_forward

NORM_OPS = ('BatchNorm', 'InstanceNorm', 'LayerNorm', 'LRN', 'L2Normalization')
rng = np.random.RandomState(2)


@pytest.mark.parametrize('case', nn_oracle.case_names(NORM_OPS))
def test_matches_mxnet(case):
    nn_oracle.run_case(case)


@pytest.mark.parametrize('case', nn_oracle.shape_names(NORM_OPS))
def test_shape_inference_matches_mxnet(case):
    nn_oracle.shape_case(case)


# ---- BatchNorm --------------------------------------------------------------------------------
def _bn_ref(x, gamma, beta, mean, var, eps=1e-3):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * gamma.reshape(shape) \
        + beta.reshape(shape)


def _bn_inputs(c=3):
    return rng.randn(4, c, 3, 2), rng.rand(c) + 0.5, rng.randn(c), rng.randn(c), rng.rand(c) + 0.5


def test_batchnorm_names_and_outputs():
    op = make('BatchNorm')
    assert op.list_arguments() == ['data', 'gamma', 'beta']
    assert op.list_auxiliary_states() == ['moving_mean', 'moving_var']
    assert op.list_outputs() == ['output', 'mean', 'var'] and op.num_visible_outputs() == 1
    assert make('BatchNorm', output_mean_var='True').num_visible_outputs() == 3
    assert (op.p.eps, op.p.momentum, op.p.fix_gamma, op.p.use_global_stats, op.p.axis) == \
        (1e-3, 0.9, True, False, 1)


def test_batchnorm_training_forward_uses_batch_stats():
    x, gamma, beta, mm, mv = _bn_inputs()
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    outs = check_forward('BatchNorm', {'fix_gamma': 'False'}, [x, gamma, beta],
                         [_bn_ref(x, gamma, beta, mean, var), mean, 1 / np.sqrt(var + 1e-3)],
                         aux=[mm, mv], is_train=True)
    assert len(outs) == 3


def test_batchnorm_inference_and_fix_gamma():
    x, gamma, beta, mm, mv = _bn_inputs()
    check_forward('BatchNorm', {'fix_gamma': False}, [x, gamma, beta],
                  [_bn_ref(x, gamma, beta, mm, mv), mm, 1 / np.sqrt(mv + 1e-3)], aux=[mm, mv])
    g = gamma.copy()
    out = run_forward(make('BatchNorm'), [x, g, beta], [mm, mv])[0]
    np.testing.assert_allclose(out, _bn_ref(x, np.ones(3), beta, mm, mv), rtol=1e-6)
    np.testing.assert_array_equal(g, 1)    # MXNet overwrites gamma with 1 when fix_gamma


def test_batchnorm_moving_stats_update_in_backward_like_mxnet_cpu():
    x, gamma, beta, mm, mv = _bn_inputs()
    op = make('BatchNorm', momentum='0.8', fix_gamma='False')
    aux = [mm.copy(), mv.copy()]
    octx = OpContext(np, mx.cpu(), is_train=True, need_grad=[True, True, True])
    outs = op.forward(octx, [x, gamma, beta], aux)
    np.testing.assert_array_equal(aux[0], mm)       # forward alone leaves the moving stats
    op.backward(octx, [np.ones_like(x), None, None], [x, gamma, beta], outs, aux)
    np.testing.assert_allclose(aux[0], 0.8 * mm + 0.2 * x.mean(axis=(0, 2, 3)))
    np.testing.assert_allclose(aux[1], 0.8 * mv + 0.2 * x.var(axis=(0, 2, 3)))


@pytest.mark.parametrize('attrs', [{'fix_gamma': 'False'}, {'fix_gamma': 'False', 'axis': '-1'},
                                   {'use_global_stats': 'True', 'fix_gamma': 'False'}, {}])
def test_batchnorm_gradients(attrs):
    x, gamma, beta, mm, mv = _bn_inputs(2)
    if attrs.get('axis') == '-1':
        x = rng.randn(3, 4, 2)
    head = [rng.randn(*x.shape), np.zeros(2), np.zeros(2)]
    grads = check_grad('BatchNorm', attrs, [x, gamma, beta], aux=[mm, mv], head=head)
    if 'fix_gamma' not in attrs:
        np.testing.assert_array_equal(grads[1], 0)


def test_batchnorm_float16_types_and_partial_shapes():
    op = make('BatchNorm', output_mean_var=True)
    assert op.infer_type(['float16', None, None, None, None], [None] * 3) == (
        ['float16'] + ['float32'] * 4, ['float16', 'float32', 'float32'])
    ins, outs = op.infer_shape([(0, 5, 2), None, None, None, None], [None] * 3)
    assert ins[1:] == [(5,)] * 4 and outs == [(0, 5, 2), (5,), (5,)]
    x = rng.randn(2, 3, 2).astype(np.float16)
    params = [np.ones(3, np.float32), np.zeros(3, np.float32)]
    aux = [np.zeros(3, np.float32), np.ones(3, np.float32)]
    out = run_forward(make('BatchNorm'), [x] + params, aux, is_train=True)
    assert out[0].dtype == np.float16 and out[1].dtype == np.float32


def _convnet_layers():
    return [('conv1', make('Convolution', kernel='(3, 3)', pad='(1, 1)', num_filter='4')),
            ('bn1', make('BatchNorm')), ('relu1', make('Activation', act_type='relu')),
            ('pool1', make('Pooling', kernel='(2, 2)', stride='(2, 2)')),
            ('conv2', make('Convolution', kernel='(3, 3)', pad='(1, 1)', num_filter='6')),
            ('bn2', make('BatchNorm', fix_gamma='False')), ('relu2', make('Activation', act_type='relu')),
            ('pool2', make('Pooling', kernel='(2, 2)', stride='(2, 2)', pool_type='avg')),
            ('flatten', None), ('fc1', make('FullyConnected', num_hidden='5'))]


def _convnet_forward(g, params, aux, is_train):
    """Run the golden convnet layer by layer; return softmax probabilities and the tape."""
    x, tape = g['input:data'], []
    for name, op in _convnet_layers():
        if op is None:
            tape.append((name, None, None, x.shape, None, None))
            x = x.reshape(x.shape[0], -1)
            continue
        octx = OpContext(np, mx.cpu(), is_train=is_train)
        args = [x] + [params['%s_%s' % (name, a)] for a in op.list_arguments()[1:]]
        ax = [aux['%s_%s' % (name, a)] for a in op.list_auxiliary_states()]
        outs = op.forward(octx, args, ax)
        tape.append((name, op, octx, args, outs, ax))
        x = outs[0]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), tape


def _convnet_backward(tape, dy):
    grads = {}
    for name, op, octx, args, outs, ax in reversed(tape):
        if op is None:
            dy = dy.reshape(args)
            continue
        octx.need_grad = [True] * len(args)
        res = op.backward(octx, [dy] + [np.zeros_like(o) for o in outs[1:]], args, outs, ax)
        grads.update({'%s_%s' % (name, a): r for a, r in zip(op.list_arguments()[1:], res[1:])})
        dy = res[0]
    grads['data'] = dy
    return grads


def test_convnet_golden_forward_backward_and_moving_stats():
    """Chain conv -> BN -> relu -> max pool -> conv -> BN -> relu -> avg pool -> FC like MXNet's
    golden convnet and compare outputs, gradients and the BatchNorm moving statistics."""
    g = np.load(os.path.join(GOLDEN, 'convnet.npz'))
    for is_train, key in ((False, 'output_infer:0'), (True, 'output:0')):
        params = {k[6:]: g[k].copy() for k in g.files if k.startswith('param:')}
        aux = {k[4:]: g[k].copy() for k in g.files if k.startswith('aux:')}
        prob, tape = _convnet_forward(g, params, aux, is_train)
        np.testing.assert_allclose(prob, g[key], rtol=1e-5, atol=1e-6)
    dy = prob.copy()
    dy[np.arange(2), g['input:softmax_label'].astype(int)] -= 1
    grads = _convnet_backward(tape, dy)
    for k in g.files:
        if k.startswith('grad:'):
            np.testing.assert_allclose(grads[k[5:]], g[k], rtol=1e-4, atol=2e-6, err_msg=k)
        if k.startswith('aux_after:'):
            np.testing.assert_allclose(aux[k[10:]], g[k], rtol=1e-5, atol=1e-6, err_msg=k)


# ---- InstanceNorm / LayerNorm -----------------------------------------------------------------
def test_instance_norm():
    x, gamma, beta = rng.randn(2, 3, 4, 2), rng.rand(3) + 0.5, rng.randn(3)
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    want = (x - mean) / np.sqrt(var + 0.01) * gamma.reshape(1, 3, 1, 1) + beta.reshape(1, 3, 1, 1)
    check_forward('InstanceNorm', {'eps': '0.01'}, [x, gamma, beta], [want])
    check_grad('InstanceNorm', {'eps': 0.01}, [x, gamma, beta],
               head=[rng.randn(*x.shape), np.zeros((2, 3)), np.zeros((2, 3))])
    assert make('InstanceNorm').num_visible_outputs() == 1


@pytest.mark.parametrize('axis', [-1, 1])
def test_layer_norm(axis):
    x = rng.randn(2, 3, 4)
    n = x.shape[axis]
    gamma, beta = rng.rand(n) + 0.5, rng.randn(n)
    mean = x.mean(axis=axis, keepdims=True)
    std = np.sqrt(x.var(axis=axis, keepdims=True) + 1e-5)
    shape = [1, 1, 1]
    shape[axis] = n
    want = (x - mean) / std * gamma.reshape(shape) + beta.reshape(shape)
    check_forward('LayerNorm', {'axis': str(axis), 'output_mean_var': 'True'}, [x, gamma, beta],
                  [want, mean, std])
    check_grad('LayerNorm', {'axis': axis}, [x, gamma, beta],
               head=[rng.randn(*x.shape), np.zeros(mean.shape), np.zeros(mean.shape)])
    assert make('LayerNorm', output_mean_var=True).list_outputs() == ['output', 'mean', 'std']


# ---- LRN / L2Normalization --------------------------------------------------------------------
def test_lrn():
    x = rng.randn(2, 5, 3, 2)
    alpha, beta, knorm, nsize = 0.1, 0.75, 2.0, 3
    sq = np.pad(x * x, [(0, 0), (1, 1), (0, 0), (0, 0)])
    window = sum(sq[:, i:i + 5] for i in range(nsize))
    want = x * (knorm + alpha / nsize * window) ** -beta
    attrs = {'alpha': '0.1', 'beta': '0.75', 'knorm': '2', 'nsize': '3'}
    check_forward('LRN', attrs, [x], [want])
    check_grad('LRN', attrs, [x], head=[rng.randn(*x.shape), np.zeros(x.shape)])
    check_grad('LRN', dict(attrs, nsize='5'), [x], head=[rng.randn(*x.shape), np.zeros(x.shape)])
    with pytest.raises(MXNetError, match='odd'):
        make('LRN', nsize=4)


@pytest.mark.parametrize('mode,axes', [('instance', (1, 2, 3)), ('channel', (1,)), ('spatial', (2, 3))])
def test_l2_normalization(mode, axes):
    x = rng.randn(2, 3, 2, 2)
    norm = np.sqrt((x * x).sum(axis=axes, keepdims=True) + 1e-10)
    check_forward('L2Normalization', {'mode': mode}, [x], [x / norm])
    keep = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    check_grad('L2Normalization', {'mode': mode}, [x], head=[rng.randn(*x.shape), np.zeros(keep)])


def test_float32_reductions_over_large_batches_are_accurate():
    """Parameter gradients summed over a big batch axis keep float32 accuracy (numpy alone adds
    such axes one element at a time)."""
    dy64 = rng.normal(0, 1, (20000, 8))
    x = rng.normal(0, 1, (20000, 8)).astype(np.float32)
    dy = dy64.astype(np.float32)
    op = make('FullyConnected', num_hidden=8)
    octx = OpContext(np, mx.cpu(), is_train=True, need_grad=[False, False, True])
    grads = op.backward(octx, [dy], [x, np.eye(8, dtype=np.float32), np.zeros(8, np.float32)], [None], [])
    np.testing.assert_allclose(grads[2], dy.astype(np.float64).sum(axis=0), rtol=0, atol=2e-5)
    op = make('BatchNorm', fix_gamma=False)
    outs = run_forward(op, [x, np.ones(8, np.float32), np.zeros(8, np.float32)],
                       [np.zeros(8, np.float32), np.ones(8, np.float32)], is_train=True)
    np.testing.assert_allclose(outs[1], x.astype(np.float64).mean(axis=0), rtol=0, atol=1e-6)


@pytest.mark.parametrize('compiled', [True, False], ids=['numba', 'numpy'])
@pytest.mark.parametrize('chans', [3, 32])
@pytest.mark.parametrize('layout', ['channels_first', 'channels_last', 'strided', 'axis_last'])
def test_batchnorm_float32_training_in_any_memory_order(layout, chans, compiled):
    """float32 training BatchNorm (bn_math's block sums, or the compiled kernels of bn_kernels)
    equals a float64 reference for data in channels-first, channels-last (as convolutions produce
    it) or other memory, with a mean far from zero and more rows than one summation block."""
    if compiled:
        pytest.importorskip('numba')
    previous = jit.set_enabled(compiled)
    try:
        _check_batchnorm_float32(layout, chans)
    finally:
        jit.set_enabled(previous)


def _check_batchnorm_float32(layout, chans):
    x64 = rng.normal(5.0, 2.0, (41, chans, 9, 7))
    dy64 = rng.normal(0, 1, x64.shape)
    gamma, beta = rng.rand(chans) + 0.5, rng.randn(chans)
    x, dy = x64.astype(np.float32), dy64.astype(np.float32)
    if layout == 'axis_last':   # dy in another memory order than x
        dy = np.ascontiguousarray(dy.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    if layout == 'channels_last':
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    elif layout == 'strided':
        x = np.ascontiguousarray(x.transpose(2, 0, 3, 1)).transpose(1, 3, 0, 2)
    mean = x64.mean(axis=(0, 2, 3))
    invstd = 1 / np.sqrt(x64.var(axis=(0, 2, 3)) + 1e-3)
    shape = (1, chans, 1, 1)
    xhat = (x64 - mean.reshape(shape)) * invstd.reshape(shape)
    op = make('BatchNorm', fix_gamma=False)
    octx = OpContext(np, mx.cpu(), is_train=True, need_grad=[True, True, True])
    aux = [np.zeros(chans, np.float32), np.ones(chans, np.float32)]
    params = [gamma.astype(np.float32), beta.astype(np.float32)]
    out, m, inv = op.forward(octx, [x] + params, aux)
    np.testing.assert_allclose(out, xhat * gamma.reshape(shape) + beta.reshape(shape), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(m, mean, rtol=1e-6)
    np.testing.assert_allclose(inv, invstd, rtol=1e-5)
    dx, dgamma, dbeta = op.backward(octx, [dy], [x] + params, [out, m, inv], aux)
    axes = (0, 2, 3)
    want_dbeta, want_dgamma = dy64.sum(axis=axes), (dy64 * xhat).sum(axis=axes)
    g = (gamma * invstd).reshape(shape)
    want_dx = g * (dy64 - want_dbeta.reshape(shape) / 2583 - xhat * want_dgamma.reshape(shape) / 2583)
    np.testing.assert_allclose(dbeta, want_dbeta, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(dgamma, want_dgamma, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-4, atol=1e-5)
    assert dx.dtype == out.dtype == np.float32
