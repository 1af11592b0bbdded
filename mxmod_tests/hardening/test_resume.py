"""Exact resume: ``Module.load(prefix, n, load_optimizer_states=True)`` + ``fit(begin_epoch=n)``
ends bit-identical to an uninterrupted run (the update counters and the scheduler's progress
travel in the checkpoint's manifest), and is not identical without them."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.optimizer import position
from mxmod_tests.hardening.common import cpus, mlp_sym, toy_data

X, Y = toy_data(40)


@pytest.fixture(autouse=True)
def _own_names():
    """Unnamed symbols made here do not use up the process's automatic names."""
    with mx.name.NameManager():
        yield
CASES = [('sgd', {}), ('sgd', {'momentum': 0.9}), ('adam', {}), ('rmsprop', {}),
         ('sgd', {'momentum': 0.9, 'scheduler': True}), ('adam', {'scheduler': True})]


def _iter():
    return mx.io.NDArrayIter(X, Y, batch_size=10)


def _params(extra):
    params = {'learning_rate': 0.05}
    params.update({k: v for k, v in extra.items() if k != 'scheduler'})
    if extra.get('scheduler'):
        params['lr_scheduler'] = mx.lr_scheduler.FactorScheduler(step=3, factor=0.7)
    return params


def _fit(mod, optimizer, extra, begin, end, kvstore, **kwargs):
    mod.fit(_iter(), num_epoch=end, begin_epoch=begin, optimizer=optimizer,
            optimizer_params=_params(extra), initializer=mx.init.Xavier(), kvstore=kvstore,
            **kwargs)
    return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


def _resumed(tmp_path, optimizer, extra, context, kvstore):
    prefix = str(tmp_path / 'run')
    mx.random.seed(3)
    first = mx.mod.Module(mlp_sym(), context=context)
    _fit(first, optimizer, extra, 0, 2, kvstore,
         epoch_end_callback=mx.callback.module_checkpoint(first, prefix,
                                                          save_optimizer_states=True))
    second = mx.mod.Module.load(prefix, 2, load_optimizer_states=True, context=context)
    return _fit(second, optimizer, extra, 2, 4, kvstore)


def _uninterrupted(optimizer, extra, context, kvstore):
    mx.random.seed(3)
    return _fit(mx.mod.Module(mlp_sym(), context=context), optimizer, extra, 0, 4, kvstore)


@pytest.mark.parametrize('optimizer, extra', CASES)
@pytest.mark.parametrize('ndev, kvstore', [(1, 'local'), (2, 'local'), (2, 'device')])
def test_resume_is_bit_identical(tmp_path, optimizer, extra, ndev, kvstore):
    whole = _uninterrupted(optimizer, extra, cpus(ndev), kvstore)
    resumed = _resumed(tmp_path, optimizer, extra, cpus(ndev), kvstore)
    for name, value in whole.items():
        np.testing.assert_array_equal(resumed[name], value, err_msg=name)


@pytest.mark.parametrize('optimizer, extra', [('adam', {}), ('sgd', {'scheduler': True})])
def test_resume_without_the_saved_position_differs(tmp_path, monkeypatch, optimizer, extra):
    """The counters matter (so the test above can fail): dropping them changes the result."""
    whole = _uninterrupted(optimizer, extra, [mx.cpu()], 'local')
    monkeypatch.setattr(position, 'restore_position', lambda *args, **kwargs: None)
    monkeypatch.setattr(mx.module.checkpointing, 'restore_position', lambda *a, **k: None)
    resumed = _resumed(tmp_path, optimizer, extra, [mx.cpu()], 'local')
    assert any(not np.array_equal(resumed[k], v) for k, v in whole.items())


