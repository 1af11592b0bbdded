"""The executor's hot forward/backward (one host device, dense values, no monitor): what it skips
must not change what forward and backward do."""
import numpy as np
import pytest

import mxmod as mx


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def test_training_mode_follows_each_call():
    """The operators' training flag is set only when it changes; Dropout must still see every
    change, also after a backward that reran an inference pass."""
    y = mx.sym.Dropout(mx.sym.var('data'), p=0.5)
    exe = y.simple_bind(ctx=mx.cpu(), data=(30, 30))
    assert exe._hot
    exe.arg_arrays[0][:] = 1
    for is_train in (True, False, False, True, True, False):
        out = exe.forward(is_train=is_train)[0].asnumpy()
        if is_train:
            assert set(np.unique(out)) == {0.0, 2.0}
        else:
            np.testing.assert_array_equal(out, 1)
    exe.backward([mx.nd.ones((30, 30))])        # reruns the inference pass
    np.testing.assert_array_equal(exe.grad_arrays[0].asnumpy(), 1)
    assert set(np.unique(exe.forward(is_train=True)[0].asnumpy())) == {0.0, 2.0}


def test_outputs_stay_the_same_arrays_and_views_see_new_values():
    x = mx.sym.var('x')
    exe = (x * 2).simple_bind(ctx=mx.cpu(), x=(4,))
    out = exe.outputs[0]
    view = out[1:3]
    for value in (1.0, 5.0):
        exe.arg_arrays[0][:] = value
        assert exe.forward()[0] is out
        np.testing.assert_array_equal(view.asnumpy(), [2 * value] * 2)


def test_keyword_inputs_are_checked_and_copied():
    x = mx.sym.var('x')
    exe = mx.sym.exp(x).simple_bind(ctx=mx.cpu(), x=(2, 3))
    with pytest.raises(mx.base.MXNetError, match='shape of x'):
        exe.forward(x=mx.nd.ones((3, 2)))
    with pytest.raises(mx.base.MXNetError, match='unknown argument'):
        exe.forward(y=mx.nd.ones((2, 3)))
    with pytest.raises(TypeError, match='NDArray or numpy'):
        exe.forward(x=[[1, 2, 3], [4, 5, 6]])
    exe.forward(x=np.zeros((2, 3)))
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.ones((2, 3)))


def test_operator_error_is_deferred_to_the_read():
    data = mx.sym.var('data')
    idx = mx.sym.var('idx')
    exe = mx.sym.take(data, idx, mode='raise').simple_bind(ctx=mx.cpu(), data=(3, 2),
                                                           idx=(2,))
    exe.arg_dict['idx'][:] = mx.nd.array([0, 7])
    outs = exe.forward()                         # no error here, as MXNet's engine
    with pytest.raises(mx.base.MXNetError, match='out of bound'):
        outs[0].asnumpy()
    exe.arg_dict['idx'][:] = mx.nd.array([0, 2])
    exe.arg_dict['data'][:] = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [[1, 2], [5, 6]])


def test_loss_heads_ignore_out_grads_and_other_heads_need_them():
    data = mx.sym.var('data')
    fc = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    loss = mx.sym.SoftmaxOutput(fc, name='softmax')
    exe = loss.simple_bind(ctx=mx.cpu(), data=(2, 4))
    assert not exe._heads_need_grad
    exe.arg_dict['data'][:] = 1
    exe.forward(is_train=True)
    exe.backward()
    first = exe.grad_dict['fc_weight'].asnumpy()
    exe.backward([mx.nd.ones((2, 3)) * 7])         # ignored by a loss layer
    np.testing.assert_array_equal(exe.grad_dict['fc_weight'].asnumpy(), first)
    both = mx.sym.Group([loss, fc])
    exe2 = both.simple_bind(ctx=mx.cpu(), data=(2, 4))
    assert exe2._heads_need_grad
    exe2.forward(is_train=True)
    with pytest.raises(mx.base.MXNetError, match='head gradient'):
        exe2.backward()


