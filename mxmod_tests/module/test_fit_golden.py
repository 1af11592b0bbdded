"""Module.fit against MXNet 1.9.1's golden run (fit_mlp.npz): parameters after each of the 8 SGD
steps, the final metric and the predictions; and data-parallel runs on 2 and 4 CPU contexts
(kvstore 'local' and 'device') reproduce the single-device run."""
import json
import os

import numpy as np
import pytest

import mxmod as mx
from mxmod_tests.conftest import GOLDEN
from mxmod_tests.module.common import mlp_sym, cpus


@pytest.fixture(scope='module')
def golden():
    return np.load(os.path.join(GOLDEN, 'fit_mlp.npz'))


def _fit(golden, context, kvstore='local'):
    it = mx.io.NDArrayIter(golden['input:data'], golden['input:softmax_label'], batch_size=10,
                           shuffle=False, label_name='softmax_label')
    mod = mx.mod.Module(mlp_sym(), context=context)
    steps = []

    def record(_):
        arg, _aux = mod.get_params()
        steps.append({k: v.asnumpy() for k, v in arg.items()})
    metric = mx.metric.create(['acc', 'ce'])
    init = {k[5:]: mx.nd.array(golden[k]) for k in golden.files if k.startswith('init:')}
    mod.fit(it, num_epoch=2, eval_metric=metric, kvstore=kvstore, arg_params=init,
            optimizer='sgd', optimizer_params={'learning_rate': 0.1, 'momentum': 0.9, 'wd': 1e-3},
            batch_end_callback=record)
    it.reset()
    return mod, steps, metric, mod.predict(it).asnumpy()


def _check_steps(golden, steps, atol):
    assert len(steps) == 8
    for i, step in enumerate(steps):
        for name, value in step.items():
            np.testing.assert_allclose(value, golden['step%02d:%s' % (i + 1, name)], rtol=1e-5,
                                       atol=atol, err_msg='step %d %s' % (i + 1, name))


def test_fit_matches_mxnet_steps_and_predictions(golden):
    mod, steps, metric, pred = _fit(golden, mx.cpu())
    _check_steps(golden, steps, atol=1e-6)
    np.testing.assert_allclose(pred, golden['predict:softmax'], rtol=1e-5, atol=1e-6)
    with open(os.path.join(GOLDEN, 'fit_mlp.meta.json')) as fin:
        meta = json.load(fin)
    names, values = metric.get()
    expected = meta['per_epoch_train_metric'][-1]
    for name, value in zip(names, values):
        assert value == pytest.approx(expected[name], rel=1e-5)
    opt = mod._optimizer
    assert opt.rescale_grad == pytest.approx(meta['rescale_grad'])
    assert {str(k): v for k, v in opt.idx2name.items()} == meta['idx2name']
    assert mod._kvstore is None and not mod._update_on_kvstore


@pytest.mark.parametrize('ndev', [2, 4])
@pytest.mark.parametrize('kvstore', ['local', 'device'])
def test_data_parallel_matches_single_device(golden, ndev, kvstore):
    mod, steps, _, pred = _fit(golden, cpus(ndev), kvstore)
    assert mod._kvstore.type == kvstore and mod._update_on_kvstore
    _check_steps(golden, steps, atol=1e-6)
    np.testing.assert_allclose(pred, golden['predict:softmax'], rtol=1e-5, atol=1e-6)


def test_data_parallel_local_updates(golden, monkeypatch):
    monkeypatch.setenv('MXNET_UPDATE_ON_KVSTORE', '0')
    mod, steps, _, _ = _fit(golden, cpus(2), 'local')
    assert not mod._update_on_kvstore
    assert sorted(mod._optimizer.idx2name) == list(range(8))
    _check_steps(golden, steps, atol=1e-6)


def test_fit_with_two_bit_compression_matches_mxnet(golden):
    # frozen from MXNet 1.9.1 by gen_fixtures.py: 2 devices, kvstore 'device', 2bit threshold .05
    fixture = os.path.join(os.path.dirname(__file__), 'fixtures', 'fit_2bit.json')
    with open(fixture) as fin:
        expected = json.load(fin)
    it = mx.io.NDArrayIter(golden['input:data'], golden['input:softmax_label'], batch_size=10,
                           shuffle=False)
    mod = mx.mod.Module(mlp_sym(), context=cpus(2),
                        compression_params={'type': '2bit', 'threshold': 0.05})
    init = {k[5:]: mx.nd.array(golden[k]) for k in golden.files if k.startswith('init:')}
    mod.fit(it, num_epoch=2, kvstore='device', arg_params=init, optimizer='sgd',
            optimizer_params={'learning_rate': 0.1, 'momentum': 0.9, 'wd': 1e-3})
    for name, value in mod.get_params()[0].items():
        np.testing.assert_allclose(value.asnumpy(), expected[name], rtol=1e-5, atol=1e-6)
    plain = _fit(golden, cpus(2), 'device')[1][-1]
    assert not np.allclose(plain['fc1_weight'], expected['fc1_weight'])


@pytest.mark.parametrize('case', ['1-local', '2-local', '3-device'])
def test_batchnorm_fit_on_devices_matches_mxnet(case):
    # aux states (moving mean/var) are averaged over devices at every epoch end, as in MXNet
    with open(os.path.join(os.path.dirname(__file__), 'fixtures', 'fit_batchnorm.json')) as fin:
        expected = json.load(fin)[case]
    got = _batchnorm_results()[case]
    assert got['score'] == pytest.approx(expected['score'], rel=1e-5)
    for mine, theirs in zip(got['epochs'], expected['epochs']):
        assert sorted(mine) == sorted(theirs)
        for name in theirs:
            np.testing.assert_allclose(mine[name], theirs[name], rtol=1e-4, atol=1e-5,
                                       err_msg=name)


_BN_CACHE = {}


def _batchnorm_results():
    from mxmod_tests.module.gen_fixtures import fit_batchnorm
    if not _BN_CACHE:
        _BN_CACHE.update(fit_batchnorm(mx))
    return _BN_CACHE


def test_data_parallel_inline_execution_matches(golden, monkeypatch):
    # MXMOD_EXEC_THREADS=0 runs the per-device executors inline instead of one thread each
    monkeypatch.setenv('MXMOD_EXEC_THREADS', '0')
    _, steps, _, pred = _fit(golden, cpus(2), 'local')
    _check_steps(golden, steps, atol=1e-6)
    np.testing.assert_allclose(pred, golden['predict:softmax'], rtol=1e-5, atol=1e-6)
