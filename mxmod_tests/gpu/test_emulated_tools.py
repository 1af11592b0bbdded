"""Monitor, executor reshape, mirroring, 2-bit compression, row_sparse_pull, check_consistency,
SequentialModule and pickling on emulated GPUs, each against the same run on CPU contexts."""
import pickle

import numpy as np

import mxmod as mx


def _fc_net():
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=4, name='fc')
    net = mx.sym.Activation(net, act_type='relu', name='relu')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def _bound(sym, ctx, seed=0, **shapes):
    exe = sym.simple_bind(ctx, **shapes)
    rs = np.random.RandomState(seed)
    for name, arr in exe.arg_dict.items():
        arr[:] = rs.uniform(-1, 1, arr.shape) if name != 'softmax_label' else rs.randint(0, 2, arr.shape)
    return exe


def test_monitor_and_reshape_match_cpu(gpus):
    stats, reshaped = {}, {}
    for ctx in (mx.cpu(), mx.gpu(1)):
        exe = _bound(_fc_net(), ctx, data=(3, 5))
        mon = mx.mon.Monitor(1, pattern='.*')
        mon.install(exe)
        mon.tic()
        exe.forward(is_train=True)
        exe.backward()
        stats[ctx] = mon.toc()
        bigger = exe.reshape(allow_up_sizing=True, data=(6, 5), softmax_label=(6,))
        bigger.arg_dict['data'][:] = np.arange(30, dtype=np.float32).reshape(6, 5) / 30
        reshaped[ctx] = bigger.forward()[0]
    assert [s[1] for s in stats[mx.gpu(1)]] == [s[1] for s in stats[mx.cpu()]]
    for (_, name, got), (_, _, want) in zip(stats[mx.gpu(1)], stats[mx.cpu()]):
        np.testing.assert_allclose(float(got), float(want), rtol=1e-5, err_msg=name)
    assert reshaped[mx.gpu(1)]._data.device.id == 1
    np.testing.assert_allclose(reshaped[mx.gpu(1)].asnumpy(), reshaped[mx.cpu()].asnumpy(), rtol=1e-6)


def test_mirroring_on_gpu_gives_the_cpu_gradients(gpus, monkeypatch):
    net = mx.sym.Variable('data')
    for i in range(3):
        net = mx.sym.FullyConnected(net, num_hidden=8, name='f%d' % i)
        net = mx.sym.Activation(mx.sym.BatchNorm(net, name='bn%d' % i), act_type='relu')
    net = mx.sym.SoftmaxOutput(net, name='softmax')
    grads = {}
    for ctx, mirror in ((mx.cpu(), '0'), (mx.gpu(1), '1')):
        monkeypatch.setenv('MXNET_BACKWARD_DO_MIRROR', mirror)
        exe = _bound(net, ctx, data=(4, 6))
        exe.forward(is_train=True)
        exe.backward()
        grads[ctx] = {k: v.asnumpy() for k, v in exe.grad_dict.items() if v is not None}
        if mirror == '1':
            assert any(s.mirror for s in exe._plan.steps)
    # two float32 BatchNorm implementations (the CPU's compiled kernels, the device's array code),
    # each within 1.5e-6 of float64 here, round differently: compare to a few float32 roundings
    for name, want in grads[mx.cpu()].items():
        np.testing.assert_allclose(grads[mx.gpu(1)][name], want, rtol=1e-5, atol=5e-6, err_msg=name)


def test_two_bit_compression_and_row_sparse_pull_on_gpus(gpus):
    pulled = {}
    for devs in ([mx.cpu(0), mx.cpu(1)], [mx.gpu(0), mx.gpu(1)]):
        kv = mx.kv.create('device')
        kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
        kv.init(0, mx.nd.zeros((4,)))
        outs = []
        for step in range(3):      # the residuals carry over between pushes, per device
            kv.push(0, [mx.nd.array([1, -1, 0.2, 0.3 * (i + step)], ctx=d) for i, d in enumerate(devs)])
            out = [mx.nd.zeros((4,), ctx=d) for d in devs]
            kv.pull(0, out=out)
            outs.append(out[1].asnumpy())
        kv.init(1, mx.nd.array(np.arange(10, dtype=np.float32).reshape(5, 2)))
        rsp = mx.nd.zeros((5, 2), ctx=devs[1], stype='row_sparse')
        kv.row_sparse_pull(1, out=rsp, row_ids=mx.nd.array([1, 3], ctx=devs[1]))
        pulled[devs[0].device_type] = (outs, rsp.asnumpy())
    np.testing.assert_array_equal(pulled['gpu'][0], pulled['cpu'][0])
    np.testing.assert_array_equal(pulled['gpu'][0][0], [1, -1, 0, 0])
    np.testing.assert_array_equal(pulled['gpu'][1][[1, 3]], [[2, 3], [6, 7]])


def test_check_consistency_between_cpu_and_gpu(gpus):
    sym = mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), num_filter=2, name='c')
    sym = mx.sym.Pooling(mx.sym.Activation(sym, act_type='tanh'), kernel=(2, 2), pool_type='avg')
    mx.test_utils.check_consistency(sym, [{'ctx': mx.cpu(0), 'data': (2, 1, 6, 6)},
                                          {'ctx': mx.gpu(0), 'data': (2, 1, 6, 6)}])


def test_sequential_module_on_two_gpus_matches_cpus(gpus):
    rs = np.random.RandomState(3)
    x, y = rs.rand(16, 3).astype(np.float32), rs.randint(0, 2, 16).astype(np.float32)
    params = {}
    for devs in ([mx.cpu(0), mx.cpu(1)], [mx.gpu(0), mx.gpu(1)]):
        first = mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=4, name='a'),
                              label_names=None, context=devs)
        second = mx.mod.Module(mx.sym.SoftmaxOutput(mx.sym.FullyConnected(
            mx.sym.Variable('data'), num_hidden=2, name='b'), name='softmax'), context=devs)
        seq = mx.mod.SequentialModule().add(first).add(second, take_labels=True, auto_wiring=True)
        it = mx.io.NDArrayIter(x, y, batch_size=8, label_name='softmax_label')
        mx.random.seed(1)
        seq.fit(it, num_epoch=2, optimizer_params={'learning_rate': 0.5},
                initializer=mx.init.Uniform(0.5))
        params[devs[0].device_type] = {k: v.asnumpy() for k, v in seq.get_params()[0].items()}
    for name, want in params['cpu'].items():
        np.testing.assert_allclose(params['gpu'][name], want, rtol=1e-5, err_msg=name)


def test_gpu_ndarray_pickles_with_its_context(gpus):
    arr = mx.nd.array([[0.2, 0.8], [0.5, 0.5]], ctx=mx.gpu(1))
    back = pickle.loads(pickle.dumps(arr))
    assert back.context == mx.gpu(1) and back._data.device.id == 1
    np.testing.assert_array_equal(back.asnumpy(), arr.asnumpy())
    assert repr(arr).endswith('<NDArray 2x2 @gpu(1)>')
