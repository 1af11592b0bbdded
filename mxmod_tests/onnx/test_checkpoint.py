"""A network trained with Module.fit, saved with save_checkpoint and reloaded with
load_checkpoint, exported (from the files and from the loaded objects): onnxruntime predicts what
Module predicts, and the model imports back to the same predictions."""
import numpy as np

import mxmod as mx

from .common import import_and_compare, onnx, ort_run


def _net():
    data = mx.sym.Variable('data')
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=6, pad=(1, 1), name='conv1')
    net = mx.sym.BatchNorm(net, name='bn1')
    net = mx.sym.LeakyReLU(net, act_type='prelu', name='prelu1')
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type='max', name='pool1')
    net = mx.sym.Dropout(net, p=0.2, name='drop1')
    net = mx.sym.Flatten(net, name='flat')
    net = mx.sym.FullyConnected(net, num_hidden=16, name='fc1')
    net = mx.sym.Activation(net, act_type='tanh', name='tanh1')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def _data():
    rng = np.random.RandomState(0)
    x = rng.normal(0, 1, (60, 2, 8, 8)).astype(np.float32)
    y = rng.randint(0, 3, 60).astype(np.float32)
    x[np.arange(60), 0, :, :] += y[:, None, None]
    return x, y


def test_trained_checkpoint_roundtrip(tmp_path):
    x, y = _data()
    train = mx.io.NDArrayIter(x, y, batch_size=10, shuffle=True)
    mod = mx.mod.Module(_net(), context=mx.cpu())
    mod.fit(train, num_epoch=3, optimizer='sgd', initializer=mx.init.Xavier(),
            optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    prefix = str(tmp_path / 'trained')
    mod.save_checkpoint(prefix, 3)
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, 3)

    scorer = mx.mod.Module(sym)
    scorer.bind(data_shapes=[('data', (10, 2, 8, 8))], for_training=False)
    scorer.set_params(arg_params, aux_params)
    expected = scorer.predict(mx.io.NDArrayIter(x, batch_size=10)).asnumpy()

    from_files = mx.onnx.export_model(prefix + '-symbol.json', prefix + '-0003.params',
                                      [(10, 2, 8, 8)], np.float32, str(tmp_path / 'f.onnx'),
                                      dynamic=True, dynamic_input_shapes=[(None, 2, 8, 8)])
    from_objects = mx.onnx.export_model(sym, [arg_params, aux_params], [(10, 2, 8, 8)],
                                        np.float32, str(tmp_path / 'o.onnx'))
    onnx.checker.check_model(from_files)
    np.testing.assert_allclose(ort_run(from_files, {'data': x})[0], expected, rtol=1e-4,
                               atol=1e-6)
    for k in range(0, 60, 10):
        np.testing.assert_allclose(ort_run(from_objects, {'data': x[k:k + 10]})[0],
                                   expected[k:k + 10], rtol=1e-4, atol=1e-6)
    import_and_compare(from_objects, {'data': x[:10]}, [expected[:10]], rtol=1e-4, atol=1e-6)
