"""The in-process kvstore ('local', 'device'): init/push/pull/pushpull/broadcast against numpy sums,
MXNet's errors, updaters, optimizer on the store and 2-bit compression (values frozen from
MXNet 1.9.1)."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError

SHAPE = (4, 4)


def _devs(n):
    return [mx.cpu(i) for i in range(n)]


@pytest.mark.parametrize('kvtype', ['local', 'device'])
@pytest.mark.parametrize('key', [3, 'a'])
def test_push_sums_devices_and_pull_broadcasts(kvtype, key):
    kv = mx.kv.create(kvtype)
    kv.init(key, mx.nd.zeros(SHAPE))
    rng = np.random.RandomState(0)
    vals = [rng.rand(*SHAPE).astype(np.float32) for _ in range(4)]
    kv.push(key, [mx.nd.array(v, ctx=d) for v, d in zip(vals, _devs(4))])
    outs = [mx.nd.empty(SHAPE, d) for d in _devs(4)]
    kv.pull(key, out=outs)
    expected = ((vals[0] + vals[1]) + vals[2]) + vals[3]
    for out, dev in zip(outs, _devs(4)):
        assert out.context == dev
        np.testing.assert_array_equal(out.asnumpy(), expected)


@pytest.mark.parametrize('keys', [[5, 7, 11], ['b', 'c', 'd']])
def test_list_keys(keys):
    kv = mx.kv.create()
    kv.init(keys, [mx.nd.zeros(SHAPE)] * len(keys))
    kv.push(keys, [[mx.nd.ones(SHAPE, d) * (i + 1) for d in _devs(2)] for i in range(len(keys))])
    outs = [[mx.nd.empty(SHAPE, d) for d in _devs(2)] for _ in keys]
    kv.pull(keys, out=outs)
    for i, row in enumerate(outs):
        for out in row:
            np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 2.0 * (i + 1)))


def test_push_without_updater_replaces_value():
    kv = mx.kv.create()
    kv.init('1', mx.nd.ones(SHAPE) * 7)
    kv.push('1', [mx.nd.ones(SHAPE)] * 4)
    out = mx.nd.zeros(SHAPE)
    kv.pull('1', out)
    np.testing.assert_array_equal(out.asnumpy(), 4)
    kv.init('2', mx.nd.ones(SHAPE) * 2)
    kv.pull('2', out)
    np.testing.assert_array_equal(out.asnumpy(), 2)


def test_pushpull_in_place_and_broadcast():
    kv = mx.kv.create('device')
    kv.init(0, mx.nd.zeros(SHAPE))
    grads = [mx.nd.ones(SHAPE, d) * (i + 1) for i, d in enumerate(_devs(3))]
    kv.pushpull(0, grads)
    for grad in grads:
        np.testing.assert_array_equal(grad.asnumpy(), 6)
    outs = [mx.nd.zeros(SHAPE, d) for d in _devs(2)]
    kv.broadcast(9, mx.nd.ones(SHAPE) * 5, out=outs)
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), 5)


def test_errors_match_mxnet():
    kv = mx.kv.create()
    with pytest.raises(MXNetError, match='has not been inited'):
        kv.pull(3, out=mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match='has not been inited'):
        kv.push(3, mx.nd.zeros(SHAPE))
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match='duplicate init'):
        kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match='duplicate init'):
        kv.broadcast(3, mx.nd.ones(SHAPE), out=mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match='shape mismatch'):
        kv.pull(3, out=mx.nd.zeros((3, 3)))
    with pytest.raises(MXNetError, match='shape mismatch'):
        kv.push(3, mx.nd.zeros((3, 3)))
    with pytest.raises(MXNetError, match='Mixed key types'):
        kv.init('a', mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match='inconsistent types of keys'):
        kv.push([3, 'a'], [mx.nd.ones(SHAPE)] * 2)
    with pytest.raises(MXNetError, match='out must be given'):
        kv.pull(3)
    with pytest.raises(MXNetError, match='row_sparse'):
        kv.row_sparse_pull(3, out=mx.nd.zeros(SHAPE), row_ids=mx.nd.array([1]))
    with pytest.raises(ValueError, match='Unknown capability'):
        kv.is_capable('foo')
    with pytest.raises(TypeError):
        mx.kv.create(3)


def test_types_and_capabilities():
    for name in ['local', 'device', 'local_allreduce_cpu', 'local_allreduce_device', 'LOCAL']:
        kv = mx.kv.create(name)
        assert kv.type == name.lower()
        assert kv.rank == 0 and kv.num_workers == 1
        assert kv.is_capable('optimizer')
    test = mx.kv.create('teststore')
    assert test.type == 'teststore' and not test.is_capable(mx.kv.KVStoreBase.OPTIMIZER)


def test_teststore_pushpull_sums():
    kv = mx.kv.create('teststore')
    vals = [mx.nd.ones(SHAPE, d) * (i + 1) for i, d in enumerate(_devs(3))]
    kv.pushpull('x', vals)
    for val in vals:
        np.testing.assert_array_equal(val.asnumpy(), 6)


@pytest.mark.parametrize('key', [3, 'a'])
def test_updater_gets_key_merged_and_stored(key):
    seen = []

    def updater(k, recv, local):
        seen.append(k)
        local += recv

    kv = mx.kv.create()
    kv.init(key, mx.nd.zeros(SHAPE))
    kv._set_updater(updater)
    for _ in range(3):
        kv.push(key, [mx.nd.ones(SHAPE, d) for d in _devs(4)])
    out = mx.nd.empty(SHAPE)
    kv.pull(key, out=out)
    np.testing.assert_array_equal(out.asnumpy(), 12)
    assert seen == [key] * 3 and type(seen[0]) is type(key)


def test_compression_rejected_on_local_and_validated():
    with pytest.raises(MXNetError, match='not supported'):
        mx.kv.create('local').set_gradient_compression({'type': '2bit'})
    kv = mx.kv.create('device')
    with pytest.raises(MXNetError, match='Unknown type'):
        kv.set_gradient_compression({'type': '3bit'})
    with pytest.raises(MXNetError, match='greater than 0'):
        kv.set_gradient_compression({'type': '2bit', 'threshold': 0})


def test_two_bit_compression_matches_mxnet():
    # sequence produced by MXNet 1.9.1 ('device', threshold 0.5, two devices, two pushes)
    kv = mx.kv.create('device')
    kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
    kv.init('w', mx.nd.zeros((4,)))
    expected = [[0.5, -0.5, -0.5, 0.5], [1.0, 0.0, 0.0, 0.0]]
    for step in range(2):
        kv.push('w', [mx.nd.array([0.5, -0.5, 0.25, -0.25]),
                      mx.nd.array([0.25, 0.25, -0.6, 1.0], ctx=mx.cpu(1))])
        out = mx.nd.zeros((4,))
        kv.pull('w', out=out)
        np.testing.assert_allclose(out.asnumpy(), expected[step], atol=1e-7)
    single = mx.kv.create('device')
    single.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
    single.init(0, mx.nd.zeros((5,)))
    expected = [[0, .5, -.5, .5, 0], [.5, .5, -.5, .5, 0], [0, .5, -.5, .5, 0]]
    for step in range(3):
        single.push(0, mx.nd.array([0.3, 0.6, -0.7, 1.2, 0.1]))
        out = mx.nd.zeros((5,))
        single.pull(0, out=out)
        np.testing.assert_allclose(out.asnumpy(), expected[step], atol=1e-7)


@pytest.mark.parametrize('kvtype', ['local', 'device'])
def test_optimizer_on_store_matches_mxnet(tmp_path, kvtype):
    # MXNet 1.9.1: SGD(lr .1, momentum .9, rescale .5), two pushes of two devices' gradients
    kv = mx.kv.create(kvtype)
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, rescale_grad=0.5))
    kv.init('w', mx.nd.ones((3,)))
    for _ in range(2):
        kv.push('w', [mx.nd.array([1, 2, 3]), mx.nd.array([1, 1, 1], ctx=mx.cpu(1))])
    out = mx.nd.zeros((3,))
    kv.pull('w', out=out)
    np.testing.assert_allclose(out.asnumpy(), [0.71, 0.565, 0.42], rtol=1e-6)
    fname = str(tmp_path / 'kv.states')
    kv.save_optimizer_states(fname)
    other = mx.kv.create(kvtype)
    other.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, rescale_grad=0.5))
    other.load_optimizer_states(fname)
    np.testing.assert_allclose(other._updater.states['w'].asnumpy(), [-0.19, -0.285, -0.38],
                               rtol=1e-6)


def test_optimizer_states_need_an_optimizer(tmp_path):
    with pytest.raises(MXNetError, match='set_optimizer'):
        mx.kv.create().save_optimizer_states(str(tmp_path / 'x'))
