"""Module checkpoints with optimizer states (1 and 2 devices), loading MXNet's golden checkpoint,
and the kvstore decision/update helpers (MXNet's model._create_kvstore rules)."""
import os

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.module.kvstore_helpers import _create_kvstore, _update_params
from mxmod_tests.conftest import GOLDEN
from mxmod_tests.module.common import mlp_sym, toy_data, cpus


def _trained(context, steps=2):
    x, y = toy_data(10)
    mod = mx.mod.Module(mlp_sym(), context=context)
    mod.bind(data_shapes=[('data', (10, 6))], label_shapes=[('softmax_label', (10,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    for _ in range(steps):
        mod.forward_backward(batch)
        mod.update()
    return mod


def _states(mod):
    updater = mod._kvstore._updater if mod._update_on_kvstore else mod._updater
    return {k: v.asnumpy() for k, v in updater.states.items()}


@pytest.mark.parametrize('ndev', [1, 2])
def test_save_load_checkpoint_with_optimizer_states(tmp_path, ndev):
    mod = _trained(cpus(ndev))
    prefix = str(tmp_path / 'ckpt')
    mod.save_checkpoint(prefix, 3, save_optimizer_states=True)
    for suffix in ('-symbol.json', '-0003.params', '-0003.states'):
        assert os.path.exists(prefix + suffix)
    loaded = mx.mod.Module.load(prefix, 3, load_optimizer_states=True, context=cpus(ndev))
    assert loaded.params_initialized and loaded._preload_opt_states == prefix + '-0003.states'
    loaded.bind(data_shapes=[('data', (10, 6))], label_shapes=[('softmax_label', (10,))])
    loaded.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    assert loaded._symbol.tojson() == mod._symbol.tojson()
    for name, value in mod.get_params()[0].items():
        np.testing.assert_array_equal(loaded.get_params()[0][name].asnumpy(), value.asnumpy())
    expected, got = _states(mod), _states(loaded)
    assert sorted(expected) == sorted(got)
    for key, value in expected.items():
        np.testing.assert_array_equal(got[key], value)
    assert loaded._preload_opt_states is None


def test_load_mxnet_checkpoint_and_predict():
    golden = np.load(os.path.join(GOLDEN, 'fit_mlp.npz'))
    mod = mx.mod.Module.load(os.path.join(GOLDEN, 'fit_mlp_mod'), 2, load_optimizer_states=True)
    mod.bind(data_shapes=[('data', (10, 6))], label_shapes=[('softmax_label', (10,))])
    mod.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9, 'wd': 1e-3})
    it = mx.io.NDArrayIter(golden['input:data'], golden['input:softmax_label'], batch_size=10)
    np.testing.assert_allclose(mod.predict(it).asnumpy(), golden['predict:softmax'], rtol=1e-5,
                               atol=1e-6)
    states = np.load(os.path.join(GOLDEN, 'fit_mlp_mod-0002.states.npz'))
    for key in states.files:
        index = int(key.split(':')[1])
        np.testing.assert_array_equal(mod._updater.states[index].asnumpy(), states[key])


def test_save_load_params_prefixes(tmp_path):
    mod = _trained(mx.cpu(), steps=1)
    fname = str(tmp_path / 'p.params')
    mod.save_params(fname)
    saved = mx.nd.load(fname)
    assert sorted(saved) == sorted('arg:' + k for k in mod.get_params()[0])
    other = mx.mod.Module(mlp_sym())
    other.bind(data_shapes=[('data', (10, 6))], label_shapes=[('softmax_label', (10,))])
    other.load_params(fname)
    for name, value in mod.get_params()[0].items():
        np.testing.assert_array_equal(other.get_params()[0][name].asnumpy(), value.asnumpy())
    mx.nd.save(fname, {'bad:x': mx.nd.ones((1,))})
    with pytest.raises(ValueError, match='Invalid param file'):
        other.load_params(fname)


def test_optimizer_states_need_init_optimizer(tmp_path):
    mod = mx.mod.Module(mlp_sym())
    with pytest.raises(MXNetError, match=r'init_optimizer\(\)'):
        mod.save_optimizer_states(str(tmp_path / 'x.states'))


def test_create_kvstore_decisions(monkeypatch):
    small = {'w': mx.nd.zeros((3, 3))}
    assert _create_kvstore('local', 1, small) == (None, False)
    assert _create_kvstore(None, 4, small) == (None, False)
    kv, on_kv = _create_kvstore('device', 2, small)
    assert kv.type == 'device' and on_kv
    explicit = mx.kv.create('local')
    assert _create_kvstore(explicit, 1, small) == (explicit, True)
    test_store = mx.kv.create('teststore')
    assert _create_kvstore(test_store, 2, small) == (test_store, False)

    class Big(object):
        shape = (16 * 1024 * 1024 + 1,)
    kv, on_kv = _create_kvstore('local', 2, {'big': Big()})
    assert kv.type == 'local' and not on_kv
    assert _create_kvstore('device', 2, {'big': Big()})[1]
    monkeypatch.setenv('MXNET_UPDATE_ON_KVSTORE', '0')
    assert not _create_kvstore('local', 2, small)[1]
    with pytest.raises(TypeError):
        _create_kvstore(3, 2, small)


def test_update_params_indices_per_device():
    calls = []
    weights = [[mx.nd.ones((2,)), mx.nd.ones((2,), ctx=mx.cpu(1))],
               [mx.nd.ones((3,)), mx.nd.ones((3,), ctx=mx.cpu(1))]]
    grads = [[mx.nd.ones((2,)), mx.nd.ones((2,), ctx=mx.cpu(1)) * 3], [None, None]]
    kv = mx.kv.create('local')
    kv.init('a', mx.nd.zeros((2,)))
    def updater(indices, grad_list, _weights):
        calls.append((list(indices), [x.asnumpy() for x in grad_list]))
    _update_params(weights, grads, updater, num_device=2, kvstore=kv, param_names=['a', 'b'])
    assert [c[0] for c in calls] == [[0], [1]]
    for _, (grad,) in calls:
        np.testing.assert_array_equal(grad, [4, 4])  # summed across devices in place