def test_grad_hook_sees_each_finished_gradient_once():
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=4, name='a')
    net = mx.sym.FullyConnected(mx.sym.relu(net), num_hidden=2, name='b')
    exe = mx.sym.SoftmaxOutput(net, name='sm').simple_bind(ctx=mx.cpu(), data=(3, 5))
    seen = []
    exe.set_grad_ready_hook(seen.append)
    exe.forward(is_train=True)
    exe.backward()
    names = [n for batch in seen if batch for n in batch]
    assert sorted(names) == sorted(exe._symbol.list_arguments())   # grad_req 'write' for all
    assert seen[-1] is None


def test_fully_connected_reports_its_weight_gradient_before_the_data_gradient():
    """With a hook, a FullyConnected whose weight and bias gradients are final in its step
    reports them (already holding their final values) before it computes its data gradient;
    each name is reported once per pass, and the gradients equal those of a pass without hook."""
    from mxmod.ops import nn
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=6, name='a')
    net = mx.sym.FullyConnected(mx.sym.relu(net), num_hidden=3, name='b')
    sym = mx.sym.SoftmaxOutput(net, name='sm')
    rs = np.random.RandomState(0)
    values = {'data': rs.randn(4, 5), 'a_weight': rs.randn(6, 5), 'a_bias': rs.randn(6),
              'b_weight': rs.randn(3, 6), 'b_bias': rs.randn(3), 'sm_label': [0, 2, 1, 0]}

    def run(hook):
        exe = sym.simple_bind(ctx=mx.cpu(), data=(4, 5))
        for name, value in values.items():
            exe.arg_dict[name][:] = np.asarray(value, dtype=np.float32)
        if hook is not None:
            exe.set_grad_ready_hook(hook(exe))
        for _ in range(2):
            exe.forward(is_train=True)
            exe.backward()
        return {n: g.asnumpy() for n, g in exe.grad_dict.items() if g is not None}

    events = []
    real = nn._matmul

    def matmul(xp, a, b, out, shape):
        events.append(('matmul', shape))
        return real(xp, a, b, out, shape)

    def hook(exe):
        def seen(names):
            if names is not None:
                events.append(('ready', tuple(names),
                               [exe.grad_dict[n].asnumpy().copy() for n in names]))
        return seen
    nn._matmul, saved = matmul, nn._matmul
    try:
        with_hook = run(hook)
    finally:
        nn._matmul = saved
    plain = run(None)
    for name in plain:
        np.testing.assert_array_equal(with_hook[name], plain[name], err_msg=name)
    last_pass = events[len(events) // 2:]
    ready = [e for e in last_pass if e[0] == 'ready']
    names = [n for e in ready for n in e[1]]
    assert sorted(names) == sorted(plain) and len(names) == len(set(names)), names
    for event in ready:
        for name, value in zip(event[1], event[2]):
            np.testing.assert_array_equal(value, plain[name], err_msg=name)
    # b's weight is reported before b computes the data gradient of shape (4, 6)
    order = [e[1] if e[0] == 'ready' else e[1] for e in last_pass]
    assert order.index(('b_weight',)) < order.index((4, 6)), order


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_gradients_reported_early_hold_their_final_values(dtype):
    """A gradient reported during its step (grad_ready) is already in its array: in float64 the
    bias gradient is a new array the executor writes after the step, so it is reported then,
    not early (an overlapped reduction would otherwise read the previous pass's gradient)."""
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=6, name='a')
    net = mx.sym.FullyConnected(mx.sym.relu(net), num_hidden=3, name='b')
    sym = mx.sym.SoftmaxOutput(net, name='sm')
    exe = sym.simple_bind(ctx=mx.cpu(), data=(4, 5), type_dict={'data': dtype})
    rs = np.random.RandomState(0)
    for name, arr in exe.arg_dict.items():
        arr[:] = rs.randint(0, 3, arr.shape) if name == 'sm_label' else rs.randn(*arr.shape)
    seen = {}

    def hook(names):
        for name in names or ():
            seen[name] = exe.grad_dict[name].asnumpy().copy()
    exe.set_grad_ready_hook(hook)
    for step in range(3):
        exe.arg_dict['data'][:] = rs.randn(4, 5)
        seen.clear()
        exe.forward(is_train=True)
        exe.backward()
        assert sorted(seen) == sorted(exe.grad_dict)
        for name, value in seen.items():
            np.testing.assert_array_equal(value, exe.grad_dict[name].asnumpy(), err_msg=name)
