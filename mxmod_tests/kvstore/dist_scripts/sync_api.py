"""Run under MPI (2+ ranks): the dist_sync / dist_device_sync kvstore API against numpy sums.

Every check raises AssertionError on a mismatch (which aborts the MPI job); rank r prints
``OK <kvtype> <r>`` at the end. Usage: sync_api.py [dist_sync|dist_device_sync]."""
import os
import sys
import tempfile

import numpy as np

import mxmod as mx
from mxmod.base import MXNetError

KVTYPE = sys.argv[1] if len(sys.argv) > 1 else 'dist_sync'
SHAPE = (2, 3)
RATE = 2.0
kv = mx.kv.create(KVTYPE)
RANK, NW = kv.rank, kv.num_workers
DEVS = [mx.cpu(0), mx.cpu(1)]


def same(arr, expected, what):
    got = arr.asnumpy() if hasattr(arr, 'asnumpy') else arr
    if not np.array_equal(got, np.broadcast_to(np.asarray(expected, got.dtype), got.shape)):
        raise AssertionError('rank %d %s: got %s, expected %s' % (RANK, what, got, expected))


def raises(fn, text):
    try:
        fn()
    except MXNetError as err:
        if text not in str(err):
            raise AssertionError('rank %d: error %r lacks %r' % (RANK, str(err), text))
        return
    raise AssertionError('rank %d: no MXNetError (%s)' % (RANK, text))


def check_basics():
    assert kv.type == KVTYPE and NW >= 2 and 0 <= RANK < NW, (kv.type, RANK, NW)
    assert kv.is_capable('optimizer')
    # init keeps rank 0's value
    kv.init('w', mx.nd.ones(SHAPE) * (RANK + 7))
    out = mx.nd.zeros(SHAPE)
    kv.pull('w', out=out)
    same(out, 7, 'init takes rank 0 value')
    # push: per-device lists summed, then summed over workers; store = sum without updater
    kv.push('w', [mx.nd.ones(SHAPE, d) * (RANK + 1) for d in DEVS])
    outs = [mx.nd.zeros(SHAPE, d) for d in DEVS]
    kv.pull('w', out=outs)
    for o in outs:
        same(o, 2 * NW * (NW + 1) / 2, 'push sums devices and workers')
    # list keys, int keys, pushpull in place and into out, broadcast
    kv2 = mx.kv.create(KVTYPE)
    kv2.init([3, 5], [mx.nd.zeros(SHAPE), mx.nd.zeros((4,))])
    raises(lambda: kv2.init('s', mx.nd.zeros(SHAPE)), 'key')
    grads = [[mx.nd.ones(SHAPE, d) for d in DEVS], [mx.nd.ones((4,)) * RANK]]
    kv2.pushpull([3, 5], grads)
    same(grads[0][0], 2 * NW, 'pushpull in place')
    same(grads[1][0], NW * (NW - 1) / 2, 'pushpull list')
    dst = mx.nd.zeros(SHAPE)
    kv2.pushpull(3, mx.nd.ones(SHAPE), out=dst)
    same(dst, NW, 'pushpull out')
    bout = [mx.nd.zeros((4,), d) for d in DEVS]
    kv2.broadcast(9, mx.nd.ones((4,)) * (RANK + 3), out=bout)
    same(bout[1], 3, 'broadcast')
    raises(lambda: kv2.init(3, mx.nd.zeros(SHAPE)), 'duplicate init')


def check_errors_and_types():
    raises(lambda: kv.pull('missing', out=mx.nd.zeros(SHAPE)), 'has not been inited')
    raises(lambda: kv.push('missing', mx.nd.zeros(SHAPE)), 'has not been inited')
    raises(lambda: kv.push('w', mx.nd.zeros((5,))), 'shape mismatch')
    raises(lambda: kv.pull('w', out=mx.nd.zeros((5,))), 'shape mismatch')
    kv.init('h', mx.nd.ones(SHAPE, dtype='float16'))
    kv.push('h', mx.nd.ones(SHAPE, dtype='float16') * (RANK + 1))
    out = mx.nd.zeros(SHAPE, dtype='float16')
    kv.pull('h', out=out)
    same(out, NW * (NW + 1) / 2, 'float16 sum')
    kv.init('rsp', mx.nd.array(np.arange(12.).reshape(4, 3)))
    rsp = mx.nd.zeros((4, 3)).tostype('row_sparse')
    kv.row_sparse_pull('rsp', out=rsp, row_ids=mx.nd.array([0, 2]))
    expected = np.arange(12.).reshape(4, 3)
    expected[[1, 3]] = 0
    same(rsp, expected, 'row_sparse_pull')


