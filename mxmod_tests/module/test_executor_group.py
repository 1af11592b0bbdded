"""DataParallelExecutorGroup on its own: memory sharing with shared_group (MXNet's
test_executor_group on a plain FC stack), grad_req resolution, per-device metric updates,
head-gradient slicing, states and device-averaged get_params."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.module import DataParallelExecutorGroup
from mxmod_tests.module.common import cpus


def _stack(layers):
    net = mx.sym.Variable('data')
    for i in range(layers):
        net = mx.sym.FullyConnected(net, num_hidden=4, name='fc%d' % i)
        net = mx.sym.Activation(net, act_type='tanh', name='act%d' % i)
    return mx.sym.LinearRegressionOutput(net, name='out')


DATA = [('data', (6, 4))]
LABEL = [('out_label', (6, 4))]


def _params(sym):
    return [n for n in sym.list_arguments() if n not in ('data', 'out_label')]


def test_shared_group_shares_params_grads_and_input_buffers():
    small, big = _stack(3), _stack(5)
    shared_names = _params(small)
    first = DataParallelExecutorGroup(small, cpus(2), [1, 1], DATA, LABEL, shared_names,
                                      for_training=True, inputs_need_grad=False)
    for buf in first.shared_data_arrays:
        assert sorted(buf) == ['data', 'out_label']
    second = DataParallelExecutorGroup(big, cpus(2), [1, 1], DATA, LABEL, shared_names,
                                       for_training=True, inputs_need_grad=False,
                                       shared_group=first)
    extra = [n for n in big.list_arguments() if n not in shared_names]
    assert second.shared_data_arrays is first.shared_data_arrays
    for i in range(2):
        assert sorted(first.shared_data_arrays[i]) == sorted(extra)
        mine, theirs = second.execs[i], first.execs[i]
        for name in shared_names:
            assert mx.test_utils.same_array(mine.arg_dict[name], theirs.arg_dict[name])
            assert mx.test_utils.same_array(mine.grad_dict[name], theirs.grad_dict[name])
    assert all(second.grad_req[k] == v for k, v in first.grad_req.items())


def test_grad_req_resolution():
    sym = _stack(1)
    names = _params(sym)
    group = DataParallelExecutorGroup(sym, [mx.cpu()], [1], DATA, LABEL, names, True, True,
                                      fixed_param_names=['fc0_bias'], grad_req='add')
    assert group.grad_req == {'data': 'add', 'fc0_weight': 'add', 'fc0_bias': 'null',
                              'out_label': 'null'}
    group = DataParallelExecutorGroup(sym, [mx.cpu()], [1], DATA, LABEL, names, True, False,
                                      grad_req={'out_label': 'write'})
    assert group.grad_req == {'data': 'null', 'fc0_weight': 'write', 'fc0_bias': 'write',
                              'out_label': 'write'}
    group = DataParallelExecutorGroup(sym, [mx.cpu()], [1], DATA, LABEL, names, False, False)
    assert set(group.grad_req.values()) == {'null'} and group.grad_arrays is None
    with pytest.raises(ValueError):
        DataParallelExecutorGroup(sym, [mx.cpu()], [1], DATA, LABEL, names, True, False,
                                  grad_req=['write'])
    with pytest.raises(ValueError):
        DataParallelExecutorGroup(sym, [mx.cpu()], [1], DATA, LABEL, names, True, False,
                                  grad_req=3)


def test_metric_updated_once_per_device_and_monitor_installed():
    sym = _stack(1)
    group = DataParallelExecutorGroup(sym, cpus(3), [1, 1, 1], [('data', (7, 4))],
                                      [('out_label', (7, 4))], _params(sym), False, False)
    assert [(s.start, s.stop) for s in group.slices] == [(0, 2), (2, 4), (4, 7)]
    x = mx.nd.array(np.random.RandomState(0).normal(size=(7, 4)))
    group.forward(mx.io.DataBatch([x], [x]))

    class Count(mx.metric.EvalMetric):
        def __init__(self):
            super(Count, self).__init__('count')
            self.sizes = []

        def update(self, labels, preds):
            self.sizes.append((labels[0].shape[0], preds[0].shape[0]))
    metric = Count()
    group.update_metric(metric, [x], pre_sliced=False)
    assert metric.sizes == [(2, 2), (2, 2), (3, 3)]
    installed = []

    class Mon(object):
        def install(self, exe):
            installed.append(exe)
    group.install_monitor(Mon())
    assert installed == group.execs


def test_backward_slices_head_gradients():
    data = mx.sym.Variable('data')
    sym = mx.sym.FullyConnected(data, num_hidden=3, name='fc', no_bias=True)
    group = DataParallelExecutorGroup(sym, cpus(2), [1, 1], [('data', (4, 2))], None,
                                      ['fc_weight'], True, True)
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    head = np.arange(12, dtype=np.float32).reshape(4, 3)
    group.set_params({'fc_weight': mx.nd.ones((3, 2))}, {})
    group.forward(mx.io.DataBatch([mx.nd.array(x)], None))
    group.backward([mx.nd.array(head)])
    total = sum(g.asnumpy() for g in group.grad_arrays[0])
    np.testing.assert_allclose(total, head.T @ x, rtol=1e-6)
    np.testing.assert_allclose(group.get_input_grads()[0].asnumpy(), head @ np.ones((3, 2)))
    np.testing.assert_allclose(group.get_outputs()[0].asnumpy(), x @ np.ones((2, 3)))


def test_get_params_averages_devices_and_states():
    sym = _stack(1)
    group = DataParallelExecutorGroup(sym, cpus(2), [1, 1], DATA, LABEL, _params(sym), True,
                                      False, state_names=['out_label'])
    group.param_arrays[0][0][:] = 1.0
    group.param_arrays[0][1][:] = 3.0
    arg = {'fc0_weight': mx.nd.zeros((4, 4)), 'fc0_bias': mx.nd.zeros((4,))}
    group.get_params(arg, {})
    np.testing.assert_array_equal(arg['fc0_weight'].asnumpy(), 2.0)
    group.set_states(value=5)
    assert all((s.asnumpy() == 5).all() for s in group.get_states(False)[0])
    new = [[mx.nd.ones((3, 4)), mx.nd.zeros((3, 4))]]
    group.set_states(states=new)
    np.testing.assert_array_equal(group.get_states(False)[0][0].asnumpy(), 1)
    with pytest.raises(mx.MXNetError):
        group.set_states(states=new, value=1)
    with pytest.raises(mx.MXNetError):
        group.get_states()
