"""Executor semantics: grad_req write/add/null, head gradients, reshape sharing memory, outputs,
copy_params_from, monitor callbacks and the memory plan (mirroring makes it smaller)."""
import numpy as np
import pytest

import mxmod as mx


def _net():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    return (a * b + a) * 3 - b / 2


def _inputs(shape=(3, 4)):
    return np.random.uniform(1, 2, shape).astype(np.float32), np.random.uniform(1, 2, shape).astype(np.float32)


def test_forward_backward_matches_numpy():
    A, B = _inputs()
    exe = _net().simple_bind(mx.cpu(), a=A.shape, b=B.shape)
    out = exe.forward(is_train=True, a=A, b=B)[0].asnumpy()
    np.testing.assert_allclose(out, (A * B + A) * 3 - B / 2, rtol=1e-6)
    head = np.random.uniform(-1, 1, A.shape).astype(np.float32)
    exe.backward(mx.nd.array(head))
    np.testing.assert_allclose(exe.grad_dict['a'].asnumpy(), head * 3 * (B + 1), rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict['b'].asnumpy(), head * (3 * A - 0.5), rtol=1e-6)


def test_grad_req_add_accumulates_and_null_skips():
    A, B = _inputs()
    exe = _net().simple_bind(mx.cpu(), grad_req={'a': 'add', 'b': 'null'}, a=A.shape, b=B.shape)
    assert 'b' not in exe.grad_dict
    head = mx.nd.ones(A.shape)
    for _ in range(3):
        exe.forward(is_train=True, a=A, b=B)
        exe.backward(head)
    np.testing.assert_allclose(exe.grad_dict['a'].asnumpy(), 3 * 3 * (B + 1), rtol=1e-6)


def test_grad_req_write_overwrites():
    A, B = _inputs()
    exe = _net().simple_bind(mx.cpu(), a=A.shape, b=B.shape)
    for _ in range(2):
        exe.forward(is_train=True, a=A, b=B)
        exe.backward(mx.nd.ones(A.shape))
    np.testing.assert_allclose(exe.grad_dict['a'].asnumpy(), 3 * (B + 1), rtol=1e-6)


def test_unused_argument_gets_zero_gradient():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    sym = mx.sym.Group([a * 2, mx.sym.BlockGrad(b)])
    exe = sym.simple_bind(mx.cpu(), a=(2,), b=(2,))
    exe.grad_dict['b'][:] = 5
    exe.forward(is_train=True, a=np.ones(2), b=np.ones(2))
    exe.backward([mx.nd.ones((2,)), mx.nd.ones((2,))])
    np.testing.assert_array_equal(exe.grad_dict['b'].asnumpy(), [0, 0])
    np.testing.assert_array_equal(exe.grad_dict['a'].asnumpy(), [2, 2])


def test_missing_head_gradient_raises():
    exe = (mx.sym.var('a') * 2).simple_bind(mx.cpu(), a=(2,))
    exe.forward(is_train=True)
    with pytest.raises(mx.MXNetError, match='head gradient'):
        exe.backward()


def test_reshape_shares_parameter_memory():
    a, w = mx.sym.var('a'), mx.sym.var('w')
    exe = (a * w).simple_bind(mx.cpu(), a=(4, 3), w=(4, 3))
    smaller = exe.reshape(a=(2, 3), w=(2, 3))
    smaller.arg_dict['w'][:] = 7
    assert exe.arg_dict['w'].asnumpy()[:2].tolist() == [[7, 7, 7], [7, 7, 7]]
    same = exe.reshape(a=(4, 3), w=(4, 3))
    assert same.arg_dict['w'] is exe.arg_dict['w']
    with pytest.raises(mx.MXNetError, match='allow_up_sizing'):
        exe.reshape(a=(8, 3), w=(8, 3))
    bigger = exe.reshape(allow_up_sizing=True, a=(8, 3), w=(8, 3))
    assert bigger.arg_dict['w'].shape == (8, 3)


def test_copy_params_from_and_errors():
    exe = _net().simple_bind(mx.cpu(), a=(2,), b=(2,))
    exe.copy_params_from({'a': mx.nd.ones((2,)) * 3})
    assert exe.arg_dict['a'].asnumpy().tolist() == [3, 3]
    with pytest.raises(ValueError, match='zz'):
        exe.copy_params_from({'zz': mx.nd.ones((2,))})
    exe.copy_params_from({'zz': mx.nd.ones((2,))}, allow_extra_params=True)


