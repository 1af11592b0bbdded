"""A few training batches of example/capsnet's network (run in that folder, by
run_more_examples.py): capsulenet.py's own capsnet() and SimpleLRScheduler, trained
with its optimizer (Adam through init_optimizer) on the first images of the MNIST stand-in, from
parameters drawn by numpy.random.RandomState(0) (the same start on both implementations).
Its own main cannot run on MXNet 1.9.1 (MNISTCustomIter never calls NDArrayIter.__init__).

    python capsnet_batches.py [--batch-size 10] [--batches 4] [--num-routing 3]

Prints what its LossMetric reports (accuracy, mean loss, mean reconstruction error so far)
after each batch (computed here: LossMetric's int() of a 1-element array fails on numpy >= 2.4),
and the sum of the capsule lengths of a last, inference forward pass."""
import argparse
import os
import sys

import numpy as np

from idx_files import read_idx  # this folder (the script's, first on sys.path)

sys.path.insert(0, os.getcwd())
import mxnet as mx  # noqa: E402  pylint: disable=wrong-import-position
import capsulenet  # noqa: E402  pylint: disable=wrong-import-position,import-error


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--batch-size', type=int, default=10)
    ap.add_argument('--batches', type=int, default=4)
    ap.add_argument('--num-routing', type=int, default=3)
    args = ap.parse_args()
    count = args.batch_size * args.batches
    images = read_idx('train-images-idx3-ubyte.gz')[:count]
    labels = read_idx('train-labels-idx1-ubyte.gz')[:count]
    data = capsulenet.to4d(images)
    train = mx.io.NDArrayIter(data, labels.astype(np.float32), args.batch_size)
    net = capsulenet.capsnet(batch_size=args.batch_size, n_class=10,
                             num_routing=args.num_routing, recon_loss_weight=0.392)
    mod = mx.mod.Module(net, context=mx.cpu(), data_names=('data',),
                        label_names=('softmax_label',))
    mod.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
    rng = np.random.RandomState(0)
    shapes = dict(zip(net.list_arguments(), net.infer_shape(
        data=(args.batch_size, 1, 28, 28), softmax_label=(args.batch_size,))[0]))
    params = {}
    for name in net.list_arguments():
        if name in ('data', 'softmax_label'):
            continue
        fan_in = int(np.prod(shapes[name][1:])) or 1
        scale = 0. if name == 'Bias' else np.sqrt(1. / fan_in)
        params[name] = mx.nd.array(rng.uniform(-scale, scale, shapes[name]))
    mod.init_params(arg_params=params, aux_params={})
    scheduler = capsulenet.SimpleLRScheduler(0.001)
    mod.init_optimizer(kvstore='device', optimizer='adam',
                       optimizer_params={'lr_scheduler': scheduler})
    hits, losses, recons = 0, [], []
    for n_batch, batch in enumerate(train):
        mod.forward_backward(batch)
        mod.update()
        caps, loss, recon = [out.asnumpy() for out in mod.get_outputs()]
        hits += int((caps.argmax(axis=1) == batch.label[0].asnumpy()).sum())
        losses.append(float(loss.ravel()[0]))
        recons.append(float(recon.ravel()[0]))
        acc, loss, recon = hits / (args.batch_size * (n_batch + 1.)), np.mean(losses), \
            np.mean(recons)
        print('batch %d acc %.4f loss %.6f recon_err %.6f' % (n_batch, acc, loss, recon))
    mod.forward(batch, is_train=False)
    print('capsule length sum %.6f' % float(mod.get_outputs()[0].asnumpy().sum()))
    print('final loss %.6f' % loss)


if __name__ == '__main__':
    main()
