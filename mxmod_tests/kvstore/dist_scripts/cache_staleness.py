"""Run by ``mxmod.launch -n 2 -s 1``: the embedding cache never serves a row more than ``bound``
updates behind the server and never holds back more than ``bound`` updates of a row, across
evictions (a cache far smaller than the rows touched), prefetches, epoch ends and checkpoint
saves; a checkpoint saved mid-epoch holds every update (it equals the servers' table).

Usage: cache_staleness.py POLICY BOUND OUT_PREFIX
The training loop is Module.fit's (prefetch of the next batch before the current one computes),
written out so that every read can be checked against the servers' versions of its rows.
Prints 'OK <rank> <largest staleness seen> <evictions>'."""
import sys

import numpy as np

import mxmod as mx
from sparse_fit import GLOBAL_BATCH, data, initial_params, network  # this folder

POLICY, BOUND, PREFIX = sys.argv[1], int(sys.argv[2]), sys.argv[3]
KEY = 'embed_weight'


def rows_of(batch):
    return {KEY: batch.data[0].reshape((-1,)).astype('int64')}


def check_reads(kv, batch, worst):
    """Every row the batch read: the servers' version minus the cached one is <= BOUND."""
    ids = np.unique(batch.data[0].asnumpy()).astype(np.int64)
    server, mine = kv.row_versions(KEY, mx.nd.array(ids, dtype='int64'))
    cached = mine >= 0
    lag = server[cached] - mine[cached]
    if lag.size:
        assert lag.max() <= BOUND, ('read beyond the bound', lag.max(), BOUND)
        worst = max(worst, int(lag.max()))
    return worst


def check_writes(kv):
    pending = kv.cache_pending(KEY)
    assert pending <= BOUND, ('write held back beyond the bound', pending, BOUND)


def table_on_servers(kv, shape):
    whole = mx.nd.zeros(shape)
    kv.pull(KEY, out=whole, ignore_sparse=False)
    return whole.asnumpy()


def main():
    X, y = data()
    kv = mx.kv.create('dist_sync')
    rank, nworkers = kv.rank, kv.num_workers
    per = GLOBAL_BATCH // nworkers
    rows = np.concatenate([np.arange(b + rank * per, b + (rank + 1) * per)
                           for b in range(0, len(X), GLOBAL_BATCH)])
    train = mx.io.NDArrayIter(X[rows], y[rows], batch_size=per, label_name='softmax_label')
    mod = mx.mod.Module(network())
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(arg_params=initial_params())
    mod.init_optimizer(kvstore=kv, optimizer='sgd',
                       optimizer_params={'learning_rate': 0.5, 'momentum': 0.9,
                                         'rescale_grad': 1.0 / GLOBAL_BATCH},
                       embedding_cache=dict(policy=POLICY, capacity=40, bound=BOUND))
    worst, saved = 0, False
    for epoch in range(3):
        train.reset()
        batches = list(train)
        mod.prepare(batches[0], sparse_row_id_fn=rows_of)
        worst = check_reads(kv, batches[0], worst)
        for i, batch in enumerate(batches):
            upcoming = batches[i + 1] if i + 1 < len(batches) else None
            if upcoming is not None:
                mod.prefetch(upcoming, rows_of)
            mod.forward_backward(batch)
            mod.update()
            check_writes(kv)
            if upcoming is not None:
                mod.prepare(upcoming, sparse_row_id_fn=rows_of)
                worst = check_reads(kv, upcoming, worst)
            if epoch == 1 and i == 3 and not saved:
                # a checkpoint mid-epoch, on every worker: it holds every update so far
                mod.save_checkpoint('%s-r%d' % (PREFIX, rank), 1)
                saved = True
                assert kv.cache_pending(KEY) == 0
                loaded = mx.nd.load('%s-r%d-0001.params' % (PREFIX, rank))
                shape = loaded['arg:' + KEY].shape
                np.testing.assert_array_equal(loaded['arg:' + KEY].tostype('default').asnumpy(),
                                              table_on_servers(kv, shape))
        mod.get_params()                       # the epoch end: every update reaches the servers
        assert kv.cache_pending(KEY) == 0
    stats = kv.comm_stats()
    assert stats['max_staleness'] <= BOUND, stats
    assert stats['cache_evictions'] > 0 and stats['cache_hits'] > 0, stats
    kv.barrier()
    print('OK %d %d %d' % (rank, worst, stats['cache_evictions']))


if __name__ == '__main__':
    main()
