"""Hand-built ONNX graphs (forms other exporters write: Gemm flags, auto_pad, asymmetric pads,
older-opset Softmax, broadcasting of lower ranks, ...) imported with mx.onnx.import_model and run
by mxmod against onnxruntime on the same graph."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError

from .common import mx_forward, onnx, ort_run

helper = onnx.helper
FLOAT = onnx.TensorProto.FLOAT
R = np.random.RandomState(11)


def _x(*shape):
    return R.normal(0, 1, shape).astype(np.float32)


def model(nodes, inputs, outputs, inits=None, opset=18):
    """A ModelProto: ``inputs`` {name: array}, ``outputs`` [names], ``inits`` {name: array}."""
    ins = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for n, v in inputs.items()]
    outs = [helper.make_empty_tensor_value_info(n) for n in outputs]
    inits = [onnx.numpy_helper.from_array(v, n) for n, v in (inits or {}).items()]
    graph = helper.make_graph(nodes, 'g', ins, outs, initializer=inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])
    proto.ir_version = 8
    typed = {v.name: v for v in onnx.shape_inference.infer_shapes(proto).graph.value_info}
    for out in proto.graph.output:
        if out.name in typed:
            out.CopyFrom(typed[out.name])
    return proto


def _n(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0] + '_node', **attrs)


W = {'w4x3': _x(4, 3), 'w3x4': _x(3, 4), 'b4': _x(4), 'c2x4': _x(2, 4), 'k': _x(4, 3, 3, 3),
     'kt': _x(3, 2, 3, 3), 'slope': np.abs(_x(3, 1, 1)), 'g5': _x(5), 'b5': _x(5),
     'i64': lambda *v: np.array(v, dtype=np.int64)}
I64 = W.pop('i64')

GRAPHS = {
    'gemm_fc': ([_n('Gemm', ['x', 'w4x3', 'b4'], ['y'], transB=1)], {'x': _x(2, 3)},
                {'w4x3': W['w4x3'], 'b4': W['b4']}),
    'gemm_general': ([_n('Gemm', ['x', 'w3x4', 'c'], ['y'], transA=1, alpha=0.5, beta=2.0)],
                     {'x': _x(3, 2)}, {'w3x4': W['w3x4'], 'c': W['c2x4']}),
    'gemm_inputs': ([_n('Gemm', ['x', 'w', 'c'], ['y'], transB=1)],
                    {'x': _x(2, 3), 'w': _x(4, 3), 'c': _x(4)}, {}),
    'matmul_weight': ([_n('MatMul', ['x', 'w3x4'], ['y'])], {'x': _x(2, 5, 3)},
                      {'w3x4': W['w3x4']}),
    'matmul_4d': ([_n('MatMul', ['a', 'b'], ['y'])], {'a': _x(2, 3, 4, 5), 'b': _x(2, 3, 5, 2)},
                  {}),
    'conv_same_upper': ([_n('Conv', ['x', 'k'], ['y'], auto_pad='SAME_UPPER', strides=[2, 2])],
                        {'x': _x(1, 3, 8, 7)}, {'k': W['k']}),
    'conv_asym_pads': ([_n('Conv', ['x', 'k'], ['y'], pads=[0, 1, 2, 1])], {'x': _x(1, 3, 6, 6)},
                       {'k': W['k']}),
    'convT_output_shape': ([_n('ConvTranspose', ['x', 'kt'], ['y'], strides=[2, 2],
                               output_shape=[10, 11])], {'x': _x(1, 3, 5, 5)}, {'kt': W['kt']}),
    'convT_asym_pads': ([_n('ConvTranspose', ['x', 'kt'], ['y'], strides=[2, 2],
                            pads=[1, 0, 0, 1])], {'x': _x(1, 3, 4, 4)}, {'kt': W['kt']}),
    'maxpool_ceil': ([_n('MaxPool', ['x'], ['y'], kernel_shape=[3, 3], strides=[2, 2],
                         ceil_mode=1)], {'x': _x(1, 2, 8, 8)}, {}),
    'maxpool_same': ([_n('MaxPool', ['x'], ['y'], kernel_shape=[3, 3], strides=[2, 2],
                         auto_pad='SAME_UPPER')], {'x': _x(1, 2, 7, 7)}, {}),
    'avgpool_asym_include': ([_n('AveragePool', ['x'], ['y'], kernel_shape=[2, 2],
                                 pads=[1, 1, 0, 0], count_include_pad=1)],
                             {'x': _x(1, 2, 5, 5)}, {}),
    'prelu_4d': ([_n('PRelu', ['x', 'slope'], ['y'])], {'x': _x(2, 3, 4, 4)},
                 {'slope': W['slope']}),
    'hard_sigmoid': ([_n('HardSigmoid', ['x'], ['y'], alpha=0.3)], {'x': _x(3, 4)}, {}),
    'layer_norm': ([_n('LayerNormalization', ['x', 'g5', 'b5'], ['y'], epsilon=1e-3)],
                   {'x': _x(2, 3, 5)}, {'g5': W['g5'], 'b5': W['b5']}),
    'add_lower_rank': ([_n('Add', ['x', 'b5'], ['t']), _n('Mul', ['t', 's'], ['y'])],
                       {'x': _x(2, 3, 5)}, {'b5': W['b5'], 's': np.array(2.0, np.float32)}),
    'where_broadcast': ([_n('Greater', ['a', 'b'], ['c']), _n('Where', ['c', 'a', 'b'], ['y'])],
                        {'a': _x(3, 1), 'b': _x(1, 4)}, {}),
    'clip_min_only': ([_n('Clip', ['x', 'lo', ''], ['y'])], {'x': _x(3, 4)},
                      {'lo': np.array(-0.2, np.float32)}),
    'mod_fmod': ([_n('Mod', ['a', 'b'], ['y'], fmod=1)], {'a': _x(3, 4) * 3, 'b': _x(3, 4) + 3},
                 {}),
    'expand_tile': ([_n('Expand', ['x', 's'], ['t']), _n('Tile', ['t', 'r'], ['y'])],
                    {'x': _x(3, 1)}, {'s': I64(2, 3, 4), 'r': I64(1, 2, 1)}),
    'split_unequal': ([_n('Split', ['x', 'sp'], ['y0', 'y1'], axis=1)], {'x': _x(2, 5)},
                      {'sp': I64(2, 3)}),
    'slice_steps': ([_n('Slice', ['x', 's', 'e', 'a', 'st'], ['y'])], {'x': _x(4, 6)},
                    {'s': I64(-1, 1), 'e': I64(-10 ** 18, 5), 'a': I64(0, 1), 'st': I64(-1, 2)}),
    'gather_scalar': ([_n('Gather', ['x', 'i'], ['y'], axis=1)], {'x': _x(2, 3, 4)},
                      {'i': np.array(-1, np.int64)}),
    'gather_indices': ([_n('Gather', ['x', 'i'], ['y'], axis=0)], {'x': _x(4, 3)},
                       {'i': I64(3, -1, 0)}),
    'squeeze_unsqueeze': ([_n('Unsqueeze', ['x', 'u'], ['t']), _n('Squeeze', ['t', 'q'], ['y'])],
                          {'x': _x(3, 4)}, {'u': I64(0, -1), 'q': I64(0)}),
    'flatten_axis2': ([_n('Flatten', ['x'], ['y'], axis=2)], {'x': _x(2, 3, 4, 5)}, {}),
    'reduce_axes_input': ([_n('ReduceMean', ['x', 'ax'], ['y'], keepdims=0)], {'x': _x(2, 3, 4)},
                          {'ax': I64(-1, 0)}),
    'reduce_l2_sumsq': ([_n('ReduceL2', ['x'], ['y0'], axes=[1]),
                         _n('ReduceSumSquare', ['x'], ['y1'], axes=[1], keepdims=0)],
                        {'x': _x(2, 3, 4)}, {}),
    'argmax_topk': ([_n('ArgMax', ['x'], ['y0'], axis=1), _n('TopK', ['x', 'k'], ['v', 'i'])],
                    {'x': _x(3, 5)}, {'k': I64(2)}),
    'pad_reflect': ([_n('Pad', ['x', 'p'], ['y'], mode='reflect')], {'x': _x(1, 2, 4, 4)},
                    {'p': I64(0, 0, 1, 2, 0, 0, 2, 1)}),
    'resize_nearest': ([_n('Resize', ['x', '', 's'], ['y'], mode='nearest')],
                       {'x': _x(1, 2, 3, 3)}, {'s': np.array([1, 1, 2, 2], np.float32)}),
    'constant_and_shape': ([_n('Constant', [], ['c'], value=onnx.numpy_helper.from_array(
        np.array([1.5], np.float32))), _n('Shape', ['x'], ['s']),
        _n('ConstantOfShape', ['s'], ['z'], value=onnx.numpy_helper.from_array(
            np.array([2.0], np.float32))), _n('Mul', ['x', 'z'], ['t']),
        _n('Add', ['t', 'c'], ['y'])], {'x': _x(2, 3)}, {}),
    'softmax_opset11': ([_n('Softmax', ['x'], ['y'], axis=1)], {'x': _x(2, 3, 4)}, {}),
    'cast_not_and': ([_n('Cast', ['x'], ['b'], to=onnx.TensorProto.BOOL), _n('Not', ['b'], ['n']),
                      _n('Cast', ['n'], ['y'], to=FLOAT)],
                     {'x': np.array([[0, 1.5], [-2, 0]], np.float32)}, {}),
}
OPSETS = {'softmax_opset11': 11, 'clip_min_only': 13, 'reduce_l2_sumsq': 13}


@pytest.mark.parametrize('case', sorted(GRAPHS))
def test_import_graph(case, tmp_path):
    nodes, inputs, inits = GRAPHS[case]
    outputs = [o for n in nodes for o in n.output]
    outputs = [o for o in outputs if o.startswith(('y', 'v', 'i')) and o not in inits]
    proto = model(nodes, inputs, outputs, inits, OPSETS.get(case, 18))
    onnx.checker.check_model(proto)
    path = str(tmp_path / (case + '.onnx'))
    onnx.save(proto, path)
    expected = ort_run(path, inputs)
    sym, args, auxs = mx.onnx.import_model(path)
    used = {k: v for k, v in inputs.items() if k in sym.list_arguments()}
    got = mx_forward(sym, args, auxs, used)
    for e, o in zip(expected, got):
        np.testing.assert_allclose(o.reshape(e.shape), e.astype(o.dtype), rtol=1e-5, atol=1e-5)


def test_dynamic_batch_reshape_from_shape(tmp_path):
    """Shape -> Gather -> Concat -> Reshape over a free batch dimension imports batch-free."""
    nodes = [_n('Shape', ['x'], ['s']), _n('Gather', ['s', 'zero'], ['b'], axis=0),
             _n('Unsqueeze', ['b', 'zero1'], ['b1']), _n('Concat', ['b1', 'minus1'], ['t'], axis=0),
             _n('Reshape', ['x', 't'], ['y'])]
    ins = [helper.make_tensor_value_info('x', FLOAT, ['N', 3, 4])]
    inits = [onnx.numpy_helper.from_array(v, n) for n, v in
             {'zero': np.array(0, np.int64), 'zero1': I64(0), 'minus1': I64(-1)}.items()]
    graph = helper.make_graph(nodes, 'g', ins, [helper.make_empty_tensor_value_info('y')],
                              initializer=inits)
    path = str(tmp_path / 'dyn.onnx')
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid('', 18)]), path)
    sym, args, auxs = mx.onnx.import_model(path)
    for batch in (1, 6):
        x = _x(batch, 3, 4)
        np.testing.assert_array_equal(mx_forward(sym, args, auxs, {'x': x})[0],
                                      x.reshape(batch, -1))


def test_import_errors(tmp_path):
    proto = model([_n('Det', ['x'], ['y'])], {'x': _x(3, 3)}, ['y'])
    with pytest.raises(MXNetError, match=r"no conversion for ONNX operator 'Det' \(node "
                                         r"'y_node'\)"):
        mx.onnx.import_model(proto)
    proto = model([_n('Reshape', ['x', 's'], ['y'])], {'x': _x(2, 3), 's': I64(3, 2)}, ['y'])
    with pytest.raises(MXNetError, match="'s' of Reshape 'y_node' must be a constant"):
        mx.onnx.import_model(proto)
    with pytest.raises(MXNetError, match='expected the path of an ONNX file'):
        mx.onnx.import_model(42)


def test_model_metadata(tmp_path):
    proto = model([_n('Relu', ['x'], ['y'])], {'x': _x(2, 3)}, ['y'])
    meta = mx.onnx.get_model_metadata(proto)
    assert meta['input_tensor_data'] == [('x', (2, 3), FLOAT)]
    assert meta['output_tensor_data'] == [('y', (2, 3))]
