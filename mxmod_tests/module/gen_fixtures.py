"""Regenerate the module test fixtures with the real MXNet 1.9.1:
    /tmp/mxnet-ref/bin/python mxmod_tests/module/gen_fixtures.py
fit_2bit.json: parameters after Module.fit (2 epochs of the golden fit_mlp case) on
[cpu(0), cpu(1)] with kvstore 'device' and 2-bit gradient compression (threshold 0.05).
fit_batchnorm.json: an FC-BatchNorm-tanh-FC net fitted on 1, 2 ('local') and 3 ('device') CPU
contexts: arg+aux params at each epoch end (aux states averaged over devices) and the final
cross-entropy score."""
import json
import os

import numpy as np

try:
    import mxnet as mx
except ImportError:  # imported by the tests for batchnorm_net only
    mx = None

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


def batchnorm_net(mx_lib):
    """The BatchNorm network and its data/initial parameters (shared with the test)."""
    rs = np.random.RandomState(5)
    x = rs.normal(1, 2, (24, 5)).astype(np.float32)
    y = rs.randint(0, 3, 24).astype(np.float32)
    data = mx_lib.sym.Variable('data')
    net = mx_lib.sym.FullyConnected(data, num_hidden=6, name='fc1')
    net = mx_lib.sym.BatchNorm(net, fix_gamma=False, name='bn1')
    net = mx_lib.sym.Activation(net, act_type='tanh', name='a1')
    net = mx_lib.sym.FullyConnected(net, num_hidden=3, name='fc2')
    sym = mx_lib.sym.SoftmaxOutput(net, name='softmax')
    init = {'fc1_weight': rs.normal(0, .5, (6, 5)), 'fc1_bias': np.zeros(6),
            'bn1_gamma': np.ones(6), 'bn1_beta': np.zeros(6),
            'fc2_weight': rs.normal(0, .5, (3, 6)), 'fc2_bias': np.zeros(3)}
    return sym, x, y, init


BATCHNORM_CASES = ((1, 'local'), (2, 'local'), (3, 'device'))


def fit_batchnorm(mx_lib):
    """Epoch-end parameters and final score of the BatchNorm net for every case."""
    sym, x, y, init = batchnorm_net(mx_lib)
    out = {}
    for ndev, kvstore in BATCHNORM_CASES:
        it = mx_lib.io.NDArrayIter(x, y, batch_size=6, shuffle=False)
        mod = mx_lib.mod.Module(sym, context=[mx_lib.cpu(i) for i in range(ndev)])
        epochs = []

        def record(_epoch, _sym, arg, aux, epochs=epochs):
            params = list(arg.items()) + list(aux.items())
            epochs.append({k: v.asnumpy().tolist() for k, v in params})
        mod.fit(it, num_epoch=2, kvstore=kvstore, eval_metric='ce', optimizer='sgd',
                arg_params={k: mx_lib.nd.array(v) for k, v in init.items()},
                optimizer_params={'learning_rate': 0.2, 'momentum': 0.5},
                epoch_end_callback=record)
        it.reset()
        out['%d-%s' % (ndev, kvstore)] = {'epochs': epochs, 'score': mod.score(it, 'ce')[0][1]}
    return out


if __name__ == '__main__':
    with open(os.path.join(HERE, 'fixtures', 'fit_2bit.json'), 'w') as fout:
        json.dump(fit_2bit(), fout)
    with open(os.path.join(HERE, 'fixtures', 'fit_batchnorm.json'), 'w') as fout:
        json.dump(fit_batchnorm(mx), fout)