def test_bind_with_given_arrays_and_outputs_persist():
    A, B = _inputs((2, 2))
    args = {'a': mx.nd.array(A), 'b': mx.nd.array(B)}
    grads = {'a': mx.nd.zeros((2, 2)), 'b': mx.nd.zeros((2, 2))}
    exe = _net().bind(mx.cpu(), args, args_grad=grads)
    outs = exe.forward()
    first = outs[0]
    exe.arg_dict['a'][:] = 0
    exe.forward()
    assert exe.outputs[0] is first
    np.testing.assert_allclose(first.asnumpy(), -B / 2, rtol=1e-6)
    assert list(exe.output_dict.values()) == [first]


def test_monitor_callback_sees_every_output():
    seen = []
    exe = _net().simple_bind(mx.cpu(), a=(2,), b=(2,))
    exe.set_monitor_callback(lambda name, arr: seen.append(name))
    exe.forward()
    assert len(seen) == 5 and all(n.endswith('_output') for n in seen)


def test_memory_plan_smaller_than_naive_and_mirroring_cuts_it():
    data = mx.sym.var('data')
    net = data
    for i in range(10):
        net = mx.sym.sigmoid(mx.sym.tanh(net * 1.5 + 0.1))
    net = mx.sym.MakeLoss(mx.sym.sum(net)) if 'MakeLoss' in mx.ops.OPS else net
    shape = (64, 256)
    plain = net.simple_bind(mx.cpu(), data=shape)
    mem = plain.memory_plan()
    assert mem['planned'] < mem['naive']
    with mx.test_utils.environment('MXNET_BACKWARD_DO_MIRROR', '1'):
        mirrored = net.simple_bind(mx.cpu(), data=shape)
    assert mirrored.memory_plan()['backward_peak'] < mem['backward_peak']
    assert 'Planned memory' in plain.debug_str()


def _deep_net(blocks=20, hidden=128):
    # BatchNorm's backward reads its input, relu's, tanh's and sigmoid's their outputs: without
    # mirroring four values per block stay for backward, with it the fully connected outputs only
    net = mx.sym.var('data')
    for i in range(blocks):
        net = mx.sym.FullyConnected(net, num_hidden=hidden, name='fc%d' % i)
        net = mx.sym.BatchNorm(net, name='bn%d' % i)
        net = mx.sym.Activation(net, act_type='relu', name='relu%d' % i)
        net = mx.sym.Activation(net, act_type='tanh', name='tanh%d' % i)
        net = mx.sym.Activation(net, act_type='sigmoid', name='sigmoid%d' % i)
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=10, name='out'), name='softmax')


def _peak_bytes(exe):
    import tracemalloc
    exe.forward(is_train=True)
    exe.backward()
    tracemalloc.start()
    try:
        exe.forward(is_train=True)
        exe.backward()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_mirroring_deep_net_cuts_memory_by_30_percent_with_equal_gradients():
    shape = (32, 128)
    data = np.random.uniform(-1, 1, shape).astype(np.float32)
    exes = {}
    for mode in ('0', '1'):
        with mx.test_utils.environment('MXNET_BACKWARD_DO_MIRROR', mode):
            exe = _deep_net().simple_bind(mx.cpu(), data=shape)
        rng = np.random.RandomState(0)
        for name, arr in exe.arg_dict.items():
            arr[:] = data if name == 'data' else rng.uniform(-0.1, 0.1, arr.shape)
        exes[mode] = exe
    plain, mirrored = exes['0'], exes['1']
    assert mirrored.memory_plan()['internal'] <= 0.7 * plain.memory_plan()['internal']
    assert _peak_bytes(mirrored) <= 0.7 * _peak_bytes(plain)
    for name, grad in plain.grad_dict.items():
        np.testing.assert_array_equal(mirrored.grad_dict[name].asnumpy(), grad.asnumpy(), err_msg=name)


def test_force_mirroring_attribute_marks_single_nodes():
    data = mx.sym.var('data')
    fc = mx.sym.FullyConnected(data, num_hidden=4, name='fc')
    with mx.AttrScope(force_mirroring='True'):
        act = mx.sym.Activation(fc, act_type='tanh', name='act')
    net = mx.sym.MakeLoss(mx.sym.sum(mx.sym.FullyConnected(act, num_hidden=3, name='fc2')))
    exe = net.simple_bind(mx.cpu(), data=(2, 5))
    mirrored = {s.name for s in exe._plan.steps if s.mirror}
    assert mirrored == {'act'}
