"""Data-parallel Module.fit of an embedding model with a row_sparse weight and sparse gradients.

Usage: sparse_fit.py KVSTORE OUT.npz [EPOCHS]
KVSTORE is 'dist_sync', 'dist_device_sync' (two devices per worker), 'dist_async' or 'single'
(one process, the whole batch, the local store). Each worker trains on its slice of every
global batch; ``fit`` pulls the rows of each batch (``sparse_row_id_fn``). With server ranks
the table lives on the servers (hybrid); ``SPARSE_FIT_CACHE=policy:capacity:bound:prefetch``
sets an embedding cache. Writes the final
parameters (all rows, pulled from the store) to OUT.npz (``.rank<r>`` inserted for workers), and
this worker's ``comm_stats()`` counters and steps."""
import os
import sys

import numpy as np

import mxmod as mx

ROWS, DIM, TOKENS, CLASSES = 5000, 8, 6, 3
GLOBAL_BATCH, N_SAMPLES = 32, 256


def data():
    rs = np.random.RandomState(3)
    # Zipf-like ids: a few popular rows, a long tail
    ids = np.minimum(rs.zipf(1.3, size=(N_SAMPLES, TOKENS)) - 1, ROWS - 1).astype(np.float32)
    y = (ids.sum(axis=1) % CLASSES).astype(np.float32)
    return ids, y


def network():
    data_ = mx.sym.Variable('data')
    weight = mx.sym.Variable('embed_weight', stype='row_sparse')
    embed = mx.sym.Embedding(data_, weight=weight, input_dim=ROWS, output_dim=DIM,
                             sparse_grad=True, name='embed')
    net = mx.sym.FullyConnected(mx.sym.flatten(embed), num_hidden=CLASSES, name='fc')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def initial_params():
    rs = np.random.RandomState(11)
    return {'embed_weight': mx.nd.array(rs.randn(ROWS, DIM) * 0.1).tostype('row_sparse'),
            'fc_weight': mx.nd.array(rs.randn(CLASSES, TOKENS * DIM) * 0.1),
            'fc_bias': mx.nd.zeros((CLASSES,))}


def batch_rows(batch):
    return {'embed_weight': mx.nd.array(np.unique(batch.data[0].asnumpy()), dtype='int64')}


def main(kvtype, out, epochs=2):
    X, y = data()
    if kvtype == 'single':
        kv, rank, nworkers, ctxs = 'local', 0, 1, [mx.cpu()]
    else:
        kv = mx.kv.create(kvtype)
        rank, nworkers = kv.rank, kv.num_workers
        ctxs = [mx.cpu(0), mx.cpu(1)] if 'device' in kvtype else [mx.cpu()]
    per = GLOBAL_BATCH // nworkers
    rows = np.concatenate([np.arange(b + rank * per, b + (rank + 1) * per)
                           for b in range(0, N_SAMPLES, GLOBAL_BATCH)])
    train = mx.io.NDArrayIter(X[rows], y[rows], batch_size=per, shuffle=False,
                              label_name='softmax_label')
    mod = mx.mod.Module(network(), context=ctxs)
    mod.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
    mod.init_params(arg_params=initial_params())
    cache = os.environ.get('SPARSE_FIT_CACHE')       # policy:capacity:bound:prefetch
    if cache:
        policy, capacity, bound, prefetch = cache.split(':')
        cache = dict(policy=policy, capacity=float(capacity) if '.' in capacity
                     else int(capacity), bound=int(bound), prefetch=prefetch == '1')
    if cache and os.environ.get('SPARSE_FIT_CACHE_FIRST'):
        # set on the store before it holds any table, then handed to the Module
        kv.set_embedding_cache(**cache)
        cache = None
    mod.init_optimizer(kvstore=kv, optimizer='sgd',
                       optimizer_params={'learning_rate': 0.5, 'momentum': 0.9, 'wd': 1e-4,
                                         'rescale_grad': 1.0 / GLOBAL_BATCH},
                       embedding_cache=cache or None)
    steps = [0]

    def count(_):
        steps[0] += 1
    mod.fit(train, num_epoch=epochs, sparse_row_id_fn=batch_rows, batch_end_callback=count)
    steps = steps[0]
    arg_params, _ = mod.get_params()
    result = {k: v.tostype('default').asnumpy() for k, v in arg_params.items()}
    if kvtype != 'single':
        stats = kv.comm_stats()
        for name, value in stats.items():
            result['stat_' + name] = np.float64(value)
        result['steps'] = np.float64(steps)
        result['touched_rows'] = np.float64(np.mean(
            [len(np.unique(X[b:b + GLOBAL_BATCH])) for b in range(0, N_SAMPLES, GLOBAL_BATCH)]))
        kv.barrier()
    np.savez(out if kvtype == 'single' else out.replace('.npz', '.rank%d.npz' % rank), **result)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2], *[int(a) for a in sys.argv[3:]])
