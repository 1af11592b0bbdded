"""SequentialModule and PythonLossModule: a chain of modules trains exactly like the one Module over
the whole network (gradients flow through get_input_grads)."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.module.common import mlp_sym, toy_data


def _first_half():
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=8, name='fc1')
    return mx.sym.Activation(net, act_type='relu', name='relu1')


def _second_half():
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def _fit(mod, init):
    x, y = toy_data(20)
    it = mx.io.NDArrayIter(x, y, batch_size=5)
    mod.fit(it, num_epoch=2, arg_params=init, optimizer_params={'learning_rate': 0.5},
            eval_metric='acc')
    return mod.get_params()[0]


def _init():
    rng = np.random.RandomState(7)
    shapes = {'fc1_weight': (8, 6), 'fc1_bias': (8,), 'fc2_weight': (3, 8), 'fc2_bias': (3,)}
    return {k: mx.nd.array(rng.normal(0, 0.5, s)) for k, s in shapes.items()}


def test_sequential_equals_single_module():
    reference = _fit(mx.mod.Module(mlp_sym()), _init())
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(_first_half(), label_names=None)) \
       .add(mx.mod.Module(_second_half()), take_labels=True, auto_wiring=True)
    got = _fit(seq, _init())
    assert sorted(got) == sorted(reference)
    for name, value in reference.items():
        np.testing.assert_allclose(got[name].asnumpy(), value.asnumpy(), rtol=1e-5, atol=1e-6)
    assert seq.output_shapes == [('softmax_output', (5, 3))]
    assert seq.label_shapes[0].name == 'softmax_label'


def test_sequential_rules():
    seq = mx.mod.SequentialModule()
    with pytest.raises(ValueError, match='Unknown meta'):
        seq.add(mx.mod.Module(_first_half(), label_names=None), take_label=True)
    with pytest.raises(MXNetError, match='empty SequentialModule'):
        mx.mod.SequentialModule().bind([('data', (5, 6))])
    dup = mx.mod.SequentialModule()
    dup.add(mx.mod.Module(_first_half(), label_names=None))
    dup.add(mx.mod.Module(_first_half(), label_names=None), auto_wiring=True)
    dup.bind([('data', (5, 6))], for_training=False)
    with pytest.raises(MXNetError, match='Duplicated parameter names'):
        dup.init_params()


def _softmax_ce_grad(scores, labels):
    """Gradient of softmax cross-entropy summed over the batch (what SoftmaxOutput computes)."""
    z = scores.asnumpy()
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(p)), labels.asnumpy().astype(int)] -= 1
    return p


def test_python_loss_module_matches_softmax_output():
    reference = _fit(mx.mod.Module(mlp_sym()), _init())
    logits = mx.sym.FullyConnected(_first_half(), num_hidden=3, name='fc2')
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(logits, label_names=None))
    seq.add(mx.mod.PythonLossModule(grad_func=_softmax_ce_grad, data_names=('fc2_output',)),
            take_labels=True, auto_wiring=True)
    got = _fit(seq, _init())
    for name, value in reference.items():
        np.testing.assert_allclose(got[name].asnumpy(), value.asnumpy(), rtol=1e-4, atol=1e-5)


def test_python_loss_module_contract():
    loss = mx.mod.PythonLossModule()
    assert loss.output_names == ['pyloss_output']
    loss.bind([('data', (4, 3))], [('softmax_label', (4,))])
    assert loss.output_shapes == [('pyloss_output', (4, 3))]
    batch = mx.io.DataBatch([mx.nd.ones((4, 3))], [mx.nd.zeros((4,))])
    loss.forward(batch, is_train=True)
    assert loss.get_outputs()[0] is batch.data[0]
    with pytest.raises(MXNetError, match='grad_func'):
        loss.backward()
    with pytest.raises(MXNetError, match='out_grads should be None'):
        loss.backward([mx.nd.ones((4, 3))])
    with pytest.raises(MXNetError, match='write'):
        mx.mod.PythonLossModule().bind([('data', (4, 3))], grad_req='add')
