"""Executors, Modules and KVStores on emulated GPUs: the same numbers as on CPU contexts."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import mxmod as mx
from ..gpu_emulation import nccl_collectives
from ..module.common import mlp_sym, toy_data


def _convnet():
    data = mx.sym.Variable('data')
    # no bias before BatchNorm: its gradient is zero in exact arithmetic, so both devices would
    # only be compared on rounding noise (as real nets do, the BN beta plays the bias)
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), no_bias=True,
                             name='conv')
    net = mx.sym.BatchNorm(net, name='bn')
    net = mx.sym.Activation(net, act_type='relu')
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type='max')
    net = mx.sym.Dropout(net, p=0.0)
    net = mx.sym.FullyConnected(mx.sym.flatten(net), num_hidden=5, name='fc')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def _run_executor(sym, ctx, shapes, values, grad_req='write', group2ctx=None, steps=2):
    exe = sym.simple_bind(ctx, grad_req=grad_req, group2ctx=group2ctx, **shapes)
    for name, arr in exe.arg_dict.items():
        arr[:] = values[name]
    for _ in range(steps):
        exe.forward(is_train=True)
        exe.backward()
    return ([o.asnumpy() for o in exe.outputs], {k: v.asnumpy() for k, v in exe.grad_dict.items()
                                                 if v is not None},
            {k: v.asnumpy() for k, v in exe.aux_dict.items()})


@pytest.mark.parametrize('grad_req', ['write', 'add'])
def test_convnet_executor_matches_cpu(gpus, grad_req):
    sym = _convnet()
    shapes = {'data': (4, 2, 6, 6), 'softmax_label': (4,)}
    arg_shapes, _, _ = sym.infer_shape(**shapes)
    rs = np.random.RandomState(1)
    values = {n: rs.uniform(-1, 1, s).astype(np.float32)
              for n, s in zip(sym.list_arguments(), arg_shapes)}
    values['softmax_label'] = np.array([0, 1, 4, 2], np.float32)
    want = _run_executor(sym, mx.cpu(), shapes, values, grad_req)
    got = _run_executor(sym, mx.gpu(1), shapes, values, grad_req)
    # the CPU runs the compiled float32 kernels, the device numpy-style array code: values up
    # to ~7 agree to a few float32 roundings (measured up to 2.2e-6 apart)
    for w, g in zip(want, got):
        for a, b in zip(w if isinstance(w, list) else w.values(),
                        g if isinstance(g, list) else g.values()):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=5e-6)


def test_model_parallel_group2ctx_across_two_gpus(gpus):
    with mx.AttrScope(ctx_group='first'):
        data = mx.sym.Variable('data')
        net = mx.sym.FullyConnected(data, num_hidden=6, name='fc1')
        net = mx.sym.Activation(net, act_type='tanh')
    with mx.AttrScope(ctx_group='second'):
        net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
        net = mx.sym.SoftmaxOutput(net, name='softmax')
    shapes = {'data': (5, 4), 'softmax_label': (5,)}
    arg_shapes, _, _ = net.infer_shape(**shapes)
    rs = np.random.RandomState(2)
    values = {n: rs.uniform(-1, 1, s).astype(np.float32)
              for n, s in zip(net.list_arguments(), arg_shapes)}
    values['softmax_label'] = np.array([0, 1, 2, 1, 0], np.float32)
    want = _run_executor(net, mx.cpu(), shapes, values, steps=1)
    got = _run_executor(net, mx.gpu(0), shapes, values, steps=1,
                        group2ctx={'first': mx.gpu(0), 'second': mx.gpu(1)})
    np.testing.assert_allclose(got[0][0], want[0][0], rtol=1e-5)
    for name in want[1]:
        np.testing.assert_allclose(got[1][name], want[1][name], rtol=1e-5, atol=1e-7)


def _fit(contexts, kvstore, optimizer='sgd', epochs=2):
    x, y = toy_data(n=48)
    it = mx.io.NDArrayIter(x, y, batch_size=8, label_name='softmax_label')
    mod = mx.mod.Module(mlp_sym(), context=contexts)
    mx.random.seed(11)
    np.random.seed(11)
    mod.fit(it, num_epoch=epochs, kvstore=kvstore, optimizer=optimizer,
            optimizer_params={'learning_rate': 0.1, 'momentum': 0.9} if optimizer == 'sgd'
            else {'learning_rate': 0.01},
            initializer=mx.init.Xavier(), eval_metric='acc')
    args, aux = mod.get_params()
    it.reset()
    preds = mod.predict(it).asnumpy()
    return {k: v.asnumpy() for k, v in args.items()}, preds, mod


@pytest.mark.parametrize('kvstore', ['local', 'device', 'nccl'])
def test_data_parallel_fit_on_two_gpus_matches_two_cpus(gpus, kvstore):
    want_args, want_preds, _ = _fit([mx.cpu(0), mx.cpu(1)], 'local')
    before = nccl_collectives()
    got_args, got_preds, mod = _fit([mx.gpu(0), mx.gpu(1)], kvstore)
    for name in want_args:
        np.testing.assert_allclose(got_args[name], want_args[name], rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    np.testing.assert_allclose(got_preds, want_preds, rtol=1e-5, atol=1e-6)
    if kvstore == 'nccl':
        assert nccl_collectives() > before     # the gradients really went through NCCL
    devices = {e.arg_dict['fc1_weight']._data.device.id for e in mod._exec_group.execs}
    assert devices == {0, 1}


def test_fit_with_adam_on_one_gpu_and_checkpoint_round_trip(gpus, tmp_path):
    want_args, _, _ = _fit([mx.cpu()], 'local', optimizer='adam')
    got_args, preds, mod = _fit([mx.gpu(1)], 'local', optimizer='adam')
    for name in want_args:
        np.testing.assert_allclose(got_args[name], want_args[name], rtol=1e-5, atol=1e-6)
    prefix = str(tmp_path / 'gpu_model')
    mod.save_checkpoint(prefix, 2, save_optimizer_states=True)
    cpu_mod = mx.mod.Module.load(prefix, 2, load_optimizer_states=True, context=mx.cpu())
    x, y = toy_data(n=48)
    it = mx.io.NDArrayIter(x, y, batch_size=8, label_name='softmax_label')
    cpu_mod.bind(it.provide_data, it.provide_label, for_training=True)
    cpu_mod.init_optimizer(optimizer='adam', optimizer_params={'learning_rate': 0.01})
    np.testing.assert_allclose(cpu_mod.predict(it).asnumpy(), preds, rtol=1e-5, atol=1e-6)


def test_bucketing_module_on_gpu(gpus):
    def sym_gen(seq_len):
        data = mx.sym.Variable('data')
        net = mx.sym.FullyConnected(mx.sym.reshape(data, shape=(-1, seq_len)), num_hidden=4,
                                    name='fc_%d' % seq_len, flatten=True)
        net = mx.sym.FullyConnected(net, num_hidden=2, name='out')
        return mx.sym.SoftmaxOutput(net, name='softmax'), ('data',), ('softmax_label',)
    results = {}
    for ctx in (mx.cpu(), mx.gpu(1)):
        mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=5, context=ctx)
        mod.bind([('data', (2, 5))], [('softmax_label', (2,))])
        mx.random.seed(5)
        mod.init_params(mx.init.Uniform(0.3))
        mod.init_optimizer(optimizer_params={'learning_rate': 0.5})
        for key in (5, 3, 5):
            batch = mx.io.DataBatch([mx.nd.ones((2, key)) * 0.1 * key], [mx.nd.array([0, 1])],
                                    bucket_key=key, provide_data=[('data', (2, key))],
                                    provide_label=[('softmax_label', (2,))])
            mod.forward_backward(batch)
            mod.update()
        results[ctx] = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    for name in results[mx.cpu()]:
        np.testing.assert_allclose(results[mx.gpu(1)][name], results[mx.cpu()][name], rtol=1e-5)


def test_nccl_kvstore_api(gpus):
    devs = [mx.gpu(0), mx.gpu(1)]
    kv = mx.kv.create('nccl')
    assert kv.type == 'nccl' and kv.num_workers == 1 and kv.rank == 0
    rs = np.random.RandomState(0)
    vals = [rs.rand(3, 4).astype(np.float32) for _ in devs]
    kv.init(['a', 'b', 'c'], [mx.nd.zeros((3, 4))] * 3)
    grads = [[mx.nd.array(v, ctx=d) for v, d in zip(vals, devs)] for _ in range(3)]
    kv.pushpull(['a', 'b', 'c'], grads)
    for row in grads:
        for g, d in zip(row, devs):
            assert g._data.device.id == d.device_id
            np.testing.assert_allclose(g.asnumpy(), np.sum(vals, axis=0), rtol=1e-6)
    outs = [mx.nd.zeros((3, 4), d) for d in devs]
    kv.pull('b', out=outs)
    np.testing.assert_allclose(outs[1].asnumpy(), np.sum(vals, axis=0), rtol=1e-6)
    kv.set_optimizer(mx.optimizer.create('test', rescale_grad=2.0))
    out = [mx.nd.zeros((3, 4), d) for d in devs]
    kv.pushpull('a', [mx.nd.array(v, ctx=d) for v, d in zip(vals, devs)], out=out)
    np.testing.assert_allclose(out[1].asnumpy(), 3 * np.sum(vals, axis=0), rtol=1e-5)
    with pytest.raises(mx.MXNetError, match='must be on a GPU'):
        kv.push('b', [mx.nd.ones((3, 4)), mx.nd.ones((3, 4), devs[1])])
    with pytest.raises(mx.MXNetError, match='several values on one GPU'):
        kv.push('b', [mx.nd.ones((3, 4), devs[0]), mx.nd.ones((3, 4), devs[0])])
    with pytest.raises(mx.MXNetError, match='shape mismatch'):
        kv.push('b', [mx.nd.ones((2, 4), d) for d in devs])
    kv.init('h', mx.nd.zeros((2,), dtype='int16'))
    with pytest.raises(mx.MXNetError, match='not supported'):
        kv.push('h', [mx.nd.ones((2,), d, dtype='int16') for d in devs])
    with pytest.raises(mx.MXNetError, match='init'):
        kv.pull('missing', out=outs)


def _lstm_example(*args):
    """examples/lstm_bucketing.py under run_emulated.py: [perplexity per epoch..., reloaded]."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    proc = subprocess.run([sys.executable, os.path.join(root, 'mxmod_tests', 'gpu', 'run_emulated.py'),
                           os.path.join(root, 'examples', 'lstm_bucketing.py'), '--epochs', '3',
                           '--sentences', '1000'] + list(args), capture_output=True, text=True,
                          timeout=300, env=env, cwd=root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.search(r'validation perplexity per epoch: ([\d., ]+); reloaded checkpoint: ([\d.]+)',
                      proc.stderr)
    assert found, proc.stderr[-3000:]
    return [float(v) for v in found.group(1).split(',')] + [float(found.group(2))]


@pytest.mark.parametrize('fused', [False, True], ids=['cells', 'fused'])
def test_lstm_bucketing_example_on_two_gpus_matches_cpu(tmp_path, fused):
    extra = ['--fused'] if fused else []
    on_cpu = _lstm_example('--prefix', str(tmp_path / 'cpu'), *extra)
    on_gpus = _lstm_example('--prefix', str(tmp_path / 'gpu'), '--gpus', '0,1', *extra)
    np.testing.assert_allclose(on_gpus, on_cpu, rtol=1e-4)
