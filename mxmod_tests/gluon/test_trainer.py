"""gluon.Trainer against MXNet 1.9.1's recorded parameter values (optimizers, two contexts,
kvstore and local updates, frozen parameters, allreduce_grads + clip_global_norm + update),
against the update a Module applies with the same optimizer, and its states and errors."""
import os

import numpy as np
import pytest

import mxmod as mx

from . import gluon_cases

HERE = os.path.dirname(os.path.abspath(__file__))
TRAINER = np.load(os.path.join(HERE, 'fixtures', 'gluon_trainer.npz'))


@pytest.mark.parametrize('name', sorted(gluon_cases.TRAINER_CASES))
def test_trainer_matches_mxnet(name):
    got = gluon_cases.run_trainer(mx, name)
    prefix = name + '/'
    want = {k[len(prefix):]: TRAINER[k] for k in TRAINER.files if k.startswith(prefix)}
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-6, err_msg=key)


def test_trainer_steps_equal_module_sgd_updates():
    """The same network trained by Trainer (imperative) and by Module (its exported symbol
    with an L2 loss head) with SGD + momentum ends with the same weights."""
    net = gluon_cases.trainer_net(mx)
    net.initialize()
    params = net.collect_params()
    gluon_cases.set_values(mx, params, 11)
    initial = {name: p.data().copy() for name, p in params.items()}
    opt = {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.001}
    trainer = mx.gluon.Trainer(params, 'sgd', opt)
    loss = mx.gluon.loss.L2Loss()
    x, y = mx.nd.array(gluon_cases.TRAIN_X), mx.nd.array(gluon_cases.TRAIN_Y)
    for _ in range(4):
        with mx.autograd.record():
            out = loss(net(x), y)
        out.backward()
        trainer.step(x.shape[0])

    data, label = mx.sym.var('data'), mx.sym.var('label')
    net.hybridize()
    pred = net(data)
    head = mx.sym.MakeLoss(mx.sym.mean(0.5 * mx.sym.square(pred - label), axis=1))
    mod = mx.mod.Module(head, data_names=['data'], label_names=['label'])
    mod.bind(data_shapes=[('data', x.shape)], label_shapes=[('label', y.shape)])
    mod.init_params(arg_params=initial)
    mod.init_optimizer(optimizer='sgd', optimizer_params=dict(opt, rescale_grad=1.0 / 6))
    batch = mx.io.DataBatch([x], [y])
    for _ in range(4):
        mod.forward_backward(batch)
        mod.update()
    args, _ = mod.get_params()
    for name, param in params.items():
        np.testing.assert_allclose(param.data().asnumpy(), args[name].asnumpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=name)


def test_sgd_step_is_the_numpy_formula():
    weight = mx.gluon.Parameter('w', shape=(3,), init=mx.init.Constant(1.0))
    weight.initialize()
    trainer = mx.gluon.Trainer([weight], 'sgd', {'learning_rate': 0.5, 'wd': 0.1})
    with mx.autograd.record():
        out = (weight.data() * mx.nd.array([1., 2., 3.])).sum()
    out.backward()
    trainer.step(2)
    # w - lr * (grad / batch + wd * w)
    np.testing.assert_allclose(weight.data().asnumpy(),
                               1 - 0.5 * (np.array([1., 2., 3.]) / 2 + 0.1), rtol=1e-6)


@pytest.mark.parametrize('contexts', [1, 2])
def test_save_and_load_states(tmp_path, contexts):
    """Adam's states survive save_states / load_states, on the updater (one context) or in
    the kvstore that updates (two contexts)."""
    ctxs = [mx.cpu(i) for i in range(contexts)]
    net = gluon_cases.trainer_net(mx)
    net.initialize(ctx=ctxs)
    gluon_cases.set_values(mx, net.collect_params(), 5)
    trainer = mx.gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': 0.01})

    def step():
        xs = mx.gluon.utils.split_and_load(mx.nd.array(gluon_cases.TRAIN_X), ctxs)
        ys = mx.gluon.utils.split_and_load(mx.nd.array(gluon_cases.TRAIN_Y), ctxs)
        with mx.autograd.record():
            losses = [mx.gluon.loss.L2Loss()(net(x), y) for x, y in zip(xs, ys)]
        mx.autograd.backward(losses)
        trainer.step(6)

    step()
    trainer.save_states(str(tmp_path / 'adam.states'))
    saved = {k: v.data().copy() for k, v in net.collect_params().items()}
    step()
    after = {k: v.data().asnumpy() for k, v in net.collect_params().items()}
    for name, param in net.collect_params().items():
        param.set_data(saved[name])
    trainer.load_states(str(tmp_path / 'adam.states'))
    assert trainer.learning_rate == 0.01
    step()
    for name, param in net.collect_params().items():
        np.testing.assert_allclose(param.data().asnumpy(), after[name], rtol=1e-6)


def test_stale_gradient_and_argument_errors():
    with mx.name.NameManager():
        used, unused = mx.gluon.nn.Dense(2, in_units=3), mx.gluon.nn.Dense(2, in_units=3)
    used.initialize()
    unused.initialize()
    params = mx.gluon.ParameterDict()
    params.update(used.collect_params())
    params.update(unused.collect_params())
    trainer = mx.gluon.Trainer(params, 'sgd', {'learning_rate': 0.1})
    with mx.autograd.record():
        out = used(mx.nd.ones((1, 3))).sum()
    out.backward()
    with pytest.raises(UserWarning, match='dense1_bias.*has not been updated by backward'):
        trainer.step(1)
    before = unused.weight.data().asnumpy()
    trainer.step(1, ignore_stale_grad=True)
    np.testing.assert_array_equal(unused.weight.data().asnumpy(), before)
    with pytest.raises(ValueError, match='list or dict of Parameters'):
        mx.gluon.Trainer(used.weight, 'sgd')
    with pytest.raises(AssertionError, match='optimizer_params must be None'):
        mx.gluon.Trainer(used.collect_params(), mx.optimizer.SGD(), {'learning_rate': 1})
    other = mx.gluon.Parameter('other', shape=(2,))
    other.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(AssertionError, match='same set of contexts'):
        mx.gluon.Trainer([used.weight, other], 'sgd')
