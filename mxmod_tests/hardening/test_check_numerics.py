"""MXMOD_CHECK_NUMERICS=1 names the first operator that produced NaN or Inf, in the forward
and in the backward pass (or the input that held it); unset, nothing changes (the executor keeps
its fast path and NaN flows through silently, as in MXNet)."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.executor.numerics import NumericsError


def _net(middle):
    data = mx.sym.var('data')
    hidden = mx.sym.FullyConnected(data, num_hidden=4, name='fc1')
    hidden = middle(hidden)
    hidden = mx.sym.FullyConnected(hidden, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(hidden, name='softmax')


def _train(net, data, monitor=None):
    mod = mx.mod.Module(net)
    mod.bind(data_shapes=[('data', data.shape)], label_shapes=[('softmax_label', (5,))])
    mod.init_params(mx.init.Uniform(1.0))
    mod.init_optimizer()
    if monitor is not None:
        mod.install_monitor(monitor)
    batch = mx.io.DataBatch([mx.nd.array(data)], [mx.nd.zeros((5,))])
    if monitor is not None:
        monitor.tic()
    mod.forward_backward(batch)
    mod.update()
    return mod


LOG = (lambda h: mx.sym.log(h * 0 - 1, name='logp'), np.ones((5, 6)))
SQRT = (lambda h: mx.sym.sqrt(mx.sym.relu(h, name='act'), name='root'), np.ones((5, 6)))


@pytest.fixture
def checking(monkeypatch):
    monkeypatch.setenv('MXMOD_CHECK_NUMERICS', '1')


def test_forward_nan_names_the_operator(checking):
    with pytest.raises(NumericsError, match=r"operator 'logp' \(log\) produced NaN in its output "
                                            r"'output' during the forward pass"):
        _train(_net(LOG[0]), LOG[1])


def test_backward_inf_names_the_operator(checking):
    net = _net(SQRT[0])
    mod = mx.mod.Module(net)
    mod.bind(data_shapes=[('data', (5, 6))], label_shapes=[('softmax_label', (5,))])
    mod.init_params(mx.init.Zero())          # relu(0) = 0, sqrt'(0) = inf
    mod.forward(mx.io.DataBatch([mx.nd.ones((5, 6))], [mx.nd.zeros((5,))]))
    with pytest.raises(NumericsError, match=r"backward pass of operator 'root' \(sqrt\) produced "
                                            r"(NaN|Inf) in the gradient of its input 'data'"):
        mod.backward()


def test_non_finite_input_named(checking):
    data = np.ones((5, 6))
    data[2, 3] = np.nan
    with pytest.raises(NumericsError, match=r"input 'data' \(before any operator ran\) holds "
                                            r"NaN \(1 NaN"):
        _train(_net(lambda h: mx.sym.relu(h)), data)


def test_off_by_default_nan_flows_through_and_fast_path_kept(monkeypatch):
    monkeypatch.delenv('MXMOD_CHECK_NUMERICS', raising=False)
    mod = _train(_net(LOG[0]), LOG[1])
    assert np.isnan(mod.get_outputs()[0].asnumpy()).all()
    assert all(exe._monitor is None for exe in mod._exec_group.execs)
    monkeypatch.setenv('MXMOD_CHECK_NUMERICS', '0')
    assert all(exe._monitor is None for exe in _train(_net(LOG[0]), LOG[1])._exec_group.execs)


def test_user_monitor_sees_the_same_values_under_the_check(monkeypatch):
    seen = {}
    for mode in ('0', '1'):
        monkeypatch.setenv('MXMOD_CHECK_NUMERICS', mode)
        monitor = mx.mon.Monitor(1, pattern='.*')
        _train(_net(lambda h: mx.sym.relu(h, name='act')), np.ones((5, 6)), monitor)
        seen[mode] = sorted(name for _, name, _ in monitor.toc())
    assert seen['0'] == seen['1'] and seen['0']
