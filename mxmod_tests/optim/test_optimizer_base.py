"""Optimizer bookkeeping (learning rates, multipliers, counters, registry) and the Updater."""
import pickle
import warnings

import numpy as np
import pytest

import mxmod as mx
from mxmod.optimizer import Optimizer


class FakeSymbol(object):
    """What Optimizer reads from ``sym=``: attr_dict() and list_arguments()."""

    def __init__(self, attrs, args):
        self.attrs, self.args = attrs, args

    def attr_dict(self):
        return self.attrs

    def list_arguments(self):
        return self.args


def test_learning_rate_and_scheduler_override():
    opt = Optimizer(learning_rate=0.01)
    opt.set_learning_rate(0.2)
    assert opt.learning_rate == 0.2
    assert Optimizer().learning_rate == 0.01
    sched = mx.lr_scheduler.FactorScheduler(step=1)
    with pytest.warns(UserWarning, match='overwritten'):
        opt = Optimizer(lr_scheduler=sched, learning_rate=0.3)
    assert opt.learning_rate == 0.3 and sched.base_lr == 0.3
    sched.base_lr = 0.4
    assert opt.learning_rate == 0.4
    assert Optimizer(lr_scheduler=mx.lr_scheduler.FactorScheduler(1, base_lr=1024)).learning_rate \
        == 1024
    with pytest.raises(UserWarning):
        opt.set_learning_rate(0.5)
    with pytest.raises(DeprecationWarning):
        opt.set_lr_scale({})


def test_scheduler_sees_max_update_count():
    sched = mx.lr_scheduler.MultiFactorScheduler([2], factor=0.1, base_lr=1.0)
    opt = mx.optimizer.SGD(lr_scheduler=sched)
    weights = [mx.nd.ones((2,)), mx.nd.ones((2,))]
    for _ in range(3):
        opt.update(0, weights[0], mx.nd.ones((2,)), None)
    assert opt.num_update == 3 and opt._get_lr(1) == pytest.approx(0.1)
    np.testing.assert_allclose(weights[0].asnumpy(), 1 - 1.0 - 1.0 - 0.1, rtol=1e-6)


