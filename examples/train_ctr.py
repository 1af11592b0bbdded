"""Click-through prediction with a wide & deep model on a generated Criteo-like data set, with
sparse embedding tables on parameter servers and an optional worker-side embedding cache.

The data: 13 dense features and 26 categorical fields; the ids of each field follow a Zipf law
(exponent 1.1) over its own table, all tables concatenated into one id space. Labels come from a
hidden logistic model (dense weights plus a hidden effect per id), so AUC measures how much of it
the model recovers. The model: a wide part (one weight per id, summed) and a deep part (a 16-wide
embedding per field, concatenated with the dense features, through a 64-32-1 MLP); both
embeddings are row_sparse with sparse gradients.

    python examples/train_ctr.py                                         # one process
    python -m mxmod.launch -n 2 -s 1 python examples/train_ctr.py --kvstore dist_sync
    python -m mxmod.launch -n 2 -s 1 python examples/train_ctr.py --kvstore dist_sync \\
        --cache lfu:0.1:100                                              # LFU, 10%, bound 100

With server ranks, ``dist_sync`` keeps the embedding tables on the servers (sharded by rows,
updated in synchronous rounds) and all-reduces the dense parameters; ``dist_async`` keeps both on
the servers. ``--cache POLICY:CAPACITY:BOUND`` caches rows on each worker (capacity a number of
rows or a fraction of each table) with at most BOUND updates of staleness and prefetches the next
batch's rows (``--no-prefetch`` to turn that off). Every epoch prints the training log-loss, the
held-out AUC, the time, and with a distributed store the embedding traffic: rows asked for, rows
that crossed the network ("data rate": their ratio) and cache hits.
"""
import argparse
import json
import logging
import os
import tempfile
import time

import numpy as np

import mxmod as mx

NUM_DENSE, NUM_FIELDS = 13, 26


def field_sizes(rows_per_field, big_fields):
    """Rows of each field's table: ``big_fields`` of them ten times larger."""
    return [rows_per_field * (10 if f < big_fields else 1) for f in range(NUM_FIELDS)]


def zipf_ids(rs, size, count, exponent=1.1):
    """``count`` draws of ranks 0..size-1 with P(k) proportional to (k+1)^-exponent."""
    weights = np.arange(1, size + 1, dtype=np.float64) ** -exponent
    cdf = np.cumsum(weights)
    return np.searchsorted(cdf, rs.uniform(0, cdf[-1], size=count)).astype(np.int64)


