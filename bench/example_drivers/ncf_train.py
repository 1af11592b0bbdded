"""example/neural_collaborative_filtering's training (train.py's loop: its Module bound with the
data in the order item, user, Adam, the cross-entropy metric, Speedometer, a checkpoint and the
hit ratio / NDCG of core/evaluate.py each epoch) with core/model.py's network, run in that
folder by run_more_examples.py. train.py itself draws its batches with mx.gluon.data's
DataLoader (outside mxmod's scope); here numpy.random.RandomState(seed) draws the same kind of
batches (each positive rating with ``--num-negative`` random unrated items, shuffled, the last
partial batch dropped), and the parameters, after the example's own initializers ran, are
overwritten with numpy draws, so that both implementations start alike.

Then model_optimizer.py's fused model of the last epoch is evaluated (see optimized()).

    python ncf_train.py [--batch-size 256] [--epoch 2] [--layers '[64, 64, 32, 16]'] ..."""
import argparse
import logging
import os
import sys

import numpy as np

sys.path.insert(0, os.getcwd())
import mxnet as mx  # noqa: E402  pylint: disable=wrong-import-position
from core.model import get_model  # noqa: E402  pylint: disable=wrong-import-position,import-error
from core.evaluate import evaluate_model  # noqa: E402  pylint: disable=wrong-import-position,import-error


def cross_entropy(label, pred, eps=1e-12):
    """train.py's metric."""
    return float(np.sum(-(label * np.log(pred.ravel() + eps)
                          + (1 - label) * np.log(1 - pred.ravel() + eps))))


def _read(path):
    with open(path) as src:
        return [[int(x) for x in line.split('\t')] for line in src if line.strip()]


def _batches(train, rated, nb_items, num_neg, batch_size, rng):
    rows = []
    for user, item, _ in train:
        rows.append((user, item, 1.))
        for _ in range(num_neg):
            j = rng.randint(nb_items)
            while (user, j) in rated:
                j = rng.randint(nb_items)
            rows.append((user, j, 0.))
    rows = np.array(rows)[rng.permutation(len(rows))]
    for start in range(0, len(rows) - batch_size + 1, batch_size):
        yield rows[start:start + batch_size].T


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--path', default='./data/ml-20m/')
    ap.add_argument('--batch-size', type=int, default=256)
    ap.add_argument('--eval-batch-size', type=int, default=1000)
    ap.add_argument('--model-type', default='neumf')
    ap.add_argument('--num-negative', type=int, default=4)
    ap.add_argument('--layers', default='[64, 64, 32, 16]')  # model_optimizer: [0] == [1]
    ap.add_argument('--factor-size-gmf', type=int, default=8)
    ap.add_argument('--learning-rate', type=float, default=0.002)
    ap.add_argument('--epoch', type=int, default=2)
    ap.add_argument('--seed', type=int, default=3)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    rng = np.random.RandomState(args.seed)
    train = _read(os.path.join(args.path, 'train-ratings.csv'))
    test = _read(os.path.join(args.path, 'test-ratings.csv'))
    negs = _read(os.path.join(args.path, 'test-negative.csv'))
    nb_users = max(max(r[0] for r in train), max(r[0] for r in test)) + 1
    nb_items = max(max(r[1] for r in train), max(max(n) for n in negs),
                   max(r[1] for r in test)) + 1
    rated = {(u, i) for u, i, _ in train}
    layers = eval(args.layers)  # pylint: disable=eval-used  (train.py's argument format)
    net = get_model(args.model_type, layers[0] // 2, args.factor_size_gmf, layers, 1,
                    nb_users, nb_items)
    mod = mx.module.Module(net, context=mx.cpu(), data_names=['user', 'item'],
                           label_names=['softmax_label'])
    bs = args.batch_size
    mod.bind(for_training=True,
             data_shapes=[mx.io.DataDesc(name='item', shape=(bs,)),
                          mx.io.DataDesc(name='user', shape=(bs,))],
             label_shapes=[mx.io.DataDesc(name='softmax_label', shape=(bs,))])
    mod.init_params()
    arg_params, aux_params = mod.get_params()
    start = {name: mx.nd.array(rng.normal(0, 0.05, value.shape))
             for name, value in sorted(arg_params.items())}
    mod.set_params(start, aux_params)
    mod.init_optimizer(optimizer='adam', optimizer_params=[('learning_rate', args.learning_rate)])
    metric = mx.metric.create(cross_entropy)
    speedometer = mx.callback.Speedometer(bs, 20)
    for epoch in range(args.epoch):
        metric.reset()
        for nbatch, (users, items, labels) in enumerate(
                _batches(train, rated, nb_items, args.num_negative, bs, rng)):
            labels = mx.nd.array(labels)
            batch = mx.io.DataBatch(data=[mx.nd.array(items).astype('int32'),
                                          mx.nd.array(users).astype('int32')],
                                    label=[labels])
            mod.forward(batch)
            mod.backward()
            mod.update()
            metric.update(labels=labels, preds=mod.get_outputs()[0])
            speedometer(mx.model.BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=metric,
                                               locals=locals()))
        print('Epoch %d train cross-entropy %.6f' % (epoch, metric.get()[1]))
        os.makedirs('model', exist_ok=True)
        mod.save_checkpoint(os.path.join('model', args.model_type), epoch)
        hits, ndcgs = evaluate_model(mod, test, [list(n) for n in negs], 10,
                                     args.eval_batch_size, mx.cpu(), logging)
        print('Iteration %d: HR = %.4f, NDCG = %.4f' % (epoch, np.mean(hits), np.mean(ndcgs)))
    optimized(args, layers, nb_users, nb_items, test, negs)


