"""Shared forward buffers: operators that can write into preallocated outputs get buffers shared by
values with disjoint lifetimes (elementwise ones in place); results are bit-identical to running
without sharing, including through view-producing operators and mirroring."""
import json
import os

import numpy as np
import pytest

import mxmod as mx

GOLDEN = os.path.join(os.path.dirname(__file__), '..', 'golden')


def _bind(sym, share, grad_req='write', **shapes):
    with mx.test_utils.environment('MXMOD_SHARE_BUFFERS', '1' if share else '0'):
        return sym.simple_bind(mx.cpu(), grad_req=grad_req, **shapes)


def _fill(exes, seed=0):
    rng = np.random.RandomState(seed)
    values = {}
    for name, arr in exes[0].arg_dict.items():
        values[name] = rng.uniform(0.1, 1.0, arr.shape)
    for exe in exes:
        for name, arr in exe.arg_dict.items():
            arr[:] = values[name]


@pytest.mark.parametrize('name', ['mlp', 'convnet', 'lstm'])
def test_golden_models_identical_with_and_without_sharing(name):
    meta = json.load(open(os.path.join(GOLDEN, name + '.meta.json')))
    data = np.load(os.path.join(GOLDEN, name + '.npz'))
    sym = mx.sym.load(os.path.join(GOLDEN, name + '-symbol.json'))
    shapes = {k: tuple(v) for k, v in meta['bind_shapes'].items()}
    exes = [_bind(sym, share, meta['grad_req'], **shapes) for share in (False, True)]
    for exe in exes:
        for key in data.files:
            kind, _, var = key.partition(':')
            if kind in ('input', 'param'):
                exe.arg_dict[var][:] = data[key]
            elif kind == 'aux':
                exe.aux_dict[var][:] = data[key]
    for train in (False, True):
        outs = [exe.forward(is_train=train)[0].asnumpy() for exe in exes]
        np.testing.assert_array_equal(outs[0], outs[1])
    for exe in exes:
        exe.backward()
    for key, grad in exes[0].grad_dict.items():
        np.testing.assert_array_equal(exes[1].grad_dict[key].asnumpy(), grad.asnumpy(), err_msg=key)
    if name == 'mlp':
        assert exes[1].memory_plan()['shared_buffers'] > 0


def test_elementwise_chain_runs_in_place_in_two_buffers():
    x = mx.sym.var('x')
    net = x
    for _ in range(12):
        net = mx.sym.exp(mx.sym.tanh(net * 0.5 + 0.1))
    shape = (16, 32)
    exe = _bind(net, True, grad_req='null', x=shape)
    plan = exe.memory_plan()
    assert 1 <= plan['shared_buffers'] <= 2
    assert plan['shared_buffer_bytes'] <= 2 * 16 * 32 * 4
    data = np.random.uniform(-1, 1, shape).astype(np.float32)
    ref = data
    for _ in range(12):
        ref = np.exp(np.tanh(ref * np.float32(0.5) + np.float32(0.1)))
    np.testing.assert_allclose(exe.forward(x=data)[0].asnumpy(), ref, rtol=1e-6)


def test_views_keep_their_buffers_alive():
    """An operator output that aliases its input (SwapAxis of an axis with itself returns the very
    array) must not see that buffer reused while it is still to be read."""
    x = mx.sym.var('x')
    a = mx.sym.tanh(x)                                  # written into a shared buffer
    view = mx.sym.SwapAxis(a, dim1=1, dim2=1)           # the same memory as a
    b = mx.sym.exp(x * 3)                               # would reuse a's buffer if views were ignored
    c = mx.sym.sqrt(mx.sym.abs(b) + 1)
    net = view + mx.sym.SwapAxis(c, dim1=1, dim2=1)     # graph order: tanh, SwapAxis, then the rest
    exes = [_bind(net, share, grad_req='null', x=(4, 5)) for share in (False, True)]
    _fill(exes)
    outs = [exe.forward()[0].asnumpy() for exe in exes]
    np.testing.assert_array_equal(outs[0], outs[1])
    data = exes[0].arg_dict['x'].asnumpy()
    np.testing.assert_allclose(outs[1], np.sqrt(np.abs(np.exp(data * 3)) + 1) + np.tanh(data),
                               rtol=1e-6)


def test_sharing_with_mirroring_and_training():
    data = mx.sym.var('data')
    net = data
    for i in range(6):
        net = mx.sym.FullyConnected(net, num_hidden=16, name='fc%d' % i)
        net = mx.sym.Activation(net, act_type='tanh', name='act%d' % i)
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=4, name='out'), name='softmax')
    exes = []
    for share in (False, True):
        with mx.test_utils.environment('MXNET_BACKWARD_DO_MIRROR', '1'):
            exes.append(_bind(net, share, data=(8, 10)))
    _fill(exes)
    for exe in exes:
        exe.arg_dict['softmax_label'][:] = np.arange(8) % 4
        exe.forward(is_train=True)
        exe.backward()
    for key, grad in exes[0].grad_dict.items():
        np.testing.assert_array_equal(exes[1].grad_dict[key].asnumpy(), grad.asnumpy(), err_msg=key)


def test_fc_writes_weight_gradient_straight_into_its_array():
    data = mx.sym.var('data')
    shared_w = mx.sym.var('shared_weight')
    h = mx.sym.FullyConnected(data, num_hidden=6, name='fc1')
    h2 = mx.sym.FullyConnected(h, weight=shared_w, num_hidden=6, no_bias=True, name='fc2')
    h3 = mx.sym.FullyConnected(h2, weight=shared_w, num_hidden=6, no_bias=True, name='fc3')
    net = mx.sym.MakeLoss(mx.sym.sum(h3 * h3))
    exe = net.simple_bind(mx.cpu(), data=(4, 5))
    direct = [o.grad_out for o in exe._octx if o.grad_out is not None]
    assert any(g is exe.grad_dict['fc1_weight']._data for gs in direct for g in gs)
    assert not any(g is exe.grad_dict['shared_weight']._data for gs in direct for g in gs)
    rng = np.random.RandomState(3)
    for arr in exe.arg_arrays:
        arr[:] = rng.uniform(-1, 1, arr.shape)
    before = exe.grad_dict['fc1_weight']._data
    exe.forward(is_train=True)
    exe.backward()
    assert exe.grad_dict['fc1_weight']._data is before
    x, w1, b1, ws = (exe.arg_dict[n].asnumpy().astype(np.float64)
                     for n in ('data', 'fc1_weight', 'fc1_bias', 'shared_weight'))
    a1 = x @ w1.T + b1
    a2 = a1 @ ws.T
    a3 = a2 @ ws.T
    d3 = 2 * a3
    d2 = d3 @ ws
    d1 = d2 @ ws
    np.testing.assert_allclose(exe.grad_dict['fc1_weight'].asnumpy(), d1.T @ x, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(exe.grad_dict['shared_weight'].asnumpy(), d3.T @ a2 + d2.T @ a1,
                               rtol=1e-4, atol=1e-5)
