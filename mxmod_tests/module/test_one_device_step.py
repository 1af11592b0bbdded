"""Module's step on one host device (the executor group copies the batch whole and calls its
executor directly): every kind of batch Module.forward accepts still loads, reshapes and fails
as before, and update_metric sees the batch's labels."""
import warnings
import numpy as np
import pytest

import mxmod as mx


def _module(batch=4):
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(net, name='softmax'), context=mx.cpu())
    mod.bind(data_shapes=[('data', (batch, 5))], label_shapes=[('softmax_label', (batch,))])
    mod.init_params(mx.init.Uniform(0.5))
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1})
    return mod


def _reference(mod, x):
    args = mod.get_params()[0]
    z = x @ args['fc_weight'].asnumpy().T + args['fc_bias'].asnumpy()
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_every_kind_of_batch_loads():
    mod = _module()
    assert mod._exec_group._single is not None
    rs = np.random.RandomState(0)
    x = rs.randn(4, 5).astype(np.float32)
    y = np.array([0, 1, 2, 1], np.float32)
    for batch in (mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]),
                  mx.io.DataBatch([x], [y]),                       # numpy arrays
                  mx.io.DataBatch((mx.nd.array(x),), (mx.nd.array(y),)),   # tuples
                  mx.io.DataBatch([mx.nd.array(x)], None)):        # no label
        mod.forward(batch, is_train=False)
        np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), _reference(mod, x),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(mod._exec_group.execs[0].arg_dict['data'].asnumpy(), x)


def test_another_batch_size_reshapes_and_a_wrong_shape_is_refused():
    mod = _module()
    x = np.ones((6, 5), np.float32)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.zeros((6,))]), is_train=False)
    assert mod.get_outputs()[0].shape == (6, 3)
    with pytest.raises(mx.base.MXNetError, match='cannot load an array of shape'):
        mod._exec_group.forward(mx.io.DataBatch([mx.nd.ones((6, 4))], [mx.nd.zeros((6,))]))


def test_backward_without_labels_warns_once_and_uses_the_last_labels():
    """MXNet trains on whatever the label input holds; mxmod does too, with one warning."""
    mod = _module()
    x, y = mx.nd.ones((4, 5)), mx.nd.array([0, 1, 2, 0])
    mod.forward_backward(mx.io.DataBatch([x], [y]))
    first = [g.asnumpy().copy() for g in mod._exec_group.execs[0].grad_arrays if g is not None]
    mod.forward(mx.io.DataBatch([x], None), is_train=True)
    with pytest.warns(UserWarning, match="without labels.*'softmax_label'.*earlier batch"):
        mod.backward()
    again = [g.asnumpy() for g in mod._exec_group.execs[0].grad_arrays if g is not None]
    for before, after in zip(first, again):      # the same batch, the same (stale) labels
        np.testing.assert_allclose(before, after, rtol=1e-6)
    mod.forward(mx.io.DataBatch([x], None), is_train=True)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        mod.backward()                             # said once


def test_training_with_an_unbound_label_warns_and_trains():
    """keras-mxnet's target_tensors: a label bound without a shape (label_shapes=None) is an
    input that nothing feeds; MXNet trains against what it holds, and so does mxmod."""
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(mx.sym.FullyConnected(
        mx.sym.var('data'), num_hidden=3, name='fc'), name='softmax'))
    mod.bind(data_shapes=[('data', (4, 5))], label_shapes=None)
    mod.init_params(mx.init.Uniform(0.1))
    mod.init_optimizer()
    with pytest.warns(UserWarning, match="'softmax_label'.*label_shapes=None"):
        mod.forward_backward(mx.io.DataBatch([mx.nd.ones((4, 5))], None))
    mod.update()
    grad = mod._exec_group.execs[0].grad_dict['fc_bias'].asnumpy()
    assert np.isfinite(grad).all() and np.abs(grad).sum() > 0


def test_update_metric_reads_the_batch_labels():
    mod = _module()
    rs = np.random.RandomState(1)
    x = rs.randn(4, 5).astype(np.float32)
    y = mx.nd.array([0, 1, 2, 1])
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], [y]), is_train=False)
    metric = mx.metric.Accuracy()
    mod.update_metric(metric, [y])
    want = float((_reference(mod, x).argmax(axis=1) == y.asnumpy()).mean())
    assert metric.get() == ('accuracy', want)
    np.testing.assert_array_equal(y.asnumpy(), [0, 1, 2, 1])       # not changed


def _two_inputs(contexts):
    """data and aux_data in, softmax_label and other_label bound (the second label unused by
    the network but loaded), on ``contexts``."""
    net = mx.sym.FullyConnected(mx.sym.concat(mx.sym.Variable('data'), mx.sym.Variable('aux_data'),
                                              dim=1), num_hidden=7, name='fc')
    net = mx.sym.Group([mx.sym.SoftmaxOutput(net, name='softmax'),
                        mx.sym.LinearRegressionOutput(net, name='reg')])
    mod = mx.mod.Module(net, data_names=['data', 'aux_data'],
                        label_names=['softmax_label', 'reg_label'], context=contexts)
    mod.bind(data_shapes=[('data', (4, 5)), ('aux_data', (4, 2))],
             label_shapes=[('softmax_label', (4,)), ('reg_label', (4, 7))])
    mod.init_params()
    return mod


@pytest.mark.parametrize('ndev', [1, 2])
@pytest.mark.parametrize('kind,position,name,wrong', [
    ('label', 0, 'softmax_label', (4, 7)), ('label', 1, 'reg_label', (4,)),
    ('data', 1, 'aux_data', (4, 3))])
def test_wrong_shape_names_the_input_and_its_kind(ndev, kind, position, name, wrong):
    """A label (or a data array whose batch declares the bound shapes) of the wrong shape: the
    error names the input, says data or label and gives both whole-batch shapes (MXNet 1.9.1
    only says 'Incompatible attr in node at 0-th output: expected [4,7], got [4]')."""
    mod = _two_inputs([mx.cpu(i) for i in range(ndev)])
    data = [mx.nd.ones((4, 5)), mx.nd.ones((4, 2))]
    label = [mx.nd.zeros((4,)), mx.nd.zeros((4, 7))]
    arrays = data if kind == 'data' else label
    arrays[position] = mx.nd.ones(wrong)
    batch = mx.io.DataBatch(data, label, provide_data=mod.data_shapes,
                            provide_label=mod.label_shapes)
    bound = dict((d.name, d.shape) for d in mod.data_shapes + mod.label_shapes)[name]
    expected = ("cannot load an array of shape %s into an input of shape %s: %s '%s' (%s %d of "
                "the batch) was bound with shape %s" % (wrong, bound, kind, name, kind, position,
                                                        bound))
    with pytest.raises(mx.base.MXNetError) as info:
        mod.forward(batch, is_train=True)
    assert str(info.value).startswith(expected), str(info.value)


def test_wrong_shape_in_a_presliced_batch_names_the_input():
    mod = _two_inputs([mx.cpu(0), mx.cpu(1)])
    parts = [mx.io.DataBatch([mx.nd.ones((2, 5)), mx.nd.ones((2, 2))],
                             [mx.nd.zeros((2,)), mx.nd.zeros((2, 7) if i else (2, 6))])
             for i in range(2)]
    with pytest.raises(mx.base.MXNetError, match=r"cannot load an array of shape \(2, 6\) into an "
                       r"input of shape \(2, 7\) \(one device's part of the batch\): label "
                       r"'reg_label' \(label 1 of the batch\)"):
        mod._exec_group.forward(parts, is_train=True)   # pylint: disable=protected-access
