"""Bit-identity check of training: trains an MLP (300 steps; 100 more with wd, clipping and
rescale), a small conv net with BatchNorm (100 steps) and a tiny MLP (300 steps with momentum, 200
without), each with its metric, and saves every parameter, auxiliary state, optimizer state and
metric value to an .npz file. Run it under two checkouts and compare the files:

    ROOT=/tmp/old OMP_NUM_THREADS=1 python bench/identical_training.py /tmp/old.npz
    OMP_NUM_THREADS=1 python bench/identical_training.py /tmp/new.npz
    python bench/identical_training.py --compare /tmp/old.npz /tmp/new.npz
"""
import os
import sys

import numpy as np


def compare(first, second):
    a, b = np.load(first), np.load(second)
    if sorted(a.files) != sorted(b.files):
        raise SystemExit('different arrays: %s' % sorted(set(a.files) ^ set(b.files)))
    bad = [k for k in a.files if a[k].dtype != b[k].dtype or
           not np.array_equal(a[k], b[k], equal_nan=True) or
           not np.array_equal(np.signbit(a[k]), np.signbit(b[k]))]
    print('compared %d arrays, %d differ %s' % (len(a.files), len(bad), bad))
    raise SystemExit(1 if bad else 0)


if sys.argv[1] == '--compare':
    compare(sys.argv[2], sys.argv[3])
sys.path.insert(0, os.environ.get('ROOT', os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import mxmod as mx  # noqa: E402  pylint: disable=wrong-import-position

out = {}
def run(name, sym, shape, n, steps, opt_params, ctx_kw={}):
    mx.random.seed(0); np.random.seed(0)
    rs = np.random.RandomState(1)
    X = rs.rand(n * 4, *shape).astype(np.float32); y = rs.randint(0, 10, n * 4).astype(np.float32)
    it = mx.io.NDArrayIter(X, y, batch_size=n, shuffle=True, label_name='softmax_label')
    mod = mx.mod.Module(sym, context=mx.cpu())
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(mx.init.Xavier(magnitude=2.0))
    mod.init_optimizer(optimizer='sgd', optimizer_params=opt_params)
    metric = mx.metric.create(['acc', 'ce'])
    done = 0
    while done < steps:
        it.reset()
        for b in it:
            mod.forward_backward(b); mod.update(); mod.update_metric(metric, b.label)
            done += 1
            if done >= steps: break
    args, auxs = mod.get_params()
    for k, v in list(args.items()) + list(auxs.items()):
        out[name + ':' + k] = v.asnumpy()
    for k, v in mod._updater.states.items():
        if v is not None:
            out[name + ':state%s' % k] = (v[0] if isinstance(v, (tuple, list)) else v).asnumpy()
    out[name + ':metric'] = np.array([v for _, v in metric.get_name_value()])
d = mx.sym.Variable('data')
net = d
for i, h in enumerate((512, 256)):
    net = mx.sym.Activation(mx.sym.FullyConnected(net, num_hidden=h, name='fc%d' % i), act_type='relu')
mlp = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=10, name='out'), name='softmax')
run('mlp', mlp, (784,), 128, 300, {'learning_rate': 0.1, 'momentum': 0.9})
run('mlpwd', mlp, (784,), 64, 100, {'learning_rate': 0.05, 'momentum': 0.9, 'wd': 1e-4, 'clip_gradient': 0.5, 'rescale_grad': 0.5})
c = mx.sym.Convolution(d, kernel=(3, 3), num_filter=8, pad=(1, 1), name='c1')
c = mx.sym.BatchNorm(c, name='bn1'); c = mx.sym.Activation(c, act_type='relu')
c = mx.sym.Pooling(c, kernel=(2, 2), stride=(2, 2), pool_type='max')
c = mx.sym.Convolution(c, kernel=(3, 3), num_filter=16, pad=(1, 1), name='c2')
c = mx.sym.Activation(c, act_type='relu')
c = mx.sym.FullyConnected(mx.sym.Flatten(c), num_hidden=10, name='fc')
conv = mx.sym.SoftmaxOutput(c, name='softmax')
run('conv', conv, (3, 16, 16), 32, 100, {'learning_rate': 0.05, 'momentum': 0.9, 'wd': 1e-4})
t = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Activation(mx.sym.FullyConnected(d, num_hidden=16, name='fc1'), act_type='relu'), num_hidden=10, name='fc2'), name='softmax')
run('tiny', t, (10,), 8, 300, {'learning_rate': 0.1, 'momentum': 0.9})
run('tinynomom', t, (10,), 8, 200, {'learning_rate': 0.1})
np.savez(sys.argv[1], **out)