def test_position_restores_counters_and_scheduler():
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5)
    opt = mx.optimizer.create('sgd', learning_rate=1.0, lr_scheduler=sched)
    updater = mx.optimizer.get_updater(opt)
    weight = mx.nd.ones((2,))
    for _ in range(7):
        updater(0, mx.nd.ones((2,)), weight)
    saved = position.get_position(opt)
    again = mx.optimizer.create('sgd', learning_rate=1.0, lr_scheduler=sched)  # same object
    position.restore_position(again, saved)
    assert again.num_update == 7 and again._index_update_count == {0: 7}
    assert (sched.count, sched.base_lr) == (6, 0.125)
    other = mx.optimizer.create('sgd', learning_rate=1.0,
                                lr_scheduler=mx.lr_scheduler.FactorScheduler(step=5, factor=0.5))
    position.restore_position(other, saved)       # another schedule: counters only
    assert other.num_update == 7 and other.lr_scheduler.count == 0


@pytest.mark.parametrize('bad', [{}, [], {'num_update': -1, 'index_update_counts': []},
                                 {'num_update': 2, 'index_update_counts': [[0, [[['int', 0], 5]]]]},
                                 {'num_update': 1, 'index_update_counts': 'x'},
                                 {'num_update': 10 ** 12, 'index_update_counts': [],
                                  'lr': 1.0, 'lr_scheduler': {
                                      'class': 'FactorScheduler',
                                      'state': {'count': 0, 'step': 1}}}])
def test_malformed_position_refused_and_nothing_changes(bad):
    opt = mx.optimizer.create('sgd', learning_rate=1.0,
                              lr_scheduler=mx.lr_scheduler.FactorScheduler(step=1, factor=0.5))
    with pytest.raises(mx.MXNetError, match='optimizer position in m.json is invalid'):
        position.restore_position(opt, bad, 'm.json')
    assert opt.num_update == 0 and opt.lr_scheduler.count == 0


def _dropout_mlp():
    net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=8, name='fc1')
    net = mx.sym.Dropout(mx.sym.Activation(net, act_type='relu'), p=0.3)
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def _reseed(epoch, *args):
    """The README's recipe: the random state of epoch e+1 is a function of e+1 alone."""
    np.random.seed(100 + epoch + 1)
    mx.random.seed(200 + epoch + 1)


def test_resume_with_shuffle_and_dropout_follows_the_readme_recipe(tmp_path):
    """Shuffled data and Dropout resume bit-identical when the user keeps what the README says:
    the iterator (pickled at the checkpoint, before fit's reset) and a per-epoch reseed; without
    the pickled iterator the order differs (NDArrayIter reshuffles its shuffled order)."""
    import pickle  # pylint: disable=import-outside-toplevel
    opt = dict(optimizer='adam', optimizer_params={'learning_rate': 0.01})

    def start():
        _reseed(-1)
        return mx.io.NDArrayIter(X, Y, batch_size=10, shuffle=True), mx.mod.Module(_dropout_mlp())

    data, mod = start()
    mod.fit(data, num_epoch=4, initializer=mx.init.Xavier(), epoch_end_callback=_reseed, **opt)
    whole = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}

    prefix = str(tmp_path / 'run')
    data, first = start()

    def keep_iterator(epoch, *args):
        with open('%s-%04d.iter' % (prefix, epoch + 1), 'wb') as handle:
            pickle.dump(data, handle)
    first.fit(data, num_epoch=2, initializer=mx.init.Xavier(), **opt,
              epoch_end_callback=[mx.callback.module_checkpoint(first, prefix,
                                                                save_optimizer_states=True),
                                  keep_iterator, _reseed])

    def resume(data):
        _reseed(1)
        data.reset()                      # what fit did after the callbacks of epoch 2
        second = mx.mod.Module.load(prefix, 2, load_optimizer_states=True)
        second.fit(data, num_epoch=4, begin_epoch=2, epoch_end_callback=_reseed, **opt)
        return {k: v.asnumpy() for k, v in second.get_params()[0].items()}
    with open(prefix + '-0002.iter', 'rb') as handle:
        resumed = resume(pickle.load(handle))
    for name, value in whole.items():
        np.testing.assert_array_equal(resumed[name], value, err_msg=name)
    fresh = resume(mx.io.NDArrayIter(X, Y, batch_size=10, shuffle=True))
    assert any(not np.array_equal(fresh[k], v) for k, v in whole.items())
