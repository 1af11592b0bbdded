"""export_model's interface: symbol/params as files or objects, input specs, dynamic shapes,
opsets, large models, and its errors."""
import sys

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError

from .common import export_and_compare, mx_forward, onnx, ort_run, random_params


def _convnet():
    data = mx.sym.Variable('data')
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name='conv')
    net = mx.sym.BatchNorm(net, name='bn')
    net = mx.sym.Activation(net, act_type='relu', name='relu')
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), name='pool')
    net = mx.sym.Reshape(net, shape=(0, -1), name='flat')
    net = mx.sym.FullyConnected(net, num_hidden=5, name='fc')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def _setup(shape=(2, 3, 8, 8)):
    net = _convnet()
    args, auxs = random_params(net, {'data': shape})
    x = np.random.RandomState(1).normal(0, 1, shape).astype(np.float32)
    return net, args, auxs, x


def test_files_in_and_names_out(tmp_path):
    net, args, auxs, x = _setup()
    net.save(str(tmp_path / 'net-symbol.json'))
    saved = {'arg:' + k: v for k, v in args.items()}
    saved.update({'aux:' + k: v for k, v in auxs.items()})
    mx.nd.save(str(tmp_path / 'net-0000.params'), saved)
    path = mx.onnx.export_model(str(tmp_path / 'net-symbol.json'), str(tmp_path / 'net-0000.params'),
                                [x.shape], np.float32, str(tmp_path / 'net.onnx'))
    assert path == str(tmp_path / 'net.onnx')
    model = onnx.load(path)
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ['data']
    assert [o.name for o in model.graph.output] == ['softmax']
    names = {i.name for i in model.graph.initializer}
    assert set(args) - {'bn_gamma'} | set(auxs) <= names   # fix_gamma: bn_gamma is not used
    np.testing.assert_allclose(ort_run(path, {'data': x})[0], mx_forward(net, args, auxs,
                                                                         {'data': x})[0],
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize('form', ['dict', 'prefixed', 'list', 'numpy'])
def test_param_forms(form, tmp_path):
    net, args, auxs, x = _setup()
    params = {'dict': dict(args, **auxs), 'list': [args, auxs],
              'prefixed': dict({'arg:' + k: v for k, v in args.items()},
                               **{'aux:' + k: v for k, v in auxs.items()}),
              'numpy': {k: v.asnumpy() for k, v in dict(args, **auxs).items()}}[form]
    path = mx.onnx.export_model(net, params, input_shape=[x.shape], input_type=np.float32,
                                onnx_file_path=str(tmp_path / 'm.onnx'))
    np.testing.assert_allclose(ort_run(path, {'data': x})[0],
                               mx_forward(net, args, auxs, {'data': x})[0], rtol=1e-4, atol=1e-6)


def test_dynamic_batch(tmp_path):
    net, args, auxs, x = _setup()
    path = mx.onnx.export_model(net, [args, auxs], [x.shape], np.float32, str(tmp_path / 'd.onnx'),
                                dynamic=True, dynamic_input_shapes=[('batch', 3, 8, 8)])
    model = onnx.load(path)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == 'batch'
    for batch in (1, 5):
        xb = np.random.RandomState(batch).normal(0, 1, (batch, 3, 8, 8)).astype(np.float32)
        np.testing.assert_allclose(ort_run(path, {'data': xb})[0],
                                   mx_forward(net, args, auxs, {'data': xb})[0],
                                   rtol=1e-4, atol=1e-6)


def test_dynamic_reshape_codes(tmp_path):
    """Reshape codes over dynamic dimensions become run-time shapes."""
    data = mx.sym.Variable('data')
    net = mx.sym.Reshape(data, shape=(-3, -4, 2, -1), name='r1')
    net = mx.sym.Reshape(net, shape=(0, -1, 2), reverse=True, name='r2')
    net = mx.sym.broadcast_axis(mx.sym.expand_dims(net, axis=0), axis=0, size=2)
    path = mx.onnx.export_model(net, {}, [(2, 3, 4)], np.float32, str(tmp_path / 'r.onnx'),
                                dynamic=True, dynamic_input_shapes=[(None, None, 4)])
    for shape in [(2, 3, 4), (3, 5, 4), (1, 1, 4)]:
        x = np.random.normal(0, 1, shape).astype(np.float32)
        expected = mx_forward(net, {}, {}, {'data': x})[0]
        got = ort_run(path, {'data': x})[0]
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def test_dynamic_all_dims_default(tmp_path):
    net, args, auxs, x = _setup()
    path = mx.onnx.export_model(net, [args, auxs], [x.shape], np.float32, str(tmp_path / 'a.onnx'),
                                dynamic=True)
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    assert all(not d.HasField('dim_value') for d in dims)
    xb = np.random.normal(0, 1, (3, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(ort_run(path, {'data': xb})[0],
                               mx_forward(net, args, auxs, {'data': xb})[0], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize('opset', [13, 15, 18, None])
def test_opsets(opset, tmp_path):
    net, args, auxs, x = _setup()
    path, _, _, _ = export_and_compare(net, {'data': x}, tmp_path, args, auxs,
                                       opset_version=opset)
    version = onnx.load(path).opset_import[0].version
    assert version == (opset or onnx.defs.onnx_opset_version())


def test_large_model_external_data(tmp_path):
    net, args, auxs, x = _setup()
    path = mx.onnx.export_model(net, [args, auxs], [x.shape], np.float32,
                                str(tmp_path / 'big.onnx'), large_model=True)
    assert (tmp_path / 'big.onnx.data').exists()
    onnx.checker.check_model(path)
    np.testing.assert_allclose(ort_run(path, {'data': x})[0],
                               mx_forward(net, args, auxs, {'data': x})[0], rtol=1e-4, atol=1e-6)


def test_shape_inference_and_verbose(tmp_path, caplog):
    net, args, auxs, x = _setup()
    with caplog.at_level('INFO'):
        path = mx.onnx.export_model(net, [args, auxs], [x.shape], np.float32,
                                    str(tmp_path / 's.onnx'), verbose=True,
                                    run_shape_inference=True)
    assert "Converting Convolution 'conv'" in caplog.text
    assert len(onnx.load(path).graph.value_info) > 0


def test_multiple_inputs_and_types(tmp_path):
    a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    net = mx.sym.broadcast_add(mx.sym.Embedding(b, input_dim=10, output_dim=3, name='emb'),
                               mx.sym.expand_dims(a, 1))
    args = {'emb_weight': mx.nd.array(np.random.normal(0, 1, (10, 3)))}
    ia = np.random.normal(0, 1, (2, 3)).astype(np.float32)
    ib = np.array([[1, 2, 3, 4], [9, 0, 1, 2]], dtype=np.int32)
    assert net.list_inputs() == ['b', 'emb_weight', 'a']   # shapes follow this order
    path = mx.onnx.export_model(net, args, [(2, 4), (2, 3)], [np.int32, np.float32],
                                str(tmp_path / 'multi.onnx'))
    model = onnx.load(path)
    assert [i.type.tensor_type.elem_type for i in model.graph.input] == [
        onnx.TensorProto.INT32, onnx.TensorProto.FLOAT]
    np.testing.assert_allclose(ort_run(path, {'a': ia, 'b': ib})[0],
                               mx_forward(net, args, {}, {'a': ia, 'b': ib})[0], rtol=1e-6)


def test_group_outputs_named_and_unique(tmp_path):
    data = mx.sym.Variable('data')
    fc = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    net = mx.sym.Group([fc, mx.sym.relu(fc, name='act'), fc, data])
    args, _ = random_params(net, {'data': (2, 4)})
    x = np.random.normal(0, 1, (2, 4)).astype(np.float32)
    path, expected, _, _ = export_and_compare(net, {'data': x}, tmp_path, args, {})
    names = [o.name for o in onnx.load(path).graph.output]
    assert names[:2] == ['fc', 'act'] and len(set(names)) == 4


def test_errors(tmp_path):
    net, args, auxs, x = _setup()
    out = str(tmp_path / 'e.onnx')
    with pytest.raises(MXNetError, match=r"1 inputs \['data'\].*2 in_shapes"):
        mx.onnx.export_model(net, [args, auxs], [x.shape, x.shape], np.float32, out)
    with pytest.raises(MXNetError, match='in_shapes is required'):
        mx.onnx.export_model(net, [args, auxs], None, np.float32, out)
    with pytest.raises(MXNetError, match='pass dynamic=True'):
        mx.onnx.export_model(net, [args, auxs], [x.shape], np.float32, out,
                             dynamic_input_shapes=[(None, 3, 8, 8)])
    with pytest.raises(MXNetError, match='opset_version 9 is not supported'):
        mx.onnx.export_model(net, [args, auxs], [x.shape], np.float32, out, opset_version=9)
    with pytest.raises(MXNetError, match='sym must be a Symbol'):
        mx.onnx.export_model(42, [args, auxs], [x.shape], np.float32, out)
    missing = dict(args, **auxs)
    del missing['fc_weight']
    with pytest.raises(MXNetError, match=r"2 inputs \['data', 'fc_weight'\]"):
        mx.onnx.export_model(net, missing, [x.shape], np.float32, out)


def test_unknown_operator_names_op_and_node(tmp_path):
    net = mx.sym.khatri_rao(mx.sym.Variable('a'), mx.sym.Variable('b'), name='kr_node')
    with pytest.raises(MXNetError, match=r"no ONNX conversion for operator 'khatri_rao' "
                                         r"\(node 'kr_node'\)"):
        mx.onnx.export_model(net, {}, [(2, 3), (4, 3)], np.float32, str(tmp_path / 'u.onnx'))


def test_operator_support_listing():
    ops = mx.onnx.get_operator_support()
    for name in ('Convolution', 'RNN', 'SoftmaxOutput', 'Reshape', 'broadcast_add', 'Pooling'):
        assert name in ops


def test_missing_onnx_names_the_extra(monkeypatch):
    from mxmod.onnx.base import require_onnx
    monkeypatch.setitem(sys.modules, 'onnx', None)
    with pytest.raises(ImportError, match=r'pip install "mxmod\[onnx\]"'):
        require_onnx()