def optimized(args, layers, nb_users, nb_items, test, negs):
    """model_optimizer.py's fusion of the last checkpoint (the first MLP layer folded into the
    user and item embeddings: get_model(opt=True)), saved as <prefix>-opt, loaded and evaluated
    as ncf.py evaluates a float32 model (ncf.py itself imports mx.contrib.quantization, and
    model_optimizer.py core/dataset.py's gluon Dataset: outside mxmod's scope)."""
    prefix, epoch = os.path.join('model', args.model_type), args.epoch - 1
    net = get_model(args.model_type, layers[0] // 2, args.factor_size_gmf, layers, 1,
                    nb_users, nb_items, opt=True)
    raw_params, _ = mx.model.load_params(prefix, epoch)
    fc_0_left, fc_0_right = mx.nd.split(raw_params['fc_0_weight'], axis=1, num_outputs=2)
    user_weight_fusion = mx.nd.FullyConnected(
        data=raw_params['mlp_user_weight'], weight=fc_0_left, bias=raw_params['fc_0_bias'],
        no_bias=False, num_hidden=layers[0])
    item_weight_fusion = mx.nd.FullyConnected(
        data=raw_params['mlp_item_weight'], weight=fc_0_right, no_bias=True,
        num_hidden=layers[0])
    opt_params = raw_params
    del opt_params['mlp_user_weight']
    del opt_params['mlp_item_weight']
    del opt_params['fc_0_bias']
    opt_params['fused_mlp_user_weight'] = user_weight_fusion
    opt_params['fused_mlp_item_weight'] = item_weight_fusion
    mx.model.save_checkpoint(prefix + '-opt', epoch, net, opt_params, {})
    net, arg_params, aux_params = mx.model.load_checkpoint(prefix + '-opt', epoch)
    mod = mx.module.Module(net, context=mx.cpu(), data_names=['user', 'item'],
                           label_names=['softmax_label'])
    bs = args.eval_batch_size
    mod.bind(for_training=False,
             data_shapes=[mx.io.DataDesc(name='item', shape=(bs,)),
                          mx.io.DataDesc(name='user', shape=(bs,))],
             label_shapes=[mx.io.DataDesc(name='softmax_label', shape=(bs,))])
    mod.set_params(arg_params, aux_params)
    hits, ndcgs = evaluate_model(mod, test, [list(n) for n in negs], 10, bs, mx.cpu(), logging)
    print('Optimized model: HR = %.4f, NDCG = %.4f' % (np.mean(hits), np.mean(ndcgs)))


if __name__ == '__main__':
    main()
