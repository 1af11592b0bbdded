"""Lazy optimizer updates, the local kvstore with row_sparse values and Module training of a
sparse model, against MXNet 1.9.1 (fixtures written by make_fixtures.py), numpy references and
one-device runs."""
import os

import numpy as np
import pytest

import mxmod as mx
from mxmod_tests.sparse import make_fixtures as fx

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures')


@pytest.mark.parametrize('case', fx.optimizer_cases(), ids=[c[0] for c in fx.optimizer_cases()])
def test_optimizers_match_mxnet(case):
    name, (opt_name, kwargs), stype = case
    weight, grads = fx.optimizer_inputs()
    updater = mx.optimizer.get_updater(mx.optimizer.create(opt_name, **kwargs))
    w = mx.nd.array(weight).tostype(stype)
    for rows, values in grads:
        updater(0, mx.nd.sparse.row_sparse_array((values, rows), shape=weight.shape), w)
    want = np.load(os.path.join(FIXTURES, 'optimizers.npz'))[name]
    assert w.stype == stype
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-5, atol=1e-7)


def test_lazy_sgd_leaves_untouched_rows_alone():
    weight = np.random.rand(8, 3).astype(np.float32)
    opt = mx.optimizer.SGD(learning_rate=0.5, momentum=0.9, wd=0.1)
    updater = mx.optimizer.get_updater(opt)
    w = mx.nd.array(weight).tostype('row_sparse')
    g = np.random.rand(2, 3).astype(np.float32)
    updater(0, mx.nd.sparse.row_sparse_array((g, [2, 5]), shape=(8, 3)), w)
    got = w.asnumpy()
    untouched = [0, 1, 3, 4, 6, 7]
    np.testing.assert_array_equal(got[untouched], weight[untouched])
    np.testing.assert_allclose(got[[2, 5]], weight[[2, 5]] - 0.5 * (g + 0.1 * weight[[2, 5]]),
                               rtol=1e-6)


def test_local_kvstore_row_sparse():
    kv = mx.kv.create('local')
    table = np.arange(12, dtype=np.float32).reshape(6, 2)
    kv.init('w', mx.nd.array(table).tostype('row_sparse'))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=1.0))
    g1 = mx.nd.sparse.row_sparse_array((np.ones((2, 2), np.float32), [1, 3]), shape=(6, 2))
    g2 = mx.nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [3]), shape=(6, 2), ctx=mx.cpu(1))
    kv.push('w', [g1, g2])
    out = mx.nd.sparse.zeros('row_sparse', (6, 2))
    kv.row_sparse_pull('w', out=out, row_ids=mx.nd.array([0, 3]))
    np.testing.assert_array_equal(out.indices.asnumpy(), [0, 3])
    np.testing.assert_array_equal(out.data.asnumpy(), [table[0], table[3] - 2])
    skipped = mx.nd.sparse.zeros('row_sparse', (6, 2))
    kv.pull('w', out=skipped)                              # ignore_sparse: left alone
    assert skipped.data.shape[0] == 0


def _linear_batches(ctx_split=False):
    batches, w0 = fx.linear_inputs()
    return [mx.io.DataBatch([mx.nd.array(x).tostype('csr')], [mx.nd.array(y)])
            for x, y in batches], w0


def _train_linear(contexts, kvstore='local'):
    batches, w0 = _linear_batches()
    mod = mx.mod.Module(fx.linear_symbol(mx), data_names=['data'], label_names=['softmax_label'],
                        context=contexts)
    mod.bind(data_shapes=[('data', (16, 50))], label_shapes=[('softmax_label', (16,))])
    mod.init_params(arg_params={'weight': mx.nd.array(w0).tostype('row_sparse'),
                                'bias': mx.nd.zeros((2,))})
    mod.init_optimizer(kvstore=kvstore, optimizer='sgd',
                       optimizer_params={'learning_rate': 0.5, 'momentum': 0.9})
    for batch in batches:
        mod.prepare(batch, sparse_row_id_fn=lambda b: {'weight': mx.nd.arange(50)})
        mod.forward_backward(batch)
        mod.update()
    args, _ = mod.get_params()
    return args


def test_sparse_linear_model_matches_mxnet():
    args = _train_linear([mx.cpu()])
    want = np.load(os.path.join(FIXTURES, 'linear.npz'))
    assert args['weight'].stype == 'row_sparse'
    np.testing.assert_allclose(args['weight'].asnumpy(), want['weight'], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(args['bias'].asnumpy(), want['bias'], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('kvstore', ['local', 'device'])
def test_two_devices_equal_one(kvstore):
    one = _train_linear([mx.cpu()])
    two = _train_linear([mx.cpu(0), mx.cpu(1)], kvstore)
    for name in ('weight', 'bias'):
        np.testing.assert_allclose(two[name].asnumpy(), one[name].asnumpy(), rtol=1e-5,
                                   atol=1e-6)


def test_sparse_optimizer_states_from_mxnet_load_and_continue():
    """MXNet 1.9.1 pickles a lazy SGD's row_sparse momentum as
    mxnet.ndarray.sparse.RowSparseNDArray: the states file it wrote loads (restricted unpickler)
    and the next update continues from it; mxmod's own dump round-trips too."""
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    with open(os.path.join(FIXTURES, 'sgd_momentum_rsp.states'), 'rb') as fin:
        updater.set_states(fin.read())
    mom = updater.states[0]
    assert mom.stype == 'row_sparse'
    want = np.zeros((6, 2), np.float32)
    want[[1, 4]] = -0.1
    np.testing.assert_allclose(mom.asnumpy(), want, rtol=1e-7)
    # MXNet's weight after its one update, then a second update here
    weight = np.arange(12, dtype=np.float32).reshape(6, 2)
    weight[[1, 4]] -= 0.1
    w = mx.nd.array(weight).tostype('row_sparse')
    updater(0, mx.nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [4]), shape=(6, 2)),
            w)
    expect = weight.copy()
    expect[4] += 0.9 * -0.1 - 0.1
    np.testing.assert_allclose(w.asnumpy(), expect, rtol=1e-6)
    again = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    again.set_states(updater.get_states(False))
    np.testing.assert_array_equal(again.states[0].asnumpy(), updater.states[0].asnumpy())
