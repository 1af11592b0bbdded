"""Regenerate the module test fixtures with the real MXNet 1.9.1:
    /tmp/mxnet-ref/bin/python mxmod_tests/module/gen_fixtures.py
fit_2bit.json: parameters after Module.fit (2 epochs of the golden fit_mlp case) on
[cpu(0), cpu(1)] with kvstore 'device' and 2-bit gradient compression (threshold 0.05)."""
import json
import os

import numpy as np
import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, '..', 'golden', 'fit_mlp.npz')


def fit_2bit():
    g = np.load(GOLDEN)
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=8, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    sym = mx.sym.SoftmaxOutput(net, name='softmax')
    it = mx.io.NDArrayIter(g['input:data'], g['input:softmax_label'], batch_size=10, shuffle=False)
    mod = mx.mod.Module(sym, context=[mx.cpu(0), mx.cpu(1)],
                        compression_params={'type': '2bit', 'threshold': 0.05})
    init = {k[5:]: mx.nd.array(g[k]) for k in g.files if k.startswith('init:')}
    mod.fit(it, num_epoch=2, kvstore='device', arg_params=init, optimizer='sgd',
            optimizer_params={'learning_rate': 0.1, 'momentum': 0.9, 'wd': 1e-3})
    return {k: v.asnumpy().tolist() for k, v in mod.get_params()[0].items()}


if __name__ == '__main__':
    with open(os.path.join(HERE, 'fixtures', 'fit_2bit.json'), 'w') as fout:
        json.dump(fit_2bit(), fout)
