"""Training cases for the overlap tests: a few steps of Module training whose final parameters
must be bit-identical with and without gradient communication overlapped with backward.

Usable in-process (``train(...)``) and as an MPI script:
``overlap_cases.py KVSTORE NDEV MODEL OUT.npz [--compress] [--grad-req add]``."""
import argparse
import sys

import numpy as np

import mxmod as mx

BATCH = 8


def convnet():
    net = mx.sym.Variable('data')
    net = mx.sym.Convolution(net, num_filter=4, kernel=(3, 3), pad=(1, 1), name='conv1')
    net = mx.sym.BatchNorm(net, fix_gamma=False, name='bn1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type='max', name='pool1')
    net = mx.sym.Convolution(net, num_filter=6, kernel=(3, 3), pad=(1, 1), name='conv2')
    net = mx.sym.Activation(net, act_type='tanh', name='tanh2')
    net = mx.sym.Flatten(net)
    net = mx.sym.FullyConnected(net, num_hidden=32, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu3')
    net = mx.sym.FullyConnected(net, num_hidden=16, name='fc2')
    net = mx.sym.Activation(net, act_type='relu', name='relu4')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc3')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def embedding_net():
    data = mx.sym.Variable('data')
    weight = mx.sym.Variable('embed_weight', stype='row_sparse')
    net = mx.sym.Embedding(data, weight=weight, input_dim=50, output_dim=8, sparse_grad=True,
                           name='embed')
    net = mx.sym.Flatten(net)
    net = mx.sym.FullyConnected(net, num_hidden=16, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def batches(model, rank=0, num_workers=1, steps=4):
    """This rank's part of ``steps`` global batches (the same data on every run)."""
    rs = np.random.RandomState(3)
    per = BATCH // num_workers
    out = []
    for _ in range(steps):
        if model == 'embed':
            X = rs.randint(0, 50, size=(BATCH, 4)).astype(np.float32)
        else:
            X = rs.randn(BATCH, 2, 8, 8).astype(np.float32)
        y = rs.randint(0, 3, size=(BATCH,)).astype(np.float32)
        rows = slice(rank * per, (rank + 1) * per)
        out.append(mx.io.DataBatch([mx.nd.array(X[rows])], [mx.nd.array(y[rows])]))
    return out, per


def train(kvstore, ndev, model='conv', grad_req='write', compress=False, optimizer='sgd',
          bucketing=False):
    """Train a few steps; return {name: numpy array} of the final arg and aux parameters."""
    kv = mx.kv.create(kvstore) if isinstance(kvstore, str) else kvstore
    rank = getattr(kv, 'rank', 0)
    workers = getattr(kv, 'num_workers', 1)
    data, per = batches(model, rank, workers)
    shape = (per,) + data[0].data[0].shape[1:]
    ctx = [mx.cpu(i) for i in range(ndev)]
    sym = embedding_net() if model == 'embed' else convnet()
    if bucketing:
        mod = mx.mod.BucketingModule(lambda key: (sym, ('data',), ('softmax_label',)),
                                     default_bucket_key=10, context=ctx)
    else:
        mod = mx.mod.Module(sym, context=ctx)
    mod.bind([('data', shape)], [('softmax_label', (per,))], grad_req=grad_req)
    mx.random.seed(11)
    mod.init_params(mx.init.Xavier(magnitude=2.0))
    if compress:
        kv.set_gradient_compression({'type': '2bit', 'threshold': 0.01})
    params = {'learning_rate': 0.1, 'wd': 1e-4}
    if optimizer == 'sgd':
        params['momentum'] = 0.9
    mod.init_optimizer(kvstore=kv, optimizer=optimizer, optimizer_params=params)
    for batch in data:
        if bucketing:
            batch.bucket_key = 10
            batch.provide_data = [mx.io.DataDesc('data', shape)]
            batch.provide_label = [mx.io.DataDesc('softmax_label', (per,))]
        mod.forward_backward(batch)
        if grad_req == 'add':
            mod.forward_backward(batch)
        mod.update()
    arg, aux = mod.get_params()
    result = {k: v.asnumpy() if hasattr(v, 'asnumpy') else np.asarray(v) for k, v in arg.items()}
    result.update({'aux:' + k: v.asnumpy() for k, v in aux.items()})
    return result, kv


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('kvstore')
    parser.add_argument('ndev', type=int)
    parser.add_argument('model')
    parser.add_argument('out')
    parser.add_argument('--compress', action='store_true')
    parser.add_argument('--grad-req', default='write')
    args = parser.parse_args()
    result, kv = train(args.kvstore, args.ndev, args.model, args.grad_req, args.compress)
    np.savez(args.out.replace('.npz', '.rank%d.npz' % kv.rank), **result)
    kv.barrier()


if __name__ == '__main__':
    sys.exit(main())