def test_default_wd_mult_and_symbol_attributes():
    sym = FakeSymbol({'fc1_weight': {'__lr_mult__': '0'}, 'fc1_bias': {'__lr_mult__': '1.0'},
                      'fc2_weight': {'__wd_mult__': '0.5'}, 'fc2_bias': {'__wd_mult__': '0.5'}},
                     ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias'])
    idx2name = {0: 'fc1_weight', 1: 'fc1_bias', 2: 'fc2_weight', 3: 'fc2_bias', 4: 'bn_gamma',
                5: 'bn_beta'}
    opt = mx.optimizer.SGD(sym=sym, param_idx2name=idx2name, wd=0.1, learning_rate=2.0)
    assert opt.lr_mult == {'fc1_bias': 1.0, 'fc1_weight': 0.0}
    assert opt.wd_mult == {'fc2_bias': 0.5, 'fc2_weight': 0.5, 'fc1_bias': 0.0, 'bn_beta': 0.0}
    assert opt._get_lrs([0, 1, 2]) == [0.0, 2.0, 2.0]
    assert opt._get_wds([0, 1, 2, 3, 4, 5, 9]) == pytest.approx([0.1, 0, 0.05, 0.05, 0.1, 0, 0.1])
    opt.set_lr_mult({2: 3.0, 'fc2_bias': 0.25})
    assert opt._get_lrs([2, 3, 0]) == [6.0, 0.5, 0.0]
    opt.set_wd_mult({'bn_beta': 2.0})
    assert opt._get_wd(5) == pytest.approx(0.2) and opt._get_wd(1) == 0.0


def test_lr_wd_mult_with_real_symbol():
    if not hasattr(mx, 'sym') or not hasattr(mx.sym, 'FullyConnected'):
        pytest.skip('symbol layer not available')
    data = mx.sym.Variable('data')
    bias = mx.sym.Variable('fc1_bias', lr_mult=1.0)
    fc1 = mx.sym.FullyConnected(data=data, bias=bias, name='fc1', num_hidden=10, lr_mult=0)
    fc2 = mx.sym.FullyConnected(data=fc1, name='fc2', num_hidden=10, wd_mult=0.5)
    names = [n for n in fc2.list_arguments() if n != 'data']
    opt = mx.optimizer.create('sgd', sym=fc2, param_idx2name=dict(enumerate(names)))
    assert opt.lr_mult == {'fc1_bias': 1.0, 'fc1_weight': 0.0}
    assert opt.wd_mult == {'fc2_bias': 0.5, 'fc2_weight': 0.5, 'fc1_bias': 0.0}


def test_param_dict_has_priority_and_is_not_pickled():
    class Param(object):
        lr_mult, wd_mult = 0.5, 3.0
    opt = mx.optimizer.SGD(param_dict={0: Param()}, param_idx2name={0: 'x_bias'}, wd=0.1)
    assert opt._get_lr(0) == 0.005 and opt._get_wd(0) == pytest.approx(0.3)
    clone = pickle.loads(pickle.dumps(opt))
    assert clone.param_dict == {} and clone._get_wd(0) == 0.0


def test_update_counters_per_device_and_begin_num_update():
    opt = mx.optimizer.Adam(begin_num_update=10)
    weight, grad = mx.nd.ones((2,)), mx.nd.ones((2,))
    state = opt.create_state(0, weight)
    opt.update(0, weight, grad, state)
    assert opt._index_update_count == {0: 11} and opt.num_update == 11
    opt._set_current_context(1)
    opt.update(0, weight, grad, opt.create_state(0, weight))
    opt.update(1, weight, grad, opt.create_state(1, weight))
    assert opt._all_index_update_counts == {0: {0: 11}, 1: {0: 11, 1: 11}}
    opt._update_count([0, 1])
    assert opt._index_update_count == {0: 12, 1: 12} and opt.num_update == 12


def test_updater_keeps_one_counter_set_per_device():
    opt = mx.optimizer.SGD(momentum=0.9)
    updater = mx.optimizer.get_updater(opt)
    for device in (0, 1):
        with mx.cpu(device):
            weight = mx.nd.ones((2,), ctx=mx.cpu(device))
            updater(device, mx.nd.ones((2,), ctx=mx.cpu(device)), weight)
    assert opt._all_index_update_counts == {0: {0: 1}, 1: {1: 1}}


def test_registry_create_and_override_warning():
    assert mx.optimizer.create('SGD', momentum=0.5).momentum == 0.5
    assert isinstance(mx.optimizer.Optimizer.create_optimizer('adam'), mx.optimizer.Adam)
    assert 'ccsgd' in Optimizer.opt_registry and 'lamb' in Optimizer.opt_registry
    with pytest.raises(ValueError, match='Cannot find optimizer nope'):
        mx.optimizer.create('nope')

    class MyOptimizer(Optimizer):
        def update(self, index, weight, grad, state):
            weight._data -= grad._data
    try:
        assert mx.optimizer.register(MyOptimizer) is MyOptimizer
        assert type(mx.optimizer.create('myoptimizer')) is MyOptimizer
        with pytest.warns(UserWarning, match='is overriding existing optimizer'):
            Optimizer.register(type('MyOptimizer', (Optimizer,), {}))
    finally:
        Optimizer.opt_registry.pop('myoptimizer')


def test_invalid_arguments_raise():
    with pytest.raises(TypeError, match='param_idx2name'):
        Optimizer(param_idx2name=[(0, 'a')])
    with pytest.raises(TypeError, match='weight must be an NDArray'):
        mx.optimizer.SGD().update(0, np.ones(2), mx.nd.ones((2,)), None)
    with pytest.raises(NotImplementedError):
        Optimizer().update(0, mx.nd.ones((1,)), mx.nd.ones((1,)), None)


def test_updater_lazy_states_aggregation_and_bytes_keys():
    opt = mx.optimizer.SGD(momentum=0.9, learning_rate=0.1)
    assert opt.aggregate_num == 4
    updater = mx.optimizer.get_updater(opt)
    shapes = [(2,), (3,), (2, 2), (1,), (4,), (5,)]
    weights = [mx.nd.ones(s) for s in shapes] + [mx.nd.ones((2,), dtype='float64')]
    grads = [mx.nd.ones(w.shape, dtype=w.dtype) for w in weights]
    calls = []
    original = opt.update_multi_precision

    def spy(index, weight, grad, state):
        calls.append(list(index))
        original(index, weight, grad, state)
    opt.update_multi_precision = spy
    updater(list(range(7)), grads, weights)
    assert calls == [[0, 1, 2, 3], [4, 5], [6]]
    assert sorted(updater.states) == list(range(7))
    for w in weights:
        np.testing.assert_allclose(w.asnumpy(), 0.9)
    updater(b'key', mx.nd.ones((2,)), mx.nd.ones((2,)))
    assert 'key' in updater.states


def test_updater_without_aggregation_calls_one_by_one():
    opt = mx.optimizer.Adam()
    updater = mx.optimizer.get_updater(opt)
    assert not updater.aggregate_updates
    weights = [mx.nd.ones((2,)), mx.nd.ones((3,))]
    updater([0, 1], [mx.nd.ones((2,)), mx.nd.ones((3,))], weights)
    assert opt._index_update_count == {0: 1, 1: 1}
    with pytest.raises(ValueError, match='expected as many'):
        updater([0, 1], [mx.nd.ones((2,))], weights)


def test_set_states_resyncs_context_and_replaces_optimizer():
    opt = mx.optimizer.SGD(momentum=0.9)
    updater = mx.optimizer.get_updater(opt)
    updater(0, mx.nd.ones((2,)), mx.nd.ones((2,)))
    blob = updater.get_states()
    other = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9))
    other.set_states(blob)
    assert other.states_synced == {0: False}
    weight = mx.nd.ones((2,), ctx=mx.cpu(1))
    other(0, mx.nd.ones((2,), ctx=mx.cpu(1)), weight)
    assert other.states[0].context == mx.cpu(1) and other.states_synced == {0: True}
    synced = other.sync_state_context([mx.nd.ones((1,)), (None, mx.nd.ones((1,)))], mx.cpu(2))
    assert isinstance(synced, list) and isinstance(synced[1], tuple)
    assert synced[0].context == mx.cpu(2) and synced[1][0] is None


