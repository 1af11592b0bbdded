"""Data-parallel Module.fit: each MPI rank trains on its slice of every global batch.

Usage: module_fit.py KVSTORE NUM_DEVICES OUT.npz [EPOCHS [LEARNING_RATE]]
KVSTORE is 'dist_sync', 'dist_device_sync', 'dist_async' or 'single' (one process, the whole
batch, no kvstore). Every rank writes its final parameters to OUT.npz with ``.rank<r>`` inserted,
plus the training accuracy; 'single' writes OUT.npz."""
import logging
import sys

import numpy as np

import mxmod as mx

GLOBAL_BATCH = 16
N_SAMPLES = 128


def data():
    rs = np.random.RandomState(42)
    X = rs.randn(N_SAMPLES, 10).astype(np.float32)
    w = rs.randn(10, 3).astype(np.float32)
    y = np.argmax(X.dot(w) + 0.1 * rs.randn(N_SAMPLES, 3), axis=1).astype(np.float32)
    return X, y


def initial_params():
    rs = np.random.RandomState(7)
    return {'fc1_weight': mx.nd.array(rs.randn(16, 10) * 0.3),
            'fc1_bias': mx.nd.zeros((16,)),
            'fc2_weight': mx.nd.array(rs.randn(3, 16) * 0.3),
            'fc2_bias': mx.nd.zeros((3,))}


def network():
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(net, num_hidden=16, name='fc1')
    net = mx.sym.Activation(net, act_type='tanh', name='tanh1')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def shard(X, y, rank, num_workers):
    """Rows of this rank's part of every global batch, in batch order."""
    per = GLOBAL_BATCH // num_workers
    rows = np.concatenate([np.arange(b + rank * per, b + (rank + 1) * per)
                           for b in range(0, len(X), GLOBAL_BATCH)])
    return X[rows], y[rows], per


def main(kvtype, ndev, out, epochs=3, lr=0.5):
    logging.basicConfig(level=logging.INFO)
    X, y = data()
    if kvtype == 'single':
        kv, rank, num_workers = None, 0, 1
    else:
        kv = mx.kv.create(kvtype)
        rank, num_workers = kv.rank, kv.num_workers
    Xr, yr, batch = shard(X, y, rank, num_workers)
    train = mx.io.NDArrayIter(Xr, yr, batch_size=batch, shuffle=False, label_name='softmax_label')
    mod = mx.mod.Module(network(), context=[mx.cpu(i) for i in range(ndev)])
    metric = mx.metric.Accuracy()
    mod.fit(train, eval_metric=metric, kvstore=kv, optimizer='sgd',
            optimizer_params={'learning_rate': lr, 'momentum': 0.9, 'wd': 1e-3},
            arg_params=initial_params(), num_epoch=epochs)
    arg_params, _ = mod.get_params()
    score = mod.score(mx.io.NDArrayIter(X, y, batch_size=GLOBAL_BATCH,
                                        label_name='softmax_label'), 'acc')[0][1]
    result = {k: v.asnumpy() for k, v in arg_params.items()}
    result['accuracy'] = np.float64(score)
    path = out if kvtype == 'single' else out.replace('.npz', '.rank%d.npz' % rank)
    np.savez(path, **result)
    if kv is not None:
        kv.barrier()


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3],
         *[f(a) for f, a in zip((int, float), sys.argv[4:])])
