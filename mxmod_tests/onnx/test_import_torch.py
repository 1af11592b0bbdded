"""ONNX models exported by PyTorch (fixtures written by make_torch_fixtures.py) imported with
mx.onnx.import_model: scored with Module they give PyTorch's outputs, and they train."""
import os

import numpy as np
import pytest

import mxmod as mx

from .common import mx_forward, ort_run

TORCH_DIR = os.path.join(os.path.dirname(__file__), 'fixtures', 'torch')
MODELS = ['convnet', 'convnet_batch', 'convnet_dynamo', 'recurrent', 'block_dynamo']


def _fixture(name):
    ref = np.load(os.path.join(TORCH_DIR, name + '.npz'))
    inputs = {k: ref[k] for k in ref.files if k.startswith('input')}
    outputs = [ref['output%d' % k] for k in range(len(ref.files) - len(inputs))]
    return os.path.join(TORCH_DIR, name + '.onnx'), inputs, outputs


@pytest.mark.parametrize('name', MODELS)
def test_torch_model_outputs(name):
    path, inputs, expected = _fixture(name)
    sym, args, auxs = mx.onnx.import_model(path)
    got = mx_forward(sym, args, auxs, inputs)
    assert len(got) == len(expected)
    for e, o in zip(expected, got):
        np.testing.assert_allclose(o.reshape(e.shape), e, rtol=1e-4, atol=1e-5)


def test_free_batch_stays_free():
    """A batch axis left free by the exporter (reshape target from Shape) stays free."""
    path, _, _ = _fixture('convnet_batch')
    sym, args, auxs = mx.onnx.import_model(path)
    x = np.random.RandomState(3).normal(0, 1, (5, 3, 16, 16)).astype(np.float32)
    np.testing.assert_allclose(mx_forward(sym, args, auxs, {'input0': x})[0],
                               ort_run(path, {'input0': x})[0], rtol=1e-4, atol=1e-6)


def test_scored_with_module():
    assert mx.contrib.onnx.export_model is mx.onnx.export_model
    path, inputs, expected = _fixture('convnet')
    sym, args, auxs = mx.contrib.onnx.import_model(path)
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta['input_tensor_data'][0][:2] == ('input0', (2, 3, 16, 16))
    mod = mx.mod.Module(sym, data_names=['input0'], label_names=None)
    mod.bind(data_shapes=[('input0', inputs['input0'].shape)], for_training=False)
    mod.set_params(args, auxs)
    it = mx.io.NDArrayIter(inputs['input0'], batch_size=2)
    np.testing.assert_allclose(mod.predict(it).asnumpy(), expected[0], rtol=1e-4, atol=1e-6)


def test_trained_with_module_fit():
    """The imported network's logits under a SoftmaxOutput learn a separable problem."""
    path, _, _ = _fixture('convnet_batch')
    sym, args, auxs = mx.onnx.import_model(path)
    logits = sym.get_children()[0]
    net = mx.sym.SoftmaxOutput(logits, name='softmax')
    rng = np.random.RandomState(0)
    x = rng.normal(0, 1, (64, 3, 16, 16)).astype(np.float32)
    y = (x[:, 0].mean(axis=(1, 2)) > 0).astype(np.float32) * 3
    x[:, 0] += y[:, None, None] - 1.5
    it = mx.io.NDArrayIter({'input0': x}, {'softmax_label': y}, batch_size=16, shuffle=True)
    mod = mx.mod.Module(net, data_names=['input0'], label_names=['softmax_label'])
    mod.bind(it.provide_data, it.provide_label)
    mod.set_params(args, auxs)
    before = dict(mod.score(it, 'acc'))['accuracy']
    it.reset()
    mod.fit(it, num_epoch=30, arg_params=args, aux_params=auxs, allow_missing=False,
            force_init=True, optimizer='adam', optimizer_params={'learning_rate': 0.01})
    assert set(mod.get_params()[0]) == set(args)
    after = dict(mod.score(it, 'acc'))['accuracy']
    assert before < 0.7 and after > 0.95