def test_test_optimizer_and_create_state_defaults():
    opt = mx.optimizer.Test(rescale_grad=2.0)
    weight = mx.nd.ones((2,))
    state = opt.create_state(0, weight)
    opt.update(0, weight, mx.nd.ones((2,)), state)
    np.testing.assert_array_equal(state.asnumpy(), [3.0, 3.0])
    assert Optimizer().create_state(0, weight) is None
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert mx.optimizer.SGD().create_state_multi_precision(0, weight) is None


class _Held(object):
    """A value holder such as a framework's variable (keras-mxnet keeps one in ``self.lr``)."""

    def __init__(self, value):
        self.value = value


class _HeldRateSGD(mx.optimizer.SGD):
    """keras-mxnet's pattern: ``lr`` holds an object read by an overridden ``_get_lr(s)``, with
    a decay applied per update."""

    def __init__(self, lr, decay, **kwargs):
        mx.optimizer.SGD.__init__(self, learning_rate=lr, **kwargs)
        self.lr = _Held(lr)
        self.decay = _Held(decay)
        self.aggregate_num = 1

    def _get_lr(self, _):
        return self.lr.value / (1. + self.decay.value * self.num_update)

    def _get_lrs(self, indices):
        return [self._get_lr(i) for i in indices]


def _sgd_run(opt, steps=4):
    rng = np.random.RandomState(3)
    weights = [mx.nd.array(rng.randn(3, 2)) for _ in range(3)]
    updater = mx.optimizer.get_updater(opt)
    for _ in range(steps):
        grads = [mx.nd.array(rng.randn(3, 2)) for _ in range(3)]
        updater(list(range(3)), grads, weights)
    return [w.asnumpy() for w in weights], rng


def test_subclass_may_keep_an_object_in_lr():
    """MXNet accepts any value in ``lr``; a subclass that reads it through its own _get_lr
    trains, and equals plain SGD with the rates it computes (momentum 0.9, per-update decay)."""
    held, _ = _sgd_run(_HeldRateSGD(0.1, 0.5, momentum=0.9))
    rng = np.random.RandomState(3)
    weights = [rng.randn(3, 2) for _ in range(3)]
    moms = [np.zeros((3, 2)) for _ in range(3)]
    for step in range(4):
        grads = [rng.randn(3, 2) for _ in range(3)]
        for i in range(3):     # aggregate_num 1: one update (and count) per weight
            lr = 0.1 / (1. + 0.5 * (step + 1))
            moms[i] = 0.9 * moms[i] - lr * grads[i]
            weights[i] = weights[i] + moms[i]
    for got, want in zip(held, weights):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_lr_and_wd_objects_checked_where_used():
    opt = mx.optimizer.SGD(learning_rate=0.1)
    opt.lr = np.array(0.2)             # converts with float(): used as 0.2
    assert opt._get_lrs([0]) == [0.2]
    opt.lr = _Held(0.1)                # accepted when set, as in MXNet ...
    with pytest.raises(TypeError, match=r'SGD: lr is .*_Held.*not a number.*_get_lr'):
        opt._get_lrs([0])              # ... and refused, naming it, where used as a number
    opt.lr = 0.1
    opt.wd = _Held(0.0)
    with pytest.raises(TypeError, match=r'SGD: wd is .*not a number'):
        _sgd_run(opt, steps=1)


@pytest.mark.parametrize('name,value,error', [
    ('lr', 'fast', TypeError), ('lr', float('nan'), ValueError), ('lr', -0.1, ValueError),
    ('wd', 'none', TypeError), ('momentum', float('inf'), ValueError),
    ('momentum', b'0.9', TypeError)])
def test_nonsense_numbers_still_refused_when_set(name, value, error):
    opt = mx.optimizer.SGD(learning_rate=0.1)
    with pytest.raises(error, match='SGD: %s must be' % name):
        setattr(opt, name, value)
    with pytest.raises(error):
        mx.optimizer.SGD(**{'learning_rate' if name == 'lr' else name: value})
