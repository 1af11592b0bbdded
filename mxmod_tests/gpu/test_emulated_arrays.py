"""NDArray, random streams, initializers, optimizers, metrics and .params files on emulated GPUs
give what the same calls give on the CPU."""
import numpy as np
import pytest

import mxmod as mx
from ..gpu_emulation import DeviceArray

RS = np.random.RandomState(0)


def _on(ctx, value):
    return mx.nd.array(value, ctx=ctx, dtype=value.dtype)


def _expressions(a):
    """A spread of NDArray operations on ``a`` (run once per device)."""
    return {'arith': (a * 2 + 1) / 3 - a, 'neg': -abs(a), 'cmp': a > 0, 'T': a.T,
            'sum': mx.nd.sum(a, axis=1), 'dot': mx.nd.dot(a, a.T), 'softmax': mx.nd.softmax(a),
            'slice': a[1:3], 'rows': a[mx.nd.array([2, 0])], 'astype': a.astype('float64'),
            'reshape': a.reshape((4, 3)), 'bcast': a[0:1].broadcast_to((3, 4)),
            'expand': a.expand_dims(0), 'concat': mx.nd.concat(a, a, dim=0),
            'maximum': mx.nd.maximum(a, 0.25)}


def test_ndarray_basics_live_on_their_device(gpus):
    x = RS.uniform(-1, 1, (3, 4)).astype(np.float32)
    expected = _expressions(_on(mx.cpu(), x))
    for dev in (0, 1):
        g = _on(mx.gpu(dev), x)
        assert isinstance(g._data, DeviceArray) and g._data.device.id == dev
        for key, val in _expressions(g).items():
            assert val.context == mx.gpu(dev), key
            assert val._data.device.id == dev, key
            np.testing.assert_allclose(val.asnumpy(), expected[key].asnumpy(), rtol=1e-6,
                                       err_msg=key)
            assert val.dtype == expected[key].dtype, key


def test_assignment_and_copies_between_devices(gpus):
    x = RS.uniform(size=(2, 3)).astype(np.float32)
    g1 = mx.nd.zeros((2, 3), ctx=mx.gpu(1))
    g1[:] = x                                  # numpy into gpu(1)
    g1[0] = mx.nd.array(x[1], ctx=mx.gpu(0))   # gpu(0) row into gpu(1)
    g1[1, 2] = 7.0
    want = x.copy()
    want[0] = x[1]
    want[1, 2] = 7.0
    np.testing.assert_array_equal(g1.asnumpy(), want)
    assert g1._data.device.id == 1
    g1 += mx.nd.ones((2, 3), ctx=mx.gpu(1))
    g0 = g1.copyto(mx.gpu(0))
    assert g0.context == mx.gpu(0) and g0._data.device.id == 0
    back = g0.as_in_context(mx.cpu())
    assert isinstance(back._data, np.ndarray)
    np.testing.assert_array_equal(back.asnumpy(), want + 1)
    dst = mx.nd.zeros((2, 3), ctx=mx.gpu(1))
    mx.nd.elemwise_add(g0.copyto(mx.gpu(1)), g1, out=dst)
    np.testing.assert_array_equal(dst.asnumpy(), 2 * (want + 1))
    copied = g1.copy()
    assert copied._data.device.id == 1
    mx.nd.waitall()
    g1.wait_to_read()


def test_random_streams_and_initializers(gpus):
    mx.random.seed(42)
    a = mx.nd.random.uniform(-1, 1, shape=(4, 5), ctx=mx.gpu(1))
    mx.random.seed(42)
    b = mx.nd.random.uniform(-1, 1, shape=(4, 5), ctx=mx.gpu(1))
    assert a._data.device.id == 1 and a.dtype == np.float32
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert -1 <= a.asnumpy().min() and a.asnumpy().max() <= 1
    n = mx.nd.random.normal(0, 1, shape=(2000,), ctx=mx.gpu(0)).asnumpy()
    assert abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1
    inits = [mx.init.Uniform(0.5), mx.init.Normal(0.2), mx.init.Xavier(), mx.init.MSRAPrelu(),
             mx.init.Orthogonal(), mx.init.One(), mx.init.Constant(0.3), mx.init.Bilinear(),
             mx.init.LSTMBias(1.0)]
    for init in inits:
        name = 'upsampling_weight' if isinstance(init, mx.init.Bilinear) else 'fc_weight'
        shape = (2, 1, 4, 4) if isinstance(init, mx.init.Bilinear) else (8, 6)
        if isinstance(init, mx.init.LSTMBias):
            name, shape = 'lstm_i2h_bias', (8,)
        arrs = {}
        for ctx in (mx.cpu(), mx.gpu(1)):
            mx.random.seed(3)
            arrs[ctx] = mx.nd.zeros(shape, ctx=ctx)
            init(mx.init.InitDesc(name), arrs[ctx])
        got = arrs[mx.gpu(1)]
        assert got._data.device.id == 1, init
        if isinstance(init, (mx.init.One, mx.init.Constant, mx.init.Bilinear, mx.init.LSTMBias)):
            np.testing.assert_allclose(got.asnumpy(), arrs[mx.cpu()].asnumpy(), err_msg=repr(init))
        else:
            assert np.abs(got.asnumpy()).max() > 0 and np.isfinite(got.asnumpy()).all(), init