def check_optimizer_and_states():
    kv3 = mx.kv.create(KVTYPE)
    kv3.set_optimizer(mx.optimizer.create('test', rescale_grad=RATE))
    kv3.init(['a', 'b'], [mx.nd.ones(SHAPE), mx.nd.ones((50, 50))])
    for i in range(3):
        kv3.push(['a', 'b'], [mx.nd.ones(SHAPE) * (RANK + 1), mx.nd.ones((50, 50)) * (RANK + 1)])
        out = mx.nd.zeros(SHAPE)
        kv3.pull('a', out=out)
        same(out, 1 + RATE * (i + 1) * NW * (NW + 1) / 2, 'optimizer on the store')
    sgd = mx.kv.create(KVTYPE)
    sgd.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    sgd.init('m', mx.nd.ones(SHAPE))
    sgd.push('m', mx.nd.ones(SHAPE))
    fname = os.path.join(tempfile.mkdtemp(), 'kv.states')
    sgd.save_optimizer_states(fname)
    sgd.push('m', mx.nd.ones(SHAPE))
    after_two = mx.nd.zeros(SHAPE)
    sgd.pull('m', out=after_two)
    sgd.load_optimizer_states(fname)
    sgd.push('m', mx.nd.ones(SHAPE))
    out = mx.nd.zeros(SHAPE)
    sgd.pull('m', out=out)
    # momentum state restored to after step 1: step 3 repeats step 2's update
    same(out - after_two, (after_two - (1 - 0.1 * NW)).asnumpy(), 'optimizer states reload')

    def updater(key, grad, stored):
        stored[:] = stored * 10 + grad
    kv4 = mx.kv.create(KVTYPE)
    kv4.set_updater(updater)
    kv4.init(1, mx.nd.ones(SHAPE))
    kv4.push(1, mx.nd.ones(SHAPE))
    out = mx.nd.zeros(SHAPE)
    kv4.pull(1, out=out)
    same(out, 10 + NW, 'set_updater')


def check_compression(threshold=0.5):
    kvc = mx.kv.create(KVTYPE)
    kvc.set_optimizer(mx.optimizer.create('test', rescale_grad=RATE))
    kvc.set_gradient_compression({'type': '2bit', 'threshold': threshold})
    kvc.init('c', mx.nd.zeros(SHAPE))
    kvc.init('c1', mx.nd.ones(SHAPE))
    val = mx.nd.zeros(SHAPE)
    kvc.pull('c1', out=val)
    same(val, 1, 'init is not compressed')
    steps = [(0.4, 0), (threshold - 0.4, 1), (0.2, 1), (threshold - 0.2, 2)]
    for grad, levels in steps:
        kvc.push('c', [mx.nd.ones(SHAPE, d) * grad / 2 for d in DEVS])
        kvc.pull('c', out=val)
        same(val, threshold * RATE * NW * levels, 'compression residual (push %g)' % grad)
    kvc.push('c', mx.nd.ones(SHAPE) * -1.3)
    kvc.pull('c', out=val)
    # residual 0 before; -1.3 sends -0.5 (residual -0.8)
    same(val, threshold * RATE * NW * 2 - threshold * RATE * NW, 'negative quantization')
    raises(lambda: mx.kv.create('local').set_gradient_compression(
        {'type': '2bit', 'threshold': 0.5}), 'not supported')


def check_fusion():
    kvf = mx.kv.create(KVTYPE)
    keys = ['f%d' % i for i in range(40)]
    kvf.init(keys, [mx.nd.zeros((10, 10))] * len(keys))
    before = kvf._bucketer.calls
    grads = [mx.nd.ones((10, 10)) * (i + RANK) for i in range(len(keys))]
    kvf.pushpull(keys, grads)
    assert kvf._bucketer.calls - before == 1, kvf._bucketer.calls - before
    for i, g in enumerate(grads):
        same(g, NW * i + NW * (NW - 1) / 2, 'fused pushpull key %d' % i)
    out = mx.nd.zeros((10, 10))
    kvf.pull('f5', out=out)
    same(out, NW * 5 + NW * (NW - 1) / 2, 'store holds the in-place pushpull sum')
    # an array larger than a bucket is summed in bucket-sized pieces, in place
    big_shape = (kvf._bucketer.bucket_size // 4 + 1000,)
    kvf.init('big', mx.nd.zeros(big_shape))
    big = mx.nd.array(np.arange(big_shape[0], dtype=np.float32) % 97 + RANK)
    before = kvf._bucketer.calls
    kvf.pushpull('big', big)
    assert kvf._bucketer.calls - before == 2, kvf._bucketer.calls - before
    expected = NW * (np.arange(big_shape[0], dtype=np.float32) % 97) + NW * (NW - 1) / 2
    same(big, expected, 'chunked in-place pushpull')
    out = mx.nd.zeros(big_shape)
    kvf.pull('big', out=out)
    same(out, expected, 'chunked pushpull mirrored into the store')
    kvf.push('big', mx.nd.ones(big_shape))
    kvf.pull('big', out=out)
    same(out, NW, 'chunked push (send -> store)')
    kv.barrier()


check_basics()
check_errors_and_types()
check_optimizer_and_states()
check_compression()
check_fusion()
print('OK %s %d' % (KVTYPE, RANK))
