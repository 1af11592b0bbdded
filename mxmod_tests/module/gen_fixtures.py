"""Regenerate the module test fixtures with the real MXNet 1.9.1:
    /tmp/mxnet-ref/bin/python mxmod_tests/module/gen_fixtures.py
fit_2bit.json: parameters after Module.fit (2 epochs of the golden fit_mlp case) on
[cpu(0), cpu(1)] with kvstore 'device' and 2-bit gradient compression (threshold 0.05).
fit_batchnorm.json: an FC-BatchNorm-tanh-FC net fitted on 1, 2 ('local') and 3 ('device') CPU
contexts: arg+aux params at each epoch end (aux states averaged over devices) and the final
cross-entropy score.
bucketing.json: a BucketingModule (shared FC over split time steps) trained on buckets
6,3,6,2,3,4 on 1 and 2 CPU contexts ('local'/'device', grad_req write/add): final parameters,
the cross-entropy metric and the checkpoint file names."""
import json
import os
import tempfile

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


def _seq_sym_gen(mx_lib):
    def sym_gen(length):
        data = mx_lib.sym.Variable('data')
        steps = mx_lib.sym.split(data, num_outputs=length, axis=1, squeeze_axis=True)
        weight, bias = mx_lib.sym.Variable('fc_weight'), mx_lib.sym.Variable('fc_bias')
        hidden = [mx_lib.sym.FullyConnected(steps[t], weight=weight, bias=bias, num_hidden=3,
                                            name='fc%d' % t) for t in range(length)]
        total = mx_lib.sym.Activation(mx_lib.sym.add_n(*hidden), act_type='tanh')
        total = mx_lib.sym.FullyConnected(total, num_hidden=3, name='out')
        return mx_lib.sym.SoftmaxOutput(total, name='softmax'), ('data',), ('softmax_label',)
    return sym_gen


BUCKETING_CASES = ((1, 'local', 'write'), (2, 'device', 'write'), (2, 'local', 'add'))


def _bucket_batches(mx_lib, rng):
    batches = []
    for length in (6, 3, 6, 2, 3, 4):
        x = rng.normal(size=(4, length, 5)).astype(np.float32)
        y = rng.randint(0, 3, size=(4,)).astype(np.float32)
        batches.append(mx_lib.io.DataBatch(
            [mx_lib.nd.array(x)], [mx_lib.nd.array(y)], bucket_key=length,
            provide_data=[mx_lib.io.DataDesc('data', x.shape)],
            provide_label=[mx_lib.io.DataDesc('softmax_label', y.shape)]))
    return batches


def _train_buckets(mx_lib, ndev, kvstore, grad_req):
    rng = np.random.RandomState(0)
    init = {'fc_weight': rng.normal(0, .3, (3, 5)), 'fc_bias': np.zeros(3),
            'out_weight': rng.normal(0, .3, (3, 3)), 'out_bias': np.zeros(3)}
    mod = mx_lib.mod.BucketingModule(_seq_sym_gen(mx_lib), default_bucket_key=6,
                                     context=[mx_lib.cpu(i) for i in range(ndev)])
    mod.bind(data_shapes=[('data', (4, 6, 5))], label_shapes=[('softmax_label', (4,))],
             grad_req=grad_req)
    mod.init_params(arg_params={k: mx_lib.nd.array(v) for k, v in init.items()})
    mod.init_optimizer(kvstore=kvstore, optimizer_params={'learning_rate': 0.3, 'momentum': 0.9,
                                                          'wd': 0.01})
    metric = mx_lib.metric.create('ce')
    for batch in _bucket_batches(mx_lib, rng):
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    return mod, metric


def bucketing(mx_lib):
    """Final parameters, metric and checkpoint files of every bucketing case."""
    out = {}
    for ndev, kvstore, grad_req in BUCKETING_CASES:
        mod, metric = _train_buckets(mx_lib, ndev, kvstore, grad_req)
        folder = tempfile.mkdtemp()
        mod.save_checkpoint(os.path.join(folder, 'b'), 3)
        out['%d-%s-%s' % (ndev, kvstore, grad_req)] = {
            'params': {k: v.asnumpy().tolist() for k, v in mod.get_params()[0].items()},
            'metric': metric.get()[1], 'files': sorted(os.listdir(folder))}
    return out


if __name__ == '__main__':
    with open(os.path.join(HERE, 'fixtures', 'fit_2bit.json'), 'w') as fout:
        json.dump(fit_2bit(), fout)
    with open(os.path.join(HERE, 'fixtures', 'fit_batchnorm.json'), 'w') as fout:
        json.dump(fit_batchnorm(mx), fout)
    with open(os.path.join(HERE, 'fixtures', 'bucketing.json'), 'w') as fout:
        json.dump(bucketing(mx), fout)
