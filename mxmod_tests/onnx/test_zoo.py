"""The model zoo (MXNet's example/image-classification/symbols, written by MXNet 1.9.1) and a
DenseNet-style concat net, exported and run in onnxruntime against mxmod's forward: the class
probabilities and the logits under them. Small variants run in CI, full sizes under ``slow``."""
import gzip
import os

import numpy as np
import pytest

import mxmod as mx

from .common import import_and_compare, mx_forward, onnx, ort_run, random_params
from .zoo import ZOO

ZOO_DIR = os.path.join(os.path.dirname(__file__), 'fixtures', 'zoo')


def load_zoo(name):
    """The zoo network ``name`` as a Symbol."""
    with gzip.open(os.path.join(ZOO_DIR, name + '-symbol.json.gz'), 'rt') as f:
        return mx.sym.load_json(f.read())


def with_logits(net):
    """The network's outputs followed by the input of its SoftmaxOutput (the logits)."""
    return mx.sym.Group([net, net.get_children()[0]])


def densenet(growth=8, blocks=(3, 3), num_classes=10):
    """A small DenseNet: each layer's BN-ReLU-Conv features concatenated to its input."""
    body = mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), pad=(1, 1),
                              num_filter=2 * growth, no_bias=True, name='conv0')
    for b, layers in enumerate(blocks):
        for k in range(layers):
            name = 'b%d_l%d' % (b, k)
            x = mx.sym.BatchNorm(body, fix_gamma=False, name=name + '_bn')
            x = mx.sym.Activation(x, act_type='relu', name=name + '_relu')
            x = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=growth,
                                   no_bias=True, name=name + '_conv')
            body = mx.sym.Concat(body, x, dim=1, name=name + '_concat')
        if b + 1 < len(blocks):
            body = mx.sym.Convolution(body, kernel=(1, 1), num_filter=growth * 2,
                                      name='trans%d_conv' % b)
            body = mx.sym.Pooling(body, kernel=(2, 2), stride=(2, 2), pool_type='avg',
                                  name='trans%d_pool' % b)
    body = mx.sym.Pooling(body, kernel=(1, 1), global_pool=True, pool_type='avg', name='gpool')
    fc = mx.sym.FullyConnected(mx.sym.Flatten(body), num_hidden=num_classes, name='fc')
    return mx.sym.SoftmaxOutput(fc, name='softmax')


def check_network(net, shape, tmp_path, seed=0):
    """Export ``net`` with random parameters; onnxruntime must give mxmod's outputs."""
    args, auxs = random_params(net, {'data': shape}, seed)
    x = np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)
    path = str(tmp_path / 'net.onnx')
    mx.onnx.export_model(net, [args, auxs], [shape], np.float32, path)
    onnx.checker.check_model(path)
    expected = mx_forward(net, args, auxs, {'data': x})
    got = ort_run(path, {'data': x})
    for e, o in zip(expected, got):
        assert o.shape == e.shape
        scale = max(1.0, float(np.abs(e).max()))
        np.testing.assert_allclose(o, e, rtol=1e-3, atol=2e-5 * scale)
    scale = max(1.0, max(float(np.abs(e).max()) for e in expected))
    import_and_compare(path, {'data': x}, expected, rtol=1e-4, atol=1e-5 * scale)
    return path, args, auxs, x, expected


FAST = sorted(k for k, v in ZOO.items() if not v[3])
SLOW = sorted(k for k, v in ZOO.items() if v[3])


@pytest.mark.parametrize('name', FAST)
def test_zoo_small(name, tmp_path):
    check_network(with_logits(load_zoo(name)), ZOO[name][2], tmp_path)


def test_densenet(tmp_path):
    check_network(with_logits(densenet()), (2, 3, 16, 16), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize('name', SLOW)
def test_zoo_full_size(name, tmp_path):
    check_network(with_logits(load_zoo(name)), ZOO[name][2], tmp_path)
