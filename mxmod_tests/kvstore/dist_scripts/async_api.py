"""Run by ``mxmod.launch -n 2 -s S``: the dist_async kvstore API against numpy arithmetic.

Pushes are applied by the servers as they arrive, so values are checked after ``barrier()``
(which waits until the servers applied every worker's earlier pushes). Rank r prints
``OK dist_async <r>`` at the end."""
import os
import tempfile

import numpy as np

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.optimizer.pickling import loads

SHAPE = (2, 3)
RATE = 2.0
kv = mx.kv.create('dist_async')
RANK, NW = kv.rank, kv.num_workers


def same(arr, expected, what):
    got = arr.asnumpy()
    if not np.array_equal(got, np.broadcast_to(np.asarray(expected, got.dtype), got.shape)):
        raise AssertionError('rank %d %s: got %s, expected %s' % (RANK, what, got, expected))


def raises(fn, text, kind=MXNetError):
    try:
        fn()
    except kind as err:
        if text not in str(err):
            raise AssertionError('rank %d: error %r lacks %r' % (RANK, str(err), text))
        return
    raise AssertionError('rank %d: no %s (%s)' % (RANK, kind.__name__, text))


def pulled(store, key, shape=SHAPE):
    out = mx.nd.zeros(shape)
    store.pull(key, out=out)
    return out


def check_basics():
    assert type(kv).__name__ == 'DistAsyncKVStore' and kv.type == 'dist_async'
    assert NW == 2 and RANK in (0, 1), (RANK, NW)
    keys = ['w', 'x', 'big']
    kv.init(keys, [mx.nd.ones(SHAPE) * (RANK + 7), mx.nd.zeros((5,)), mx.nd.ones((300, 300))])
    same(pulled(kv, 'w'), 7, 'init takes rank 0 value')
    raises(lambda: kv.push('w', mx.nd.ones(SHAPE)), 'set_optimizer')
    raises(lambda: kv.pull('nope', out=mx.nd.zeros(SHAPE)), 'has not been inited')
    raises(lambda: kv.push('w', mx.nd.ones((4,))), 'shape mismatch')
    raises(lambda: kv.init('w', mx.nd.ones(SHAPE)), 'duplicate init')
    kv.set_optimizer(mx.optimizer.create('test', rescale_grad=RATE))
    for _ in range(3):
        kv.push('w', [mx.nd.ones(SHAPE, mx.cpu(d)) * (RANK + 1) for d in range(2)])
        kv.pushpull(['x', 'big'], [mx.nd.ones((5,)), mx.nd.ones((300, 300))])
    kv.barrier()
    same(pulled(kv, 'w'), 7 + RATE * 3 * 2 * NW * (NW + 1) / 2, 'async pushes all applied')
    same(pulled(kv, 'big', (300, 300)), 1 + RATE * 3 * NW, 'big key')
    outs = [mx.nd.zeros((5,)), mx.nd.zeros((5,))]
    kv.pushpull('x', mx.nd.zeros((5,)), out=outs)
    same(outs[1], RATE * 3 * NW, 'pushpull into out')
    rsp = mx.nd.zeros(SHAPE).tostype('row_sparse')
    kv.row_sparse_pull('w', out=rsp, row_ids=mx.nd.array([1]))
    expected = np.full(SHAPE, 7 + RATE * 3 * 2 * NW * (NW + 1) / 2, dtype=np.float32)
    expected[0] = 0
    same(rsp, expected, 'row_sparse_pull')
    kv.barrier()


def check_compression(threshold=0.5):
    kvc = mx.kv.create('dist_async')
    kvc.set_gradient_compression({'type': '2bit', 'threshold': threshold})
    kvc.set_optimizer(mx.optimizer.create('test', rescale_grad=RATE))
    kvc.init('c', mx.nd.zeros(SHAPE))
    for grad, levels in [(0.4, 0), (threshold - 0.4, 1), (0.2, 1), (-1.3, 0)]:
        kvc.push('c', mx.nd.ones(SHAPE) * grad)
        kvc.barrier()
        same(pulled(kvc, 'c'), threshold * RATE * NW * levels, 'compressed push %g' % grad)
        kvc.barrier()


def check_states_and_updater():
    kvs = mx.kv.create('dist_async')
    kvs.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    keys = ['k%d' % i for i in range(6)]
    kvs.init(keys, [mx.nd.ones(SHAPE)] * len(keys))
    kvs.push(keys, [mx.nd.ones(SHAPE)] * len(keys))
    kvs.barrier()
    folder = tempfile.mkdtemp()
    first = os.path.join(folder, 'a.states')
    kvs.save_optimizer_states(first)
    with open(first, 'rb') as fin:
        saved = loads(fin.read())
    assert sorted(saved) == keys, sorted(saved)
    for key in keys:
        # momentum after each worker's push applied on its own (no summing in async mode)
        same(saved[key], sum(-0.1 * 0.9 ** i for i in range(NW)), 'momentum state')
    kvs.barrier()
    kvs.push(keys, [mx.nd.ones(SHAPE)] * len(keys))
    kvs.barrier()
    kvs.load_optimizer_states(first)
    second = os.path.join(folder, 'b.states')
    kvs.save_optimizer_states(second)
    with open(second, 'rb') as fin:
        reloaded = loads(fin.read())
    for key in keys:
        same(reloaded[key], saved[key].asnumpy(), 'states reloaded on the servers')
    kvu = mx.kv.create('dist_async')
    raises(lambda: kvu.set_updater(lambda key, grad, weight: None), 'picklable', TypeError)
    kvu.set_updater(mx.optimizer.get_updater(mx.optimizer.create('test', rescale_grad=1.0)))
    kvu.init(0, mx.nd.zeros(SHAPE))
    kvu.push(0, mx.nd.ones(SHAPE))
    kvu.barrier()
    same(pulled(kvu, 0), NW, 'set_updater with a picklable updater')


check_basics()
check_compression()
check_states_and_updater()
print('OK dist_async %d' % RANK)
