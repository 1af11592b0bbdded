"""Module API against numpy references and MXNet 1.9.1 behaviour: state errors, bind/set_params
rules, reshape and rescale_grad, input gradients, layouts, predict/score/iter_predict."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.module.common import mlp_sym, toy_data, cpus


def _np_mlp(params, x):
    h = np.maximum(x @ params['fc1_weight'].T + params['fc1_bias'], 0)
    z = h @ params['fc2_weight'].T + params['fc2_bias']
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _bound_mlp(context=mx.cpu(), batch=10, for_training=True):
    mod = mx.mod.Module(mlp_sym(), context=context)
    mod.bind(data_shapes=[('data', (batch, 6))], label_shapes=[('softmax_label', (batch,))],
             for_training=for_training)
    mod.init_params(mx.init.Xavier())
    return mod


def test_wrong_state_raises_naming_the_missing_call():
    mod = mx.mod.Module(mlp_sym())
    batch = mx.io.DataBatch([mx.nd.ones((10, 6))], [mx.nd.zeros((10,))])
    with pytest.raises(MXNetError, match=r'bind\(\)'):
        mod.forward(batch)
    with pytest.raises(MXNetError, match=r'bind\(\)'):
        mod.init_params()
    mod.bind(data_shapes=[('data', (10, 6))], label_shapes=[('softmax_label', (10,))])
    with pytest.raises(MXNetError, match=r'init_params\(\)'):
        mod.forward(batch)
    mod.init_params()
    mod.forward_backward(batch)
    with pytest.raises(MXNetError, match=r'init_optimizer\(\)'):
        mod.update()
    with pytest.raises(MXNetError, match='inputs_need_grad'):
        mod.get_input_grads()


def test_bind_with_array_shape_is_type_error():
    mod = mx.mod.Module(mlp_sym())
    with pytest.raises(TypeError):
        mod.bind(data_shapes=[('data', mx.nd.array([10, 10]))])
    assert not mod.binded
    with pytest.raises(ValueError, match='data_names'):
        mod.bind(data_shapes=[('x', (10, 6))])
    mod.bind(data_shapes=[('data', (10, 6))])
    assert mod.binded


def test_unknown_input_names_raise():
    with pytest.raises(ValueError, match='not found in symbol.list_arguments'):
        mx.mod.Module(mlp_sym(), data_names=['dat'])
    with pytest.warns(UserWarning, match='not found'):
        mx.mod.Module(mlp_sym(), label_names=['lbl'])


def test_set_params_missing_and_extra_rules():
    mod = _bound_mlp()
    arg, aux = mod.get_params()
    full = {k: v.copy() for k, v in arg.items()}
    missing = {k: v for k, v in full.items() if k != 'fc2_bias'}
    extra = dict(full, extra_weight=mx.nd.ones((2,)))
    mod.set_params(full, aux)
    with pytest.raises(RuntimeError, match='fc2_bias is not presented'):
        mod.set_params(missing, aux)
    mod.set_params(missing, aux, allow_missing=True)
    moved = {k: v + 1 for k, v in extra.items()}
    mod.set_params(moved, aux)          # extras ignored without allow_missing, as in MXNet
    for name, value in mod.get_params()[0].items():
        np.testing.assert_array_equal(value.asnumpy(), moved[name].asnumpy())
    with pytest.raises(ValueError, match='extra_weight'):
        mod.set_params(extra, aux, allow_missing=True)
    mod.set_params(extra, aux, allow_missing=True, allow_extra=True)
    with pytest.raises(RuntimeError):
        mod.set_params(dict(missing, extra_weight=mx.nd.ones((2,))), aux)


def test_reshape_keeps_rescale_grad_and_sums_devices():
    # MXNet's test_module_reshape: lr 1, out_grads of ones; bias grads are summed over devices
    data = mx.sym.Variable('data')
    sym = mx.sym.FullyConnected(data, num_hidden=20, name='fc')
    mod = mx.mod.Module(sym, ('data',), None, context=cpus(2))
    mod.bind(data_shapes=[('data', (7, 20))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={'learning_rate': 1})
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones((7, 20))], label=None))
    mod.backward([mx.nd.ones((7, 20))])
    mod.update()
    assert mod.get_outputs()[0].shape == (7, 20)
    np.testing.assert_allclose(mod.get_params()[0]['fc_bias'].asnumpy(), -1, rtol=1e-6)
    mod.reshape(data_shapes=[('data', (14, 20))])
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones((14, 20))], label=None))
    mod.backward([mx.nd.ones((14, 20))])
    mod.update()
    assert mod.get_outputs()[0].shape == (14, 20)
    np.testing.assert_allclose(mod.get_params()[0]['fc_bias'].asnumpy(), -3, rtol=1e-6)


def test_input_grads_in_data_names_order():
    a, b, c = mx.sym.Variable('a'), mx.sym.Variable('b'), mx.sym.Variable('c')
    sym = a + 2 * b + 3 * c
    mod = mx.mod.Module(sym, data_names=['b', 'c', 'a'], label_names=None, context=cpus(2))
    mod.bind(data_shapes=[['b', (5, 5)], ['c', (5, 5)], ['a', (5, 5)]], inputs_need_grad=True)
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones((5, 5))] * 3, label=None))
    mod.backward([mx.nd.ones((5, 5))])
    grads = mod.get_input_grads()
    for grad, value in zip(grads, [2, 3, 1]):
        np.testing.assert_array_equal(grad.asnumpy(), np.full((5, 5), value))


def test_tnc_layout_splits_axis_1():
    data = mx.sym.Variable('data')
    sym = mx.sym.Activation(data, act_type='relu', __layout__='TNC')
    mod = mx.mod.Module(sym, ('data',), None, context=cpus(2))
    mod.bind([mx.io.DataDesc('data', (3, 8, 7), layout='TNC')])
    mod.init_params()
    x = np.random.RandomState(1).normal(size=(3, 8, 7)).astype(np.float32)
    mod.forward(mx.io.DataBatch(data=[mx.nd.array(x)], label=None))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.maximum(x, 0))
    per_device = mod.get_outputs(merge_multi_context=False)[0]
    assert [o.shape for o in per_device] == [(3, 4, 7), (3, 4, 7)]
    np.testing.assert_array_equal(per_device[1].asnumpy(), np.maximum(x[:, 4:], 0))


@pytest.mark.parametrize('ndev', [1, 3])
def test_predict_strips_pad_and_matches_numpy(ndev):
    x, y = toy_data(10)
    mod = _bound_mlp(cpus(ndev), batch=4, for_training=False)
    params = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    it = mx.io.NDArrayIter(x, y, batch_size=4, last_batch_handle='pad')
    pred = mod.predict(it)
    np.testing.assert_allclose(pred.asnumpy(), _np_mlp(params, x), rtol=1e-5, atol=1e-6)
    batches = mod.predict(it, merge_batches=False)
    assert [b[0].shape for b in batches] == [(4, 3), (4, 3), (2, 3)]
    assert isinstance(mod.predict(it, always_output_list=True), list)
    assert len(mod.predict(it, num_batch=2)) == 8
    seen = [(out[0].shape[0], nbatch) for out, nbatch, _ in mod.iter_predict(it)]
    assert seen == [(4, 0), (4, 1), (2, 2)]
    direct = mod.predict(x[:4])
    np.testing.assert_allclose(direct.asnumpy(), _np_mlp(params, x[:4]), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match='DataIter'):
        mod.predict([x])


def test_score_counts_padded_samples_and_calls_back():
    x, y = toy_data(10)
    mod = _bound_mlp(batch=4, for_training=False)
    params = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    it = mx.io.NDArrayIter(x, y, batch_size=4, last_batch_handle='pad')
    ends = []
    res = mod.score(it, 'acc', batch_end_callback=lambda p: ends.append(p.nbatch),
                    score_end_callback=lambda p: ends.append(('end', p.nbatch)))
    xp = np.concatenate([x, x[:2]])
    yp = np.concatenate([y, y[:2]])
    expected = float(np.mean(_np_mlp(params, xp).argmax(axis=1) == yp))
    assert res == [('accuracy', pytest.approx(expected))]
    assert ends == [0, 1, 2, ('end', 3)]


def test_forward_reshapes_for_new_batch_size_and_namedtuple_batches():
    from collections import namedtuple
    Batch = namedtuple('Batch', ['data'])
    fc_only = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3, name='fc')
    unlabelled = mx.mod.Module(fc_only, label_names=None)
    unlabelled.bind(data_shapes=[('data', (10, 6))], for_training=False)
    unlabelled.init_params()
    unlabelled.forward(Batch([mx.nd.ones((3, 6))]))
    assert unlabelled.get_outputs()[0].shape == (3, 3)
    assert unlabelled.data_shapes[0].shape == (3, 6)
    mod = _bound_mlp(batch=10, for_training=False)
    with pytest.raises(MXNetError, match='softmax_label'):
        mod.forward(Batch([mx.nd.ones((3, 6))]))  # the bound label would change shape
    mod = _bound_mlp(batch=10, for_training=False)
    mod.forward(mx.io.DataBatch([mx.nd.ones((12, 6))], [mx.nd.zeros((12,))]))
    assert mod.get_outputs()[0].shape == (12, 3)
    assert mod.label_shapes[0].shape == (12,)
    assert mod.output_shapes == [('softmax_output', (12, 3))]


def test_fixed_params_and_grad_req_add():
    x, y = toy_data(10)
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    mod = mx.mod.Module(mlp_sym(), fixed_param_names=['fc1_weight'])
    mod.bind(data_shapes=[('data', (10, 6))], label_shapes=[('softmax_label', (10,))])
    mod.init_params(mx.init.Xavier())
    before = mod.get_params()[0]['fc1_weight'].asnumpy()
    mod.init_optimizer(optimizer_params={'learning_rate': 1.0})
    mod.forward_backward(batch)
    mod.update()
    np.testing.assert_array_equal(mod.get_params()[0]['fc1_weight'].asnumpy(), before)
    assert mod._exec_group.grad_arrays[0][0] is None
    add = mx.mod.Module(mlp_sym())
    add.bind(data_shapes=[('data', (10, 6))], label_shapes=[('softmax_label', (10,))],
             grad_req='add')
    add.init_params(mx.init.Xavier())
    add.forward_backward(batch)
    once = add._exec_group.grad_arrays[1][0].asnumpy().copy()
    add.forward_backward(batch)
    np.testing.assert_allclose(add._exec_group.grad_arrays[1][0].asnumpy(), 2 * once, rtol=1e-6)


def test_progress_bar_does_not_change_training(capsys):
    x, y = toy_data(20)
    results = []
    for progress in (False, True):
        mx.random.seed(3)
        it = mx.io.NDArrayIter(x, y, batch_size=5)
        mod = mx.mod.Module(mlp_sym())
        mod.fit(it, num_epoch=1, initializer=mx.init.Xavier(), progress_bar=progress)
        results.append(mod.get_params()[0]['fc2_weight'].asnumpy())
    np.testing.assert_array_equal(results[0], results[1])
    assert 'Epoch[0]' in capsys.readouterr().err