OPTIMIZERS = [('sgd', {'momentum': 0.9, 'wd': 1e-3}), ('sgd', {'multi_precision': True}),
              ('nag', {'momentum': 0.9}), ('adam', {}), ('adagrad', {}), ('rmsprop', {}),
              ('rmsprop', {'centered': True}), ('adadelta', {}), ('ftrl', {}), ('adamax', {}),
              ('nadam', {}), ('ftml', {}), ('signum', {'momentum': 0.9}), ('lamb', {}),
              ('lars', {'momentum': 0.9}), ('lbsgd', {'momentum': 0.9}), ('dcasgd', {}),
              ('groupadagrad', {})]


@pytest.mark.parametrize('name,kwargs', OPTIMIZERS, ids=[o[0] + str(i) for i, o in enumerate(OPTIMIZERS)])
def test_optimizer_steps_match_cpu(gpus, name, kwargs):
    dtype = np.float16 if kwargs.get('multi_precision') else np.float32
    w0 = RS.uniform(-1, 1, (4, 3)).astype(dtype)
    grads = [RS.uniform(-1, 1, (4, 3)).astype(dtype) for _ in range(3)]
    final, states = {}, {}
    for ctx in (mx.cpu(), mx.gpu(1)):
        opt = mx.optimizer.create(name, learning_rate=0.1, **kwargs)
        upd = mx.optimizer.get_updater(opt)
        w = _on(ctx, w0)
        for g in grads:
            upd(0, _on(ctx, g), w)
        assert w.context == ctx and (ctx.device_type == 'cpu' or w._data.device.id == 1)
        final[ctx] = w.asnumpy()
        states[ctx] = upd.get_states(dump_optimizer=False)
    tol = 2e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(final[mx.gpu(1)], final[mx.cpu()], rtol=tol, atol=tol)
    fresh = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, **kwargs))
    fresh.set_states(states[mx.gpu(1)])       # states written from a GPU load anywhere


def test_metrics_take_gpu_outputs(gpus):
    labels = np.array([0, 2, 1, 2], dtype=np.float32)
    probs = RS.dirichlet(np.ones(3), size=4).astype(np.float32)
    for metric in ('acc', 'ce', 'top_k_accuracy', 'mse', 'mae', 'rmse', 'f1', 'nll_loss',
                   'perplexity'):
        kwargs = {'top_k': 2} if metric == 'top_k_accuracy' else {}
        if metric == 'f1':
            lab, pred = np.array([0, 1, 1, 0], np.float32), RS.dirichlet(np.ones(2), 4).astype(np.float32)
        elif metric in ('mse', 'mae', 'rmse'):
            lab, pred = probs[:, 0], probs[:, 1]
        else:
            lab, pred = labels, probs
        values = []
        for ctx in (mx.cpu(), mx.gpu(1)):
            m = mx.metric.create(metric, **kwargs) if metric != 'perplexity' else mx.metric.Perplexity(None)
            m.update([_on(ctx, lab)], [_on(ctx, pred)])
            values.append(m.get()[1])
        np.testing.assert_allclose(values[1], values[0], rtol=1e-6, err_msg=metric)


def test_params_file_from_gpu_matches_cpu_bytes_but_the_device(gpus, tmp_path):
    import struct
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    mx.nd.save(str(tmp_path / 'g.params'), {'g': mx.nd.array(values, ctx=mx.gpu(1))})
    mx.nd.save(str(tmp_path / 'c.params'), {'g': mx.nd.array(values)})
    expected = bytearray((tmp_path / 'c.params').read_bytes())
    struct.pack_into('<ii', expected, 24 + 12 + 16, 2, 1)   # context record: gpu, id 1
    assert (tmp_path / 'g.params').read_bytes() == bytes(expected)
    loaded = mx.nd.load(str(tmp_path / 'g.params'))['g']
    np.testing.assert_array_equal(loaded.asnumpy(), values)
