"""Train a multilayer perceptron with mx.mod.Module on an embedded data set, then checkpoint,
reload and evaluate it: the whole MXNet Module workflow, unchanged but for the import.

The default data set is three interleaved spirals (2-D points, 3 classes) generated
deterministically in this file, so the example needs no download.

    python examples/train_mlp.py                 # defaults: 20 epochs, 1 CPU context
    python examples/train_mlp.py --contexts 2    # data parallel over cpu(0), cpu(1)

It writes, with the prefix ``--prefix`` (default: mxmod-spirals in the temporary directory):
PREFIX-symbol.json and PREFIX-0020.params (the checkpoint, which MXNet loads too), and
PREFIX-history.csv / .json / .png (each epoch's metrics, learning rate and time; the plot when
matplotlib is installed).
"""
import argparse
import logging
import os
import tempfile

import numpy as np

import mxmod as mx


def spirals(num_per_class=600, classes=3, noise=0.15, seed=0):
    """Points on ``classes`` interleaved spiral arms, shuffled; returns (data, labels)."""
    rng = np.random.RandomState(seed)
    data, labels = [], []
    for k in range(classes):
        radius = np.linspace(0.05, 1.0, num_per_class)
        angle = np.linspace(k * 2 * np.pi / classes, k * 2 * np.pi / classes + 3.0, num_per_class)
        angle += rng.randn(num_per_class) * noise
        data.append(np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1))
        labels.append(np.full(num_per_class, k))
    data = np.concatenate(data).astype(np.float32)
    labels = np.concatenate(labels).astype(np.float32)
    order = rng.permutation(len(labels))
    return data[order], labels[order]


def mlp(num_classes=3, hidden=64):
    """data -> FC -> BatchNorm -> relu -> FC -> relu -> FC -> SoftmaxOutput."""
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(net, num_hidden=hidden, name='fc1')
    net = mx.sym.BatchNorm(net, fix_gamma=False, name='bn1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=hidden, name='fc2')
    net = mx.sym.Activation(net, act_type='relu', name='relu2')
    net = mx.sym.FullyConnected(net, num_hidden=num_classes, name='fc3')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--batch-size', type=int, default=50)
    parser.add_argument('--lr', type=float, default=0.1)
    parser.add_argument('--contexts', type=int, default=1, help='number of CPU contexts')
    parser.add_argument('--prefix', default=os.path.join(tempfile.gettempdir(), 'mxmod-spirals'))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format='%(message)s')
    mx.random.seed(42)

    data, labels = spirals()
    split = int(0.8 * len(labels))
    train = mx.io.NDArrayIter(data[:split], labels[:split], args.batch_size, shuffle=True)
    val = mx.io.NDArrayIter(data[split:], labels[split:], args.batch_size)
    contexts = [mx.cpu(i) for i in range(args.contexts)]

    mod = mx.mod.Module(mlp(), context=contexts)
    mod.fit(train, eval_data=val, eval_metric='acc', num_epoch=args.epochs,
            optimizer='sgd', optimizer_params={'learning_rate': args.lr, 'momentum': 0.9, 'wd': 1e-4},
            initializer=mx.init.Xavier(magnitude=2.0),
            batch_end_callback=mx.callback.Speedometer(args.batch_size, 20),
            epoch_end_callback=mx.callback.do_checkpoint(args.prefix, period=args.epochs),
            history=True)

    restored = mx.mod.Module.load(args.prefix, args.epochs, context=contexts)
    restored.bind(data_shapes=val.provide_data, label_shapes=val.provide_label, for_training=False)
    accuracy = dict(restored.score(val, 'acc'))['accuracy']
    logging.info('validation accuracy of the reloaded checkpoint %s-%04d.params: %.3f',
                 args.prefix, args.epochs, accuracy)
    logging.info('metric history: %s-history.csv (.json, .png)', args.prefix)
    if accuracy < 0.9:
        raise SystemExit('training did not converge (accuracy %.3f < 0.9)' % accuracy)


if __name__ == '__main__':
    main()
