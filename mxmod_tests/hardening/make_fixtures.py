"""Write mxnet_states.npz: the ``.states`` pickles MXNet 1.9.1 writes, for every registered
optimizer (float32, and float16 with multi_precision), with and without ``dump_optimizer``, with
each learning-rate scheduler, from a local Updater and from a kvstore updater (string keys), plus
a Module checkpoint (``mxnet_ckpt-*``: symbol, params, states) for the resume and fuzz tests.

Run from the repository root with the oracle's interpreter (the tests only read the output):
    /tmp/mxnet-ref/bin/python -m mxmod_tests.hardening.make_fixtures
Keys of the npz: ``<optimizer>:<float32|mp>:<plain|dump>[:<scheduler>]`` and ``kvstore:<plain|dump>``,
each a uint8 array holding the file's bytes; ``layout:<key>`` lists the weight shapes/dtypes.
"""
import json
import os
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, 'fixtures')
SHAPES = [(3, 4), (5, 2)]  # 2-d: GroupAdaGrad only takes matrices


def _schedulers(mx):
    return {'factor': mx.lr_scheduler.FactorScheduler(2, 0.9),
            'multifactor': mx.lr_scheduler.MultiFactorScheduler([2, 4], 0.5),
            'poly': mx.lr_scheduler.PolyScheduler(10, 0.1),
            'cosine': mx.lr_scheduler.CosineScheduler(10, 0.1)}


def _run_updater(mx, updater, dtype, keys):
    rng = np.random.RandomState(0)
    weights = [mx.nd.array(rng.rand(*s), dtype=dtype) for s in SHAPES]
    for _ in range(3):
        for key, weight in zip(keys, weights):
            updater(key, mx.nd.array(rng.rand(*weight.shape) - 0.5, dtype=dtype), weight)


def _optimizer_states(mx, out):
    for name in sorted(mx.optimizer.Optimizer.opt_registry):
        for variant, dtype in (('float32', 'float32'), ('mp', 'float16')):
            scheds = [None] + (sorted(_schedulers(mx)) if variant == 'float32' and name in
                               ('sgd', 'adam') else [])
            for sched in scheds:
                kwargs = {'learning_rate': 0.05, 'multi_precision': variant == 'mp'}
                if sched is not None:
                    kwargs['lr_scheduler'] = _schedulers(mx)[sched]
                updater = mx.optimizer.get_updater(mx.optimizer.create(name, **kwargs))
                _run_updater(mx, updater, dtype, [0, 1])
                for dump in ('plain', 'dump'):
                    key = ':'.join([name, variant, dump] + ([sched] if sched else []))
                    out[key] = updater.get_states(dump == 'dump')
                    out['layout:' + key] = json.dumps([SHAPES, dtype])


def _kvstore_states(mx, out):
    kv = mx.kv.create('local')
    kv.set_optimizer(mx.optimizer.create('adam', learning_rate=0.05))
    names = ['fc_weight', 'fc_bias']
    for name, shape in zip(names, SHAPES):
        kv.init(name, mx.nd.zeros(shape))
    for _ in range(2):
        for name, shape in zip(names, SHAPES):
            kv.push(name, mx.nd.ones(shape))
    for dump in ('plain', 'dump'):
        fname = os.path.join(FIXTURES, 'tmp.states')
        kv.save_optimizer_states(fname, dump_optimizer=dump == 'dump')
        with open(fname, 'rb') as handle:
            out['kvstore:' + dump] = handle.read()
        os.remove(fname)


def _checkpoint(mx):
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=5, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    net = mx.sym.SoftmaxOutput(net, name='softmax')
    rng = np.random.RandomState(1)
    x, y = rng.rand(20, 4).astype('float32'), rng.randint(0, 3, 20).astype('float32')
    mod = mx.mod.Module(net)
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=5), num_epoch=1, optimizer='adam',
            optimizer_params={'learning_rate': 0.01}, initializer=mx.init.Xavier())
    mod.save_checkpoint(os.path.join(FIXTURES, 'mxnet_ckpt'), 1, save_optimizer_states=True)


def main():
    import mxnet as mx  # pylint: disable=import-outside-toplevel
    warnings.simplefilter('ignore')
    mx.random.seed(0)
    os.makedirs(FIXTURES, exist_ok=True)
    out = {}
    _optimizer_states(mx, out)
    _kvstore_states(mx, out)
    arrays = {k: np.frombuffer(v.encode() if isinstance(v, str) else v, dtype=np.uint8)
              for k, v in out.items()}
    np.savez_compressed(os.path.join(FIXTURES, 'mxnet_states.npz'), **arrays)
    _checkpoint(mx)


if __name__ == '__main__':
    main()
