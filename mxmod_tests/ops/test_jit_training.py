"""The compiled kernels (convolution, BatchNorm, Activation's gradient) inside whole training
steps: a small residual network trains to the same parameters with and without them; and
Activation's one-pass gradients against numpy's."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.ops import act_jit, jit
from mxmod.ops.base import OpContext
from mxmod_tests.ops.opcheck import make

pytest.importorskip('numba')


def _residual_net():
    data = mx.sym.Variable('data')
    x = mx.sym.BatchNorm(data, fix_gamma=True, eps=2e-5, name='bn0')
    x = mx.sym.Convolution(x, num_filter=16, kernel=(3, 3), pad=(1, 1), no_bias=True, name='c0')
    a = mx.sym.Activation(mx.sym.BatchNorm(x, fix_gamma=False, name='bn1'), act_type='relu')
    c1 = mx.sym.Convolution(a, num_filter=32, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                            no_bias=True, name='c1')
    c1 = mx.sym.Activation(mx.sym.BatchNorm(c1, fix_gamma=False, name='bn2'), act_type='relu')
    c2 = mx.sym.Convolution(c1, num_filter=32, kernel=(3, 3), pad=(1, 1), no_bias=True, name='c2')
    sc = mx.sym.Convolution(a, num_filter=32, kernel=(1, 1), stride=(2, 2), no_bias=True,
                            name='sc')
    x = mx.sym.Activation(mx.sym.BatchNorm(c2 + sc, fix_gamma=False, name='bn3'), act_type='tanh')
    x = mx.sym.Pooling(x, global_pool=True, kernel=(2, 2), pool_type='avg')
    x = mx.sym.FullyConnected(mx.sym.Flatten(x), num_hidden=10, name='fc')
    return mx.sym.SoftmaxOutput(x, name='softmax')


def _train(compiled, steps=4):
    previous = jit.set_enabled(compiled)
    try:
        rs = np.random.RandomState(0)
        x = rs.uniform(0, 1, (64, 3, 12, 12)).astype(np.float32)
        y = rs.randint(0, 10, 64).astype(np.float32)
        it = mx.io.NDArrayIter(x, y, batch_size=16, label_name='softmax_label')
        mod = mx.mod.Module(_residual_net(), context=mx.cpu())
        mx.random.seed(0)
        mod.fit(it, num_epoch=1, optimizer='sgd', initializer=mx.init.Xavier(magnitude=2.0),
                optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
        args, auxs = mod.get_params()
        return {k: v.asnumpy() for k, v in list(args.items()) + list(auxs.items())}
    finally:
        jit.set_enabled(previous)


def test_training_steps_match_numpy_path():
    with_kernels, without = _train(True), _train(False)
    assert with_kernels.keys() == without.keys()
    for name, value in without.items():
        scale = np.abs(value).max() + 1e-3
        np.testing.assert_allclose(with_kernels[name], value, rtol=0, atol=1e-3 * scale,
                                   err_msg=name)


@pytest.mark.parametrize('act', ['relu', 'tanh', 'sigmoid'])
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('order', ['c', 'channels_last', 'mixed'])
def test_activation_gradient_one_pass(act, dtype, order):
    rs = np.random.RandomState(3)
    # above act_jit.SMALL elements (smaller arrays take numpy's path)
    x = rs.randn(4, 16, 10, 9).astype(dtype)
    dy = rs.randn(4, 16, 10, 9).astype(dtype)
    assert x.size >= act_jit.SMALL
    dy[0, 0, 0, :] = np.nan
    if order != 'c':
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    if order == 'channels_last':
        dy = np.ascontiguousarray(dy.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    op = make('Activation', act_type=act)
    results = []
    for compiled in (True, False):
        previous = jit.set_enabled(compiled)
        try:
            octx = OpContext(np, mx.cpu(), is_train=True)
            y = op.forward(octx, [x], [])[0]
            results.append((y, op.backward(octx, [dy], [x], [y], [])[0]))
        finally:
            jit.set_enabled(previous)
    (y1, dx1), (y0, dx0) = results
    np.testing.assert_array_equal(y1, y0)
    np.testing.assert_allclose(dx1, dx0, rtol=1e-6 if dtype == np.float32 else 1e-14, atol=0)
    assert dx1.dtype == dtype and np.isnan(dx1[0, 0, 0]).all()


def test_small_activation_gradients_take_numpy(monkeypatch):
    """Below act_jit.SMALL elements the compiled kernel's call costs more than numpy's ufuncs
    (the tiny MLP's step: 98 -> 88 us); from there on the kernel runs."""
    from mxmod.ops import act_kernels
    calls = []
    monkeypatch.setattr(act_kernels, 'relu_grad', lambda y, dy, dx: calls.append(y.size))
    small = np.ones((8, 16), np.float32)
    assert act_jit.grad('relu', small, small) is None and calls == []
    large = np.ones((8, act_jit.SMALL // 8), np.float32)
    assert act_jit.grad('relu', large, large) is not None and calls == [large.size]


def test_batchnorm_output_is_not_kept_for_backward():
    """BatchNorm's backward reads its input, mean and 1/std only (as MXNet's): its output is not
    kept, so the relu after it may overwrite it in place; gradients stay those of the numpy path."""
    net = _residual_net()
    exe = net.simple_bind(mx.cpu(), data=(4, 3, 12, 12))
    plan = exe._plan
    bn_steps = [s for s in plan.steps if s.op.op_name == 'BatchNorm' and s.name != 'bn0']
    assert len(bn_steps) == 3 and all(s.outputs[0] not in exe._kept for s in bn_steps)
    bn0 = [s for s in plan.steps if s.name == 'bn0'][0]
    assert bn0.outputs[0] in exe._kept       # the convolution after it reads it in backward
    assert all(s.outputs[1] in exe._kept and s.outputs[2] in exe._kept for s in bn_steps)


@pytest.mark.parametrize('kernel,stride', [((2, 2), (2, 2)), ((3, 3), (2, 2)), ((3, 2), (1, 2)),
                                           ((2, 2), (3, 3))])
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('order', ['c', 'channels_last', 'nhwc_layout', 'mixed'])
def test_max_pooling_kernels_match_numpy(kernel, stride, dtype, order):
    """Compiled max pooling: same maxima, the gradient to the first maximum of each window (ties
    from rounding to few values, NaNs), overlapping windows adding up."""
    rs = np.random.RandomState(5)
    x = np.round(rs.randn(2, 5, 9, 8) * 2).astype(dtype)
    x[0, 1, 2, 3] = np.nan
    x[1, 4, 0:3, 0:3] = np.nan
    attrs = {'kernel': kernel, 'stride': stride, 'pool_type': 'max'}
    if order in ('channels_last', 'mixed'):   # mixed: dy C-ordered
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    elif order == 'nhwc_layout':
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        attrs['layout'] = 'NHWC'
    op = make('Pooling', **attrs)
    dy = None
    results = []
    for compiled in (True, False):
        previous = jit.set_enabled(compiled)
        try:
            octx = OpContext(np, mx.cpu(), is_train=True)
            outs = op.forward(octx, [x], [])
            if dy is None:
                dy = np.asarray(rs.randn(*outs[0].shape), dtype=dtype)
                if order == 'channels_last':
                    dy = np.ascontiguousarray(dy.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
            results.append((outs[0], op.backward(octx, [dy], [x], outs, [])[0]))
        finally:
            jit.set_enabled(previous)
    (y1, dx1), (y0, dx0) = results
    np.testing.assert_array_equal(y1, y0)
    # overlapping windows add in another order
    np.testing.assert_allclose(dx1, dx0, rtol=1e-6 if dtype == np.float32 else 1e-14, atol=0)
    assert ((dx1 != 0) == (dx0 != 0)).all()
    assert y1.dtype == dx1.dtype == dtype and dx1.shape == x.shape


@pytest.mark.parametrize('kernels_at_run_time', [True, False])
def test_batchnorm_relu_fusion_is_bit_identical(monkeypatch, kernels_at_run_time):
    """The executor fuses each BatchNorm whose output only a relu reads (executor/fusion.py):
    training gives the very same parameters as with the two operators apart (also when the
    compiled kernels are switched off after binding: the numpy fallbacks of the fused pair)."""
    results = {}
    for fuse in ('1', '0'):
        monkeypatch.setenv('MXMOD_FUSE_BN_RELU', fuse)
        exe = _residual_net().simple_bind(mx.cpu(), data=(8, 3, 12, 12))
        pairs = [(exe._plan.steps[a].name, exe._plan.steps[b].op.op_name)
                 for a, b in exe._fusion_pairs]
        assert len(pairs) == (2 if fuse == '1' else 0), pairs
        monkeypatch.setattr(jit, '_STATE', dict(jit._STATE, enabled=kernels_at_run_time))
        rs = np.random.RandomState(1)
        for name, arr in exe.arg_dict.items():
            arr[:] = rs.uniform(-0.5, 0.5, arr.shape)
        for name, arr in exe.aux_dict.items():
            arr[:] = 1.0 if name.endswith('var') else 0.0
        for _ in range(3):
            exe.forward(is_train=True)
            exe.backward()
            for name, grad in exe.grad_dict.items():
                if name not in ('data', 'softmax_label'):
                    exe.arg_dict[name][:] -= 0.1 * grad
        results[fuse] = {k: v.asnumpy() for k, v in list(exe.arg_dict.items())
                         + list(exe.aux_dict.items())}
        results[fuse].update(('d_' + k, v.asnumpy()) for k, v in exe.grad_dict.items())
        results[fuse]['out'] = exe.outputs[0].asnumpy()
    for name, value in results['0'].items():
        np.testing.assert_array_equal(results['1'][name], value, err_msg=name)