def make_data(num_samples, sizes, seed=0):
    """(dense features, global categorical ids, labels) of a Criteo-like data set."""
    rs = np.random.RandomState(seed)
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    dense = rs.lognormal(0, 1, size=(num_samples, NUM_DENSE)).astype(np.float32)
    dense = np.log1p(dense).astype(np.float32)
    cats = np.stack([offsets[f] + zipf_ids(rs, sizes[f], num_samples)
                     for f in range(NUM_FIELDS)], axis=1)
    hidden = np.random.RandomState(seed + 1)
    w_dense = hidden.normal(0, 0.5, NUM_DENSE)
    effect = hidden.normal(0, 0.6, int(np.sum(sizes)))
    logit = (dense - dense.mean(axis=0)).dot(w_dense) + effect[cats].sum(axis=1) - 0.5
    labels = (rs.uniform(size=num_samples) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return dense, cats.astype(np.float32), labels


def wide_deep(num_rows, dim=16):
    """The wide & deep network; its two embedding tables are row_sparse."""
    dense = mx.sym.Variable('dense')
    cat = mx.sym.Variable('cat')
    wide_w = mx.sym.Variable('wide_weight', stype='row_sparse')
    deep_w = mx.sym.Variable('deep_weight', stype='row_sparse')
    wide = mx.sym.Embedding(cat, weight=wide_w, input_dim=num_rows, output_dim=1,
                            sparse_grad=True, name='wide')
    wide = mx.sym.sum(wide, axis=(1, 2), keepdims=False)
    deep = mx.sym.Embedding(cat, weight=deep_w, input_dim=num_rows, output_dim=dim,
                            sparse_grad=True, name='deep')
    deep = mx.sym.concat(mx.sym.flatten(deep), dense, dim=1)
    for i, hidden in enumerate((64, 32)):
        deep = mx.sym.FullyConnected(deep, num_hidden=hidden, name='fc%d' % i)
        deep = mx.sym.Activation(deep, act_type='relu', name='relu%d' % i)
    deep = mx.sym.FullyConnected(deep, num_hidden=1, name='fc_out')
    score = mx.sym.reshape(deep, shape=(-1,)) + wide
    return mx.sym.LogisticRegressionOutput(score, name='click')


def auc(labels, scores):
    """Area under the ROC curve (ties share their average rank)."""
    from scipy.stats import rankdata
    ranks = rankdata(scores)
    pos = labels > 0.5
    npos, nneg = int(pos.sum()), int((~pos).sum())
    if npos == 0 or nneg == 0:
        return float('nan')
    return float((ranks[pos].sum() - npos * (npos + 1) / 2.0) / (npos * nneg))


def log_loss(labels, probs):
    probs = np.clip(probs, 1e-7, 1 - 1e-7)
    return float(-np.mean(labels * np.log(probs) + (1 - labels) * np.log(1 - probs)))


def parse_cache(text):
    """'lfu:0.1:100' -> dict for kv.set_embedding_cache."""
    if not text:
        return None
    parts = text.split(':')
    if len(parts) != 3:
        raise SystemExit('--cache expects POLICY:CAPACITY:BOUND, e.g. lfu:0.1:100; got %r' % text)
    policy, capacity, bound = parts
    capacity = float(capacity) if '.' in capacity else int(capacity)
    return dict(policy=policy, capacity=capacity, bound=int(bound))


class Traffic(object):
    """Counters of kv.comm_stats() between the end of each epoch's first batch and its last
    batch (the rows of the training steps, not the epoch-end parameter pull)."""

    def __init__(self, kv, batches_per_epoch):
        self.kv = kv
        self.per_epoch = batches_per_epoch
        self.start = None
        self.epochs = []
        self.curve = []          # (epoch fraction, running training log-loss)

    def __call__(self, param):
        if param.eval_metric is not None and param.nbatch % 10 == 9:
            self.curve.append((param.epoch + (param.nbatch + 1.0) / self.per_epoch,
                               param.eval_metric.get()[1]))
        if self.kv is None or not hasattr(self.kv, 'comm_stats'):
            return
        if param.nbatch == 0:
            self.start = self.kv.comm_stats()
        elif param.nbatch == self.per_epoch - 1 and self.start is not None:
            now = self.kv.comm_stats()
            grew = {k: now[k] - self.start[k] for k in now if k != 'max_staleness'}
            grew['max_staleness'] = now['max_staleness']
            grew['steps'] = self.per_epoch - 1
            self.epochs.append(grew)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--kvstore', default='local')
    parser.add_argument('--samples', type=int, default=65536, help='training samples')
    parser.add_argument('--eval-samples', type=int, default=16384)
    parser.add_argument('--rows-per-field', type=int, default=100000)
    parser.add_argument('--big-fields', type=int, default=0,
                        help='fields whose table has 10x the rows (10^6 with the default)')
    parser.add_argument('--batch-size', type=int, default=512, help='global batch size')
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--optimizer', default='sgd')
    parser.add_argument('--lr', type=float, default=2.0)
    parser.add_argument('--cache', default='', help='POLICY:CAPACITY:BOUND, e.g. lfu:0.1:100')
    parser.add_argument('--no-prefetch', action='store_true')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--prefix', default=os.path.join(tempfile.gettempdir(), 'mxmod-ctr'),
                        help='checkpoint prefix (saved after every epoch by rank 0)')
    parser.add_argument('--out', default='', help='write the per-epoch results as JSON here')
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(message)s')

    sizes = field_sizes(args.rows_per_field, args.big_fields)
    num_rows = int(np.sum(sizes))
    dense, cats, labels = make_data(args.samples + args.eval_samples, sizes, args.seed)
    train_rows = slice(0, args.samples)
    eval_rows = slice(args.samples, args.samples + args.eval_samples)

    distributed = args.kvstore.startswith('dist')
    kv = mx.kv.create(args.kvstore) if distributed else args.kvstore
    rank, workers = (kv.rank, kv.num_workers) if distributed else (0, 1)
    per = args.batch_size // workers
    # each worker trains on its part of every global batch
    mine = np.concatenate([np.arange(b + rank * per, b + (rank + 1) * per)
                           for b in range(0, args.samples - args.batch_size + 1,
                                          args.batch_size)])
    train = mx.io.NDArrayIter({'dense': dense[train_rows][mine], 'cat': cats[train_rows][mine]},
                              {'click_label': labels[train_rows][mine]}, batch_size=per)
    evaluation = mx.io.NDArrayIter({'dense': dense[eval_rows], 'cat': cats[eval_rows]},
                                   {'click_label': labels[eval_rows]}, batch_size=per)

    mx.random.seed(args.seed)
    mod = mx.mod.Module(wide_deep(num_rows), data_names=['dense', 'cat'],
                        label_names=['click_label'])
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(mx.init.Normal(0.01))
    mod.init_optimizer(kvstore=kv, optimizer=args.optimizer,
                       optimizer_params={'learning_rate': args.lr,
                                         'rescale_grad': 1.0 / args.batch_size},
                       embedding_cache=dict(parse_cache(args.cache), prefetch=not args.no_prefetch)
                       if args.cache else None)

    cat_pos = [d.name for d in train.provide_data].index('cat')

    def rows_of(batch):
        # every lookup of the batch (repeats included): the store reads each row once, and its
        # counters relate the rows that travel to the lookups, as HET's data rate does
        ids = batch.data[cat_pos].reshape((-1,)).astype('int64')
        return {'wide_weight': ids, 'deep_weight': ids}

    rows_fn = rows_of if distributed else None    # one process keeps the tables itself
    traffic = Traffic(kv if distributed else None, train.num_data // per)
    results = []

    def after_epoch(epoch, symbol, arg_params, aux_params):
        trained = time.time() - tic[0]
        probs = mod.predict(evaluation, sparse_row_id_fn=rows_fn).asnumpy()
        row = {'epoch': epoch, 'auc': auc(labels[eval_rows], probs),
               'eval_logloss': log_loss(labels[eval_rows], probs),
               'seconds_train': trained, 'steps_per_epoch': train.num_data // per}
        if traffic.epochs:
            row.update(traffic.epochs[-1])
            asked = max(row['rows_requested'], 1)
            row['data_rate'] = row['rows_transferred'] / asked
        results.append(row)
        if rank == 0:
            logging.info('Epoch[%d] eval AUC=%.4f logloss=%.4f%s', epoch, row['auc'],
                         row['eval_logloss'],
                         ' rows asked/step=%.0f data rate=%.3f hits=%d misses=%d'
                         % (row['rows_requested'] / row['steps'], row['data_rate'],
                            row['cache_hits'], row['cache_misses']) if 'data_rate' in row
                         else '')
            mx.model.save_checkpoint(args.prefix, epoch + 1, symbol, arg_params, aux_params)
        tic[0] = time.time()

    tic = [time.time()]
    metric = mx.metric.CustomMetric(lambda label, prob: log_loss(label, prob.reshape(-1)),
                                    name='logloss')
    mod.fit(train, eval_metric=metric, num_epoch=args.epochs,
            sparse_row_id_fn=rows_fn, batch_end_callback=traffic,
            epoch_end_callback=after_epoch)
    if args.out and rank == 0:
        with open(args.out, 'w') as fout:
            json.dump({'args': vars(args), 'epochs': results, 'train_curve': traffic.curve},
                      fout, indent=1)
    if distributed:
        kv.barrier()


if __name__ == '__main__':
    main()
