"""Gluon on emulated GPUs: Parameters initialized on two devices, a hybridized and an
imperative network trained by Trainer (through the device kvstore) give the numbers the same
training gives on two CPU contexts; save/load moves the values to a GPU."""
import numpy as np
import pytest

import mxmod as mx


def _net():
    with mx.name.NameManager():
        net = mx.gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(mx.gluon.nn.Conv2D(4, 3, use_bias=False, in_channels=3),
                    mx.gluon.nn.BatchNorm(in_channels=4), mx.gluon.nn.Activation('relu'),
                    mx.gluon.nn.Dense(2, in_units=64))
    return net


def _train(ctxs, hybridize):
    net = _net()
    net.initialize(mx.init.Xavier(), ctx=ctxs)
    rs = np.random.RandomState(0)
    for name in sorted(net.collect_params().keys()):
        param = net.collect_params()[name]
        low = 0.5 if name.endswith('running_var') else -0.5
        param.set_data(mx.nd.array(rs.uniform(low, low + 1.0, param.shape)))
    if hybridize:
        net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd',
                               {'learning_rate': 0.1, 'momentum': 0.9})
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    x = mx.nd.array(rs.uniform(-1, 1, (8, 3, 6, 6)))
    y = mx.nd.array(rs.randint(0, 2, 8))
    for _ in range(3):
        xs = mx.gluon.utils.split_and_load(x, ctxs)
        ys = mx.gluon.utils.split_and_load(y, ctxs)
        with mx.autograd.record():
            losses = [loss(net(a), b) for a, b in zip(xs, ys)]
        mx.autograd.backward(losses)
        trainer.step(8)
    return net, {name: [arr.asnumpy() for arr in p.list_data()]
                 for name, p in net.collect_params().items()}


@pytest.mark.parametrize('hybridize', [False, True])
def test_gluon_training_on_gpus_matches_cpus(gpus, hybridize):  # pylint: disable=unused-argument
    _, want = _train([mx.cpu(0), mx.cpu(1)], hybridize)
    net, got = _train([mx.gpu(0), mx.gpu(1)], hybridize)
    assert net[0].weight.list_ctx() == [mx.gpu(0), mx.gpu(1)]
    assert net[0].weight.data(mx.gpu(1)).context == mx.gpu(1)
    for name, values in want.items():
        for mine, theirs in zip(got[name], values):
            np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5, err_msg=name)


def test_gluon_parameters_load_onto_a_gpu(gpus, tmp_path):  # pylint: disable=unused-argument
    net, _ = _train([mx.cpu(0)], True)
    path = str(tmp_path / 'net.params')
    net.save_parameters(path)
    other = _net()
    other.load_parameters(path, ctx=mx.gpu(1))
    x = mx.nd.ones((2, 3, 6, 6))
    out = other(x.as_in_context(mx.gpu(1)))
    assert out.context == mx.gpu(1)
    np.testing.assert_allclose(out.asnumpy(), net(x).asnumpy(), rtol=1e-5, atol=1e-6)
