"""A few steps of dist_sync Module training with the optimizer on the store, for the sharded
update tests: ``shard_update_case.py OPTIMIZER NDEV OUT.npz [--fail]``. Each rank writes its final
parameters and its (all-gathered) optimizer states to OUT.rank<r>.npz. With ``--fail`` the
sharded update of fc1_weight raises on the communication thread; the rank checks the error it
gets in ``update`` and writes it to OUT.rank<r>.txt."""
import os
import sys
import tempfile

import numpy as np

import mxmod as mx
from mxmod.optimizer.pickling import load_states


def mlp():
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(net, num_hidden=96, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=77, name='fc2')   # 96 x 77: not a multiple of 4
    net = mx.sym.Activation(net, act_type='tanh', name='tanh2')
    net = mx.sym.FullyConnected(net, num_hidden=5, name='fc3')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def main():
    optimizer, ndev, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    kv = mx.kv.create('dist_sync' if ndev == 1 else 'dist_device_sync')
    if '--fail' in sys.argv:
        return fail(kv, out)
    rank, workers = kv.rank, kv.num_workers
    rs = np.random.RandomState(5)
    per = 8
    ctx = [mx.cpu(i) for i in range(ndev)]
    mod = mx.mod.Module(mlp(), context=ctx)
    mod.bind([('data', (per, 130))], [('softmax_label', (per,))])
    mx.random.seed(3)
    mod.init_params(mx.init.Xavier(magnitude=2.0))
    params = {'learning_rate': 0.05, 'wd': 1e-3, 'clip_gradient': 0.5}
    if optimizer in ('sgd', 'nag'):
        params['momentum'] = 0.9
    mod.init_optimizer(kvstore=kv, optimizer=optimizer, optimizer_params=params)
    for _ in range(4):
        X = rs.randn(per * workers, 130).astype(np.float32)
        y = rs.randint(0, 5, per * workers).astype(np.float32)
        rows = slice(rank * per, (rank + 1) * per)
        batch = mx.io.DataBatch([mx.nd.array(X[rows])], [mx.nd.array(y[rows])])
        mod.forward_backward(batch)
        mod.update()
    arg, _ = mod.get_params()
    result = {k: v.asnumpy() for k, v in arg.items()}
    fname = os.path.join(tempfile.mkdtemp(), 'states')
    mod.save_optimizer_states(fname)        # every worker: the sharded states are gathered
    with open(fname, 'rb') as handle:
        states, _ = load_states(handle.read())
    for key, state in states.items():
        parts = state if isinstance(state, (tuple, list)) else [state]
        for i, part in enumerate(parts):
            if part is not None:
                result['state:%s:%d' % (key, i)] = part.asnumpy()
    shards = getattr(kv, '_shards', None)
    result['sharded_calls'] = np.array(shards.calls if shards is not None else 0)
    np.savez(out.replace('.npz', '.rank%d.npz' % rank), **result)
    kv.barrier()


def fail(kv, out):
    """The sharded update of fc1_weight fails on every rank: update raises naming rank and key."""
    from mxmod.kvstore import shard_update
    real = shard_update.ShardedUpdates._update

    def broken(self, key, *args):
        if key == 'fc1_weight':
            raise ValueError('shard update broken')
        return real(self, key, *args)
    shard_update.ShardedUpdates._update = broken
    mod = mx.mod.Module(mlp(), context=mx.cpu())
    mod.bind([('data', (8, 130))], [('softmax_label', (8,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(kvstore=kv, optimizer='sgd', optimizer_params={'momentum': 0.9})
    rs = np.random.RandomState(kv.rank)
    batch = mx.io.DataBatch([mx.nd.array(rs.randn(8, 130))], [mx.nd.array(rs.randint(0, 5, 8))])
    mod.forward_backward(batch)
    try:
        mod.update()
    except mx.base.MXNetError as err:
        message = str(err)
    else:
        message = 'no error'
    with open(out.replace('.npz', '.rank%d.txt' % kv.rank), 'w') as handle:
        handle.write(message)
    shard_update.ShardedUpdates._update = real
    kv.barrier()


if __name__ == '__main__':
    sys.exit(main())
