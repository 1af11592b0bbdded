"""Symbol construction, naming, attributes, composition, listing, inference, copy and pickle."""
import copy
import pickle

import numpy as np
import pytest

import mxmod as mx


def _mlp():
    data = mx.sym.Variable('data')
    fc1 = mx.sym.FullyConnected(data, name='fc1', num_hidden=8)
    act = mx.sym.Activation(fc1, name='relu1', act_type='relu')
    fc2 = mx.sym.FullyConnected(act, name='fc2', num_hidden=3)
    return mx.sym.SoftmaxOutput(fc2, name='softmax')


def test_listing():
    net = _mlp()
    assert net.list_arguments() == ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias',
                                    'softmax_label']
    assert net.list_outputs() == ['softmax_output']
    internals = net.get_internals()
    assert internals.list_outputs()[:4] == ['data', 'fc1_weight', 'fc1_bias', 'fc1_output']
    assert internals['relu1_output'].list_arguments() == ['data', 'fc1_weight', 'fc1_bias']
    assert net.get_children().list_outputs() == ['fc2_output', 'softmax_label']


def test_batchnorm_aux_and_hidden_outputs():
    bn = mx.sym.BatchNorm(mx.sym.var('x'), name='bn')
    assert bn.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert bn.list_arguments() == ['x', 'bn_gamma', 'bn_beta']
    assert bn.list_outputs() == ['bn_output']
    assert bn.list_inputs() == ['x', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var']


def test_auto_naming_and_prefix():
    with mx.name.NameManager():
        a = mx.sym.var('a')
        assert (a + a).name == '_plus0'
        assert (a + 1).name == '_plusscalar0'
        assert (1 - a).name == '_rminusscalar0'
        assert mx.sym.FullyConnected(a, num_hidden=2).name == 'fullyconnected0'
        assert mx.sym.FullyConnected(a, num_hidden=2).name == 'fullyconnected1'
        assert mx.sym.maximum(a, 1).name == '_maximumscalar0'      # names as MXNet 1.9.1 gives them
        assert mx.sym.minimum(2, a).name == '_minimumscalar0'
        assert mx.sym.maximum(a, a).name == '_maximum0'
    with mx.name.Prefix('net_'):
        assert mx.sym.Activation(a, act_type='relu', name='act').name == 'net_act'


def test_arithmetic_nodes_match_mxnet():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    ops = {'elemwise_add': a + b, 'elemwise_sub': a - b, 'elemwise_mul': a * b,
           'elemwise_div': a / b, '_power': a ** b, '_plus_scalar': a + 1, '_rminus_scalar': 1 - a,
           '_rdiv_scalar': 2 / a, '_rpower_scalar': 2 ** a, '_mul_scalar': -a,
           '_greater_scalar': a > 1, '_lesser_scalar': 1 > a, '_not_equal': a != b, 'abs': abs(a)}
    for op_name, sym in ops.items():
        assert sym._outputs[0][0].op.op_name == op_name
    exe = (2 ** a - a / b).simple_bind(mx.cpu(), a=(3,), b=(3,))
    A, B = np.array([1., 2., 3.]), np.array([2., 4., 8.])
    out = exe.forward(a=A, b=B)[0].asnumpy()
    np.testing.assert_allclose(out, 2 ** A - A / B, rtol=1e-6)


def test_attributes_hidden_keys_and_scope():
    with mx.AttrScope(ctx_group='dev1', __mood__='calm'):
        data = mx.sym.Variable('data', lr_mult=2.0, shape=(2, 3))
        fc = mx.sym.FullyConnected(data, num_hidden=3, name='fc', attr={'__x__': 'y'})
    assert data.attr('lr_mult') == '2.0' and data.attr('__lr_mult__') == '2.0'
    assert data.attr('__shape__') == '(2, 3)'
    attrs = fc.list_attr()
    assert attrs['__ctx_group__'] == 'dev1' and attrs['ctx_group'] == 'dev1'
    assert attrs['__x__'] == 'y' and attrs['num_hidden'] == '3'
    # auto-created weights carry the operator's attributes, as in MXNet's JSON
    assert fc.attr_dict()['fc_weight']['num_hidden'] == '3'
    with pytest.raises(ValueError):
        mx.sym.Variable('v', attr={'a': 1})


def test_compose_replaces_variables():
    net1 = mx.sym.FullyConnected(mx.sym.var('data'), name='fc1', num_hidden=10)
    net2 = mx.sym.FullyConnected(name='fc3', num_hidden=10)
    assert net2.list_arguments() == ['fc3_data', 'fc3_weight', 'fc3_bias']
    composed = net2(fc3_data=net1, name='composed')
    assert composed.list_arguments() == ['data', 'fc1_weight', 'fc1_bias', 'fc3_weight', 'fc3_bias']
    assert net2.list_arguments() == ['fc3_data', 'fc3_weight', 'fc3_bias']   # original untouched
    with pytest.raises(TypeError):
        net2(net1, fc3_weight=net1)


def test_group_indexing_and_errors():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    g = mx.sym.Group([a * 2, b])
    assert len(g) == 2 and g.name is None
    assert g[1].name == 'b' and g['b'].name == 'b'
    with pytest.raises(ValueError, match='no output named'):
        g['zz']
    with pytest.raises(IndexError):
        g[5]
    with pytest.raises(mx.base.NotImplementedForSymbol):
        bool(a)


def test_infer_shape_full_partial_and_errors():
    net = _mlp()
    args, outs, aux = net.infer_shape(data=(4, 5))
    assert dict(zip(net.list_arguments(), args)) == {
        'data': (4, 5), 'fc1_weight': (8, 5), 'fc1_bias': (8,), 'fc2_weight': (3, 8),
        'fc2_bias': (3,), 'softmax_label': (4,)}
    assert outs == [(4, 3)] and aux == []
    x, y = mx.sym.var('x'), mx.sym.var('y')
    s = mx.sym.FullyConnected(x, num_hidden=4, name='f') + mx.sym.FullyConnected(y, num_hidden=4, name='g')
    assert s.infer_shape(x=(2, 3)) == (None, None, None)
    args, _, _ = s.infer_shape_partial(x=(2, 3))
    assert dict(zip(s.list_arguments(), args))['g_weight'] == ()
    with pytest.raises(mx.MXNetError, match='f_weight|shape'):
        s.infer_shape(x=(2, 3), f_weight=(4, 7), y=(2, 3))


def test_infer_type():
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(mx.sym.Cast(data, dtype='float32'), num_hidden=3, name='fc')
    args, outs, aux = net.infer_type(data=np.float16)
    assert args == [np.float16, np.float32, np.float32] and outs == [np.float32]
    args, _, _ = net.infer_type_partial()
    assert args == [None, np.float32, np.float32]


def test_copy_pickle_and_json_roundtrip(tmp_path):
    net = _mlp()
    for other in (copy.copy(net), copy.deepcopy(net), pickle.loads(pickle.dumps(net)),
                  mx.sym.load_json(net.tojson())):
        assert other.tojson() == net.tojson()
    fname = str(tmp_path / 'net-symbol.json')
    net.save(fname)
    assert mx.sym.load(fname).tojson() == net.tojson()
    with pytest.raises(mx.MXNetError, match='nope.json'):
        mx.sym.load(str(tmp_path / 'nope.json'))
    bad = tmp_path / 'bad.json'
    bad.write_text('{"nodes": [{"op": "NoSuchOp", "name": "x", "inputs": []}], "arg_nodes": [], '
                     '"heads": [[0, 0, 0]]}')
    with pytest.raises(mx.MXNetError, match='NoSuchOp'):
        mx.sym.load(str(bad))


def test_fluent_methods():
    x = mx.sym.var('x')
    with mx.name.NameManager():
        a = x.abs(name='abs0')
    assert a._outputs[0][0].op.op_name == 'abs' and a.name == 'abs0'
    r = x.reshape(shape=(2, -1))
    assert r.infer_shape(x=(4, 3))[1] == [(2, 6)]
