"""Data-parallel training of a small MLP with Module.fit across MPI processes.

Each worker reads its own shard of the (synthetic) data; the kvstore sums the gradients of all
workers, so with ``dist_sync`` every worker ends every step with the same parameters, exactly as
one process training on the global batch. Run it with:

    python -m mxmod.launch -n 2 python examples/train_dist.py --kvstore dist_sync
    python -m mxmod.launch -n 2 python examples/train_dist.py --kvstore dist_device_sync --devices 2
    python -m mxmod.launch -n 2 -s 1 python examples/train_dist.py --kvstore dist_async
    mpiexec -n 2 python -m mpi4py examples/train_dist.py            # (mpiexec beside python)

Only rank 0 logs (when started by mxmod.launch); a failing rank ends the whole job.
"""
import argparse
import logging

import numpy as np

import mxmod as mx


def synthetic_data(num_samples, num_features=20, num_classes=4, seed=0):
    """A learnable classification problem: labels from a random linear map plus noise."""
    rs = np.random.RandomState(seed)
    X = rs.randn(num_samples, num_features).astype(np.float32)
    w = rs.randn(num_features, num_classes)
    y = np.argmax(X.dot(w) + 0.3 * rs.randn(num_samples, num_classes), axis=1)
    return X, y.astype(np.float32)


def mlp(num_classes=4):
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(net, num_hidden=64, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=num_classes, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--kvstore', default='dist_sync')
    parser.add_argument('--devices', type=int, default=1, help='CPU contexts per worker')
    parser.add_argument('--batch-size', type=int, default=64, help='global batch size')
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--lr', type=float, default=0.1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(message)s')

    kv = mx.kv.create(args.kvstore)
    X_all, y_all = synthetic_data(4096 + 1024)
    X, y, X_val, y_val = X_all[:4096], y_all[:4096], X_all[4096:], y_all[4096:]
    # every worker takes every num_workers-th sample: its share of each global batch
    shard = slice(kv.rank, None, kv.num_workers)
    local_batch = args.batch_size // kv.num_workers
    train = mx.io.NDArrayIter(X[shard], y[shard], batch_size=local_batch, shuffle=True,
                              label_name='softmax_label')
    val = mx.io.NDArrayIter(X_val, y_val, batch_size=256, label_name='softmax_label')

    mx.random.seed(0)  # same initial weights everywhere (rank 0's are broadcast anyway)
    mod = mx.mod.Module(mlp(), context=[mx.cpu(i) for i in range(args.devices)])
    mod.fit(train, eval_data=val, eval_metric='acc', kvstore=kv,
            optimizer='sgd', optimizer_params={'learning_rate': args.lr, 'momentum': 0.9},
            initializer=mx.init.Xavier(), num_epoch=args.epochs,
            batch_end_callback=mx.callback.Speedometer(local_batch, 20))
    accuracy = mod.score(val, 'acc')[0][1]
    logging.info('worker %d/%d: validation accuracy %.4f', kv.rank, kv.num_workers, accuracy)


if __name__ == '__main__':
    main()
