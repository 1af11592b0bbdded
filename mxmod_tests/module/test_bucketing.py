"""BucketingModule: memory and optimizer sharing with the default bucket, grad_req 'add' across
buckets (MXNet's test_bucket_module_grad_req), training equals a plain Module per bucket, and
checkpoints with the .buckets file."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError


def _scale_sym_gen(_key):
    data = mx.sym.Variable('data')
    weight = mx.sym.Variable('a', shape=(1,), init=mx.init.One())
    return mx.sym.make_loss(mx.sym.broadcast_mul(data, weight)), ('data',), None


def _batch(key, size=2):
    return mx.io.DataBatch(data=[mx.nd.ones((size,))], label=None, bucket_key=key,
                           provide_data=[mx.io.DataDesc(name='data', shape=(size,), layout='N')])


@pytest.mark.parametrize('grad_req,factor', [('write', 1), ('add', 2)])
def test_grad_req_across_buckets(grad_req, factor):
    mod = mx.mod.BucketingModule(sym_gen=_scale_sym_gen, default_bucket_key=10)
    mod.bind(data_shapes=[['data', (2,)]], for_training=True, grad_req=grad_req)
    mod.init_params()
    mod.forward_backward(_batch(10))
    assert mod._curr_module._exec_group.execs[0].grad_dict['a'].asscalar() == 2
    mod.forward_backward(_batch(5))
    assert mod._curr_module._grad_req == grad_req
    assert mod._curr_module._exec_group.execs[0].grad_dict['a'].asscalar() == 2 * factor


def _seq_sym_gen(length):
    """A bucket of ``length`` time steps sharing one FC weight (sum over time, then softmax)."""
    data = mx.sym.Variable('data')
    steps = mx.sym.split(data, num_outputs=length, axis=1, squeeze_axis=True)
    weight, bias = mx.sym.Variable('fc_weight'), mx.sym.Variable('fc_bias')
    hidden = [mx.sym.FullyConnected(steps[t] if length > 1 else steps, weight=weight, bias=bias,
                                    num_hidden=3, name='fc%d' % t) for t in range(length)]
    total = hidden[0] if length == 1 else mx.sym.add_n(*hidden)
    return mx.sym.SoftmaxOutput(total, name='softmax'), ('data',), ('softmax_label',)


def _seq_batch(rng, length, size=4):
    x = rng.normal(size=(size, length, 5)).astype(np.float32)
    y = rng.randint(0, 3, size=(size,)).astype(np.float32)
    return mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], bucket_key=length,
                           provide_data=[mx.io.DataDesc('data', x.shape)],
                           provide_label=[mx.io.DataDesc('softmax_label', y.shape)])


def _bucketing(context=mx.cpu()):
    mod = mx.mod.BucketingModule(_seq_sym_gen, default_bucket_key=6, context=context)
    mod.bind(data_shapes=[('data', (4, 6, 5))], label_shapes=[('softmax_label', (4,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={'learning_rate': 0.5, 'momentum': 0.9})
    return mod


def test_buckets_share_parameters_and_optimizer():
    mod = _bucketing()
    rng = np.random.RandomState(0)
    default = mod._curr_module
    mod.forward_backward(_seq_batch(rng, 3))
    mod.update()
    small = mod._buckets[3]
    assert small is mod._curr_module and small is not default
    assert small._arg_params is default._arg_params
    assert small._optimizer is default._optimizer and small._updater is default._updater
    group, shared = small._exec_group, default._exec_group
    for mine, theirs in zip(group.param_arrays, shared.param_arrays):
        assert mine[0]._data is theirs[0]._data or np.shares_memory(mine[0]._data, theirs[0]._data)
    assert group.shared_data_arrays is shared.shared_data_arrays


def test_bucketing_training_equals_plain_modules():
    rng = np.random.RandomState(1)
    batches = [_seq_batch(rng, n) for n in (6, 3, 6, 2, 3)]
    mod = _bucketing()
    init = {k: v.copy() for k, v in mod.get_params()[0].items()}
    for batch in batches:
        mod.forward_backward(batch)
        mod.update()
    # the same steps with one Module per length sharing one updater and the weights by copy
    params = {k: v.copy() for k, v in init.items()}
    updater = mx.optimizer.get_updater(mx.optimizer.create(
        'sgd', learning_rate=0.5, momentum=0.9, rescale_grad=0.25,
        param_idx2name={0: 'fc_weight', 1: 'fc_bias'}))
    for batch in batches:
        sym, _, _ = _seq_sym_gen(batch.bucket_key)
        plain = mx.mod.Module(sym)
        plain.bind(batch.provide_data, batch.provide_label)
        plain.init_params(arg_params=params)
        plain.forward_backward(batch)
        grads = plain._exec_group.grad_arrays
        weights = plain._exec_group.param_arrays
        updater([0, 1], [g[0] for g in grads], [w[0] for w in weights])
        params = {k: v.copy() for k, v in plain.get_params()[0].items()}
        params.update({n: w[0].copy() for n, w in zip(plain._exec_group.param_names, weights)})
    for name, value in mod.get_params()[0].items():
        np.testing.assert_allclose(value.asnumpy(), params[name].asnumpy(), rtol=1e-5, atol=1e-6)


def test_bucketing_checkpoint_round_trip(tmp_path):
    mod = _bucketing()
    rng = np.random.RandomState(2)
    for length in (6, 3, 2):
        mod.forward_backward(_seq_batch(rng, length))
        mod.update()
    prefix = str(tmp_path / 'bkt')
    mod.save_checkpoint(prefix, 1)
    keys = mx.nd.load(prefix + '.buckets')[0]
    assert keys.dtype == np.int32 and sorted(keys.asnumpy().tolist()) == [2, 3, 6]
    loaded = mx.mod.BucketingModule.load(prefix, 1, sym_gen=_seq_sym_gen, default_bucket_key=6)
    loaded.bind(data_shapes=[('data', (4, 6, 5))], label_shapes=[('softmax_label', (4,))])
    for name, value in mod.get_params()[0].items():
        np.testing.assert_array_equal(loaded.get_params()[0][name].asnumpy(), value.asnumpy())
    batch = _seq_batch(rng, 3)
    mod.forward(batch, is_train=False)
    loaded.forward(batch, is_train=False)
    np.testing.assert_allclose(loaded.get_outputs()[0].asnumpy(), mod.get_outputs()[0].asnumpy(),
                               rtol=1e-6)


def test_bucketing_errors():
    with pytest.raises(ValueError, match='default_bucket_key'):
        mx.mod.BucketingModule(_scale_sym_gen)
    mod = mx.mod.BucketingModule(_scale_sym_gen, default_bucket_key=10)
    with pytest.raises(MXNetError, match=r'bind\(\)'):
        mod.forward(_batch(10))
    with pytest.raises(MXNetError, match='Empty BucketingModule'):
        mod.save_checkpoint('x', 0)
    assert mod.data_names == ('data',)


def test_bucket_larger_than_default_warns_and_works(caplog):
    mod = _bucketing()
    rng = np.random.RandomState(3)
    with caplog.at_level('WARNING'):
        mod.forward_backward(_seq_batch(rng, 8))
    assert any('larger than already allocated' in r.getMessage() for r in caplog.records)
    assert mod.get_outputs()[0].shape == (4, 3)


@pytest.mark.parametrize('case', ['1-local-write', '2-device-write', '2-local-add'])
def test_bucketing_training_matches_mxnet(case):
    import json
    import os
    import tempfile
    from mxmod_tests.module.gen_fixtures import _train_buckets
    with open(os.path.join(os.path.dirname(__file__), 'fixtures', 'bucketing.json')) as fin:
        expected = json.load(fin)[case]
    ndev, kvstore, grad_req = case.split('-')
    mod, metric = _train_buckets(mx, int(ndev), kvstore, grad_req)
    assert metric.get()[1] == pytest.approx(expected['metric'], rel=1e-5)
    for name, value in expected['params'].items():
        np.testing.assert_allclose(mod.get_params()[0][name].asnumpy(), value, rtol=1e-4,
                                   atol=1e-5, err_msg=name)
    folder = tempfile.mkdtemp()
    mod.save_checkpoint(os.path.join(folder, 'b'), 3)
    written = sorted(os.listdir(folder))   # MXNet's files plus mxmod's checkpoint manifest
    assert [f for f in written if f != 'b-0003.manifest.json'] == expected['files']
    assert 'b-0003.manifest.json' in written


def test_load_dict_restores_buckets_and_params():
    mod = _bucketing()
    rng = np.random.RandomState(4)
    for length in (6, 3):
        mod.forward_backward(_seq_batch(rng, length))
        mod.update()
    arg, aux = mod.get_params()
    sym_dict = {key: _seq_sym_gen(key)[0] for key in (6, 3)}
    loaded = mx.mod.BucketingModule.load_dict(sym_dict, sym_gen=_seq_sym_gen, default_bucket_key=6,
                                              arg_params=arg, aux_params=aux)
    assert sorted(loaded._buckets) == [3, 6] and loaded.params_initialized
    loaded.bind(data_shapes=[('data', (4, 6, 5))], label_shapes=[('softmax_label', (4,))],
                for_training=False)
    batch = _seq_batch(rng, 3)
    mod.forward(batch, is_train=False)
    loaded.forward(batch, is_train=False)
    np.testing.assert_allclose(loaded.get_outputs()[0].asnumpy(), mod.get_outputs()[0].asnumpy(),
                               rtol=1e-6)
    with pytest.raises(ValueError, match='arg_params'):
        mx.mod.BucketingModule.load_dict(sym_dict, sym_gen=_seq_sym_gen, default_bucket_key=6)


def test_borrow_optimizer_needs_an_initialized_optimizer():
    donor = mx.mod.BucketingModule(_scale_sym_gen, default_bucket_key=10)
    donor.bind(data_shapes=[['data', (2,)]])
    donor.init_params()
    with pytest.raises(MXNetError, match=r'init_optimizer\(\)'):
        mx.mod.Module(_scale_sym_gen(1)[0], label_names=None).borrow_optimizer(donor._curr_module)
