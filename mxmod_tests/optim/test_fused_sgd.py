"""SGD over Module's packed parameters (mxmod.optimizer.fused): the same weights and momenta, bit
for bit, as the per-tensor update, which a subclass of SGD still takes."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.ops import jit
from mxmod.ops import optimizer_kernels as K
from mxmod.ops import sgd_blocked as B
from mxmod.optimizer import fused as fused_module


class PerTensorSGD(mx.optimizer.SGD):
    """SGD as it updates one tensor at a time (a subclass never takes the fused path)."""


def _net(lr_mult=True):
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=24, name='fc1')
    net = mx.sym.Activation(net, act_type='relu')
    net = mx.sym.FullyConnected(net, num_hidden=16, name='fc2',
                                attr={'__lr_mult__': '0.5'} if lr_mult else {})
    net = mx.sym.Activation(net, act_type='tanh')
    net = mx.sym.FullyConnected(net, num_hidden=5, name='fc3')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def _train(opt_class, steps=12, **opt_params):
    """Train a module on random batches; return it and its optimizer."""
    mx.random.seed(3)
    rs = np.random.RandomState(7)
    mod = mx.mod.Module(_net(), context=mx.cpu())
    mod.bind(data_shapes=[('data', (6, 11))], label_shapes=[('softmax_label', (6,))])
    mod.init_params(mx.init.Xavier(magnitude=2.0))
    opt = opt_class(rescale_grad=1.0 / 6, param_idx2name=dict(enumerate(mod._param_names)),
                    sym=mod.symbol, **opt_params)
    mod.init_optimizer(optimizer=opt)
    for _ in range(steps):
        batch = mx.io.DataBatch(data=[mx.nd.array(rs.randn(6, 11).astype(np.float32) * 3)],
                                label=[mx.nd.array(rs.randint(0, 5, 6).astype(np.float32))])
        mod.forward_backward(batch)
        mod.update()
    return mod


def _state_arrays(mod):
    out = {}
    for key, state in mod._updater.states.items():
        if state is not None:
            out[key] = state.asnumpy()
    return out


CASES = [
    dict(learning_rate=0.1, momentum=0.9),
    dict(learning_rate=0.05, momentum=0.9, wd=1e-3),           # biases: wd_mult 0
    dict(learning_rate=0.2, momentum=0.5, wd=1e-4, clip_gradient=0.05),
    dict(learning_rate=0.1, momentum=0.0, wd=1e-3),
    dict(momentum=0.9, lr_scheduler='factor'),
]


@pytest.mark.parametrize('params', CASES)
def test_fused_update_is_bit_identical_to_per_tensor(params, monkeypatch):
    merged = []

    class Counting(object):
        """optimizer_kernels, counting the updates of runs of several tensors."""
        def __getattr__(self, name):
            return getattr(K, name)

        @staticmethod
        def mom_update_into(*args):
            merged.append(args[0].size)
            return K.mom_update_into(*args)
    monkeypatch.setattr(fused_module, 'K', Counting())

    def make():
        if 'lr_scheduler' not in params:
            return dict(params)
        sched = mx.lr_scheduler.FactorScheduler(step=3, factor=0.5, base_lr=0.3)
        return dict(params, lr_scheduler=sched)
    fused = _train(mx.optimizer.SGD, **make())
    reference = _train(PerTensorSGD, **make())
    got, want = fused.get_params()[0], reference.get_params()[0]
    for name in want:
        np.testing.assert_array_equal(got[name].asnumpy(), want[name].asnumpy(), err_msg=name)
    got_states, want_states = _state_arrays(fused), _state_arrays(reference)
    assert got_states.keys() == want_states.keys()
    for key in want_states:
        np.testing.assert_array_equal(got_states[key], want_states[key])
    assert fused._optimizer.num_update == reference._optimizer.num_update == 12
    if params.get('momentum') and not params.get('wd'):
        # each layer's weight and bias share their scalars (fc2's lr_mult applies to both):
        # one pass per layer and update
        assert merged == [24 * 11 + 24, 16 * 24 + 16, 5 * 16 + 5] * 12
    elif not params.get('momentum'):
        assert not merged


def test_parameters_and_gradients_are_packed_in_argument_order():
    mod = mx.mod.Module(_net(), context=mx.cpu())
    mod.bind(data_shapes=[('data', (6, 11))], label_shapes=[('softmax_label', (6,))])
    mod.init_params(mx.init.Uniform(0.1))
    group = mod._exec_group
    for arrays in (group.param_arrays, group.grad_arrays):
        datas = [a[0]._data for a in arrays]
        base = datas[0].base
        assert base is not None and base.ndim == 1
        assert base.size == sum(d.size for d in datas)
        offset = 0
        for d in datas:
            assert d.base is base
            np.testing.assert_array_equal(d.reshape(-1), base[offset:offset + d.size])
            offset += d.size
    # the parameters are the module's: set_params writes through them
    args, auxs = mod.get_params()
    args['fc2_weight'][:] = 1.5
    mod.set_params(args, auxs)
    assert (group.param_arrays[2][0].asnumpy() == 1.5).all()


def test_states_saved_and_loaded_resume_identically(tmp_path):
    params = dict(learning_rate=0.1, momentum=0.9, wd=1e-3)
    whole = _train(mx.optimizer.SGD, steps=10, **params)
    first = _train(mx.optimizer.SGD, steps=5, **params)
    fname = str(tmp_path / 'opt.states')
    first.save_optimizer_states(fname)
    first.load_optimizer_states(fname)        # new state arrays: the plan is made again
    rs = np.random.RandomState(7)
    for _ in range(5):                         # the batches _train drew first
        rs.randn(6, 11), rs.randint(0, 5, 6)
    for _ in range(5):
        batch = mx.io.DataBatch(data=[mx.nd.array(rs.randn(6, 11).astype(np.float32) * 3)],
                                label=[mx.nd.array(rs.randint(0, 5, 6).astype(np.float32))])
        first.forward_backward(batch)
        first.update()
    for name, value in whole.get_params()[0].items():
        np.testing.assert_array_equal(first.get_params()[0][name].asnumpy(), value.asnumpy())


@pytest.mark.parametrize('compiled', [False, True])
def test_blocked_momentum_kernel_matches_the_expression(monkeypatch, compiled):
    """mom_update_into, block by block or by the compiled pass, against the multi-SGD
    expression in numpy."""
    _use_compiled(monkeypatch, compiled)
    monkeypatch.setattr(B, 'BLOCK', 1000)
    rs = np.random.RandomState(0)
    for n, clip in ((1000, -1.0), (4321, -1.0), (2500, 0.01)):
        w = rs.randn(n).astype(np.float32)
        g = rs.randn(n).astype(np.float32)
        m = rs.randn(n).astype(np.float32) * 0.1
        momentum, lr, wd, rg, cg = K.scalars(np.dtype(np.float32), 0.9, 0.1, 1e-3, 0.5, clip)
        step = lr * np.clip(g * rg, -cg, cg) if cg >= 0 else g * (lr * rg)
        want_m = m * momentum - w * (lr * wd) - step
        want_w = w + want_m
        K.mom_update_into(m, w, g, momentum, lr, wd, rg, cg)
        np.testing.assert_array_equal(m, want_m)
        np.testing.assert_array_equal(w, want_w)


def _use_compiled(monkeypatch, compiled):
    if compiled:
        pytest.importorskip('numba')
    monkeypatch.setitem(jit._STATE, 'enabled', compiled)     # restored after the test


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_compiled_momentum_update_is_bit_identical_to_numpy(monkeypatch, dtype):
    """The one-pass compiled update (sgd_kernels) against the blocked numpy passes, bit for bit,
    with weight decay, clipping, NaN and infinities, on sizes around the block size."""
    pytest.importorskip('numba')
    rs = np.random.RandomState(1)
    for n, wd, clip in ((5000, 0.0, -1.0), (40000, 1e-4, -1.0), (70001, 1e-3, 0.01),
                        (33000, 0.0, 0.5)):
        w = rs.randn(n).astype(dtype)
        m = rs.randn(n).astype(dtype)
        g = (rs.randn(n) * 3).astype(dtype)
        g[::97], w[::101], g[5::89] = np.nan, np.inf, -np.inf
        scalars = K.scalars(np.dtype(dtype), 0.9, 0.05, wd, 1 / 128., clip)
        results = []
        for compiled in (True, False):
            _use_compiled(monkeypatch, compiled)
            w1, m1 = w.copy(), m.copy()
            with np.errstate(invalid='ignore', over='ignore'):
                B.mom_update_into(m1, w1, g, *scalars)
            results.append((w1, m1))
        for got, want in zip(results[0], results[1]):
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_gradient_of_another_shape_or_dtype_is_refused():
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9))
    w = [mx.nd.ones((3, 2)), mx.nd.ones((4,))]
    with pytest.raises(mx.base.MXNetError, match='shape'):
        updater([0, 1], [mx.nd.ones((3, 2)), mx.nd.ones((5,))], w)
    with pytest.raises(mx.base.MXNetError, match='dtype|float64'):
        updater([0, 1], [mx.nd.ones((3, 2)), mx.nd.ones((4,), dtype='float64')], w)



# ---- the repeated fused update (fused.Repeat) -----------------------------------------------
def _change_lr(mod):
    mod._optimizer.lr = 0.03


def _change_wd(mod):
    mod._optimizer.wd = 2e-3


def _change_lr_mult(mod):
    mod._optimizer.set_lr_mult({'fc1_weight': 0.25})


def _change_wd_mult_in_place(mod):
    mod._optimizer.wd_mult['fc3_weight'] = 3.0


def _change_momentum(mod):
    mod._optimizer.momentum = 0.5


def _momentum_off(mod):
    mod._optimizer.momentum = 0.0


def _change_rescale_and_clip(mod):
    mod._optimizer.rescale_grad = 0.25
    mod._optimizer.clip_gradient = 0.01


def _reload_states(mod):
    mod._updater.set_states(mod._updater.get_states())


def _replace_one_state(mod):
    states = mod._updater.states
    key = sorted(states)[1]
    states[key] = states[key].copy() * 0.5


def _rebind_reshaped(mod):
    mod.reshape(data_shapes=[('data', (6, 11))], label_shapes=[('softmax_label', (6,))])


CHANGES = [None, _change_lr, _change_wd, _change_lr_mult, _change_wd_mult_in_place,
           _change_momentum, _momentum_off, _change_rescale_and_clip, _reload_states,
           _replace_one_state, _rebind_reshaped]


def _train_with(change, repeat, steps=8, lr_mult=True, **opt_params):
    """Train _net's module, calling ``change(mod)`` after half of the steps; with ``repeat``
    False the updater never keeps a Repeat (every call takes the general path)."""
    rs = np.random.RandomState(11)
    mx.random.seed(5)
    mod = mx.mod.Module(_net(lr_mult), context=mx.cpu())
    mod.bind(data_shapes=[('data', (6, 11))], label_shapes=[('softmax_label', (6,))])
    mod.init_params(mx.init.Xavier(magnitude=2.0))
    opt_params = dict(opt_params)
    aggregate = opt_params.pop('aggregate_num', None)
    mod.init_optimizer(optimizer='sgd', optimizer_params=opt_params)
    if aggregate is not None:
        mod._optimizer.aggregate_num = aggregate
    if not repeat:
        mod._updater._repeats = _NoRepeats()
    for step in range(steps):
        if step == steps // 2 and change is not None:
            change(mod)
        batch = mx.io.DataBatch(data=[mx.nd.array(rs.randn(6, 11).astype(np.float32) * 3)],
                                label=[mx.nd.array(rs.randint(0, 5, 6).astype(np.float32))])
        mod.forward_backward(batch)
        mod.update()
    return mod


class _PerCall(mx.lr_scheduler.LRScheduler):
    """A schedule whose rate changes at every call: each chunk of an update gets its own."""
    def __init__(self):
        super().__init__(base_lr=0.2)
        self.calls = 0

    def __call__(self, num_update):
        self.calls += 1
        return 0.2 / self.calls


class _NoRepeats(dict):
    """An updater's table of Repeats that keeps none."""
    def __setitem__(self, key, value):
        pass


@pytest.mark.parametrize('change', CHANGES, ids=lambda c: 'none' if c is None else c.__name__)
@pytest.mark.parametrize('opt_params', [
    dict(learning_rate=0.1, momentum=0.9),
    dict(learning_rate=0.1, momentum=0.9, lr_mult=False),   # one rate: one pass per run
    dict(learning_rate=0.1, momentum=0.9, wd=1e-3),
    dict(learning_rate=0.1, momentum=0.9, wd=1e-3, lr_mult=False),
    dict(momentum=0.9, aggregate_num=2,
         lr_scheduler=mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.2)),
    dict(momentum=0.9, aggregate_num=2, lr_mult=False, lr_scheduler='per call'),
], ids=['plain', 'uniform', 'wd', 'uniform_wd', 'chunks_scheduler', 'chunks_per_call'])
def test_repeated_update_is_the_general_update(change, opt_params):
    """Module hands its updater the same tuples every step, and the updater repeats the checked
    fused update (fused.Repeat): weights, momenta and update counts are bit for bit those of the
    general path, whatever changes between steps."""
    def params():
        out = dict(opt_params)
        if out.get('lr_scheduler') == 'per call':
            out['lr_scheduler'] = _PerCall()
        elif 'lr_scheduler' in out:
            out['lr_scheduler'] = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.2)
        return out
    got = _train_with(change, True, **params())
    want = _train_with(change, False, **params())
    for name, value in want.get_params()[0].items():
        np.testing.assert_array_equal(got.get_params()[0][name].asnumpy(), value.asnumpy(),
                                      err_msg=name)
    got_states, want_states = _state_arrays(got), _state_arrays(want)
    assert got_states.keys() == want_states.keys()
    for key in want_states:
        np.testing.assert_array_equal(got_states[key], want_states[key], err_msg=str(key))
    assert got._optimizer.num_update == want._optimizer.num_update
    assert got._optimizer._index_update_count == want._optimizer._index_update_count
    if change in (None, _change_lr, _change_wd):
        assert len(got._updater._repeats) == 1   # the repeat served to the end


def test_repeated_update_runs_without_the_general_path(monkeypatch):
    """After the first update, a module's updates go through the Repeat (none through
    sgd_update)."""
    calls = []
    real = fused_module.sgd_update

    def counting(*args):
        calls.append(1)
        return real(*args)
    monkeypatch.setattr(fused_module, 'sgd_update', counting)
    mod = _train_with(None, True, steps=6, learning_rate=0.1, momentum=0.9)
    assert len(calls) == 1
    assert len(mod._updater._repeats) == 1


def test_repeated_update_sees_a_replaced_weight_array():
    """Weights whose arrays are replaced (not written in place) are updated where they are now,
    as the general path would."""
    mod = _train_with(None, True, steps=2, learning_rate=0.1, momentum=0.9)
    weight = mod._exec_group.param_arrays[0][0]
    weight._data = weight._data.copy()
    before = weight.asnumpy()
    batch = mx.io.DataBatch(data=[mx.nd.ones((6, 11))], label=[mx.nd.zeros((6,))])
    mod.forward_backward(batch)
    mod.update()
    assert not np.array_equal(weight.asnumpy(), before)


def _train_buckets(repeat, steps=9):
    """A BucketingModule over three sequence lengths (one module per bucket, one updater)."""
    def sym_gen(length):
        data = mx.sym.var('data')
        net = mx.sym.FullyConnected(mx.sym.reshape(data, shape=(-1, 4)), num_hidden=6,
                                    name='fc1', flatten=True)
        net = mx.sym.FullyConnected(mx.sym.tanh(net), num_hidden=3, name='fc2')
        net = mx.sym.reshape(net, shape=(-1, length, 3))
        net = mx.sym.SoftmaxOutput(net, mx.sym.var('softmax_label'), name='softmax',
                                   preserve_shape=True)
        return net, ('data',), ('softmax_label',)
    mx.random.seed(2)
    rs = np.random.RandomState(4)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=6, context=mx.cpu())
    mod.bind(data_shapes=[('data', (2, 6, 4))], label_shapes=[('softmax_label', (2, 6))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1,
                                                          'momentum': 0.9})
    updater = mod._curr_module._updater
    if not repeat:
        updater._repeats = _NoRepeats()
    for step in range(steps):
        length = (2, 4, 6)[step % 3]
        batch = mx.io.DataBatch(
            data=[mx.nd.array(rs.randn(2, length, 4))],
            label=[mx.nd.array(rs.randint(0, 3, (2, length)))], bucket_key=length,
            provide_data=[('data', (2, length, 4))],
            provide_label=[('softmax_label', (2, length))])
        mod.forward_backward(batch)
        mod.update()
    return mod, updater


def test_repeated_update_per_bucket():
    """Each bucket's module hands the shared updater its own tuples: one Repeat per bucket, and
    the parameters are those of the general path."""
    got, updater = _train_buckets(True)
    want, _ = _train_buckets(False)
    assert len(updater._repeats) == 3
    for name, value in want.get_params()[0].items():
        np.testing.assert_array_equal(got.get_params()[0][name].asnumpy(), value.asnumpy(),
                                      err_msg=name)


def test_a_new_bind_drops_the_old_repeat():
    """When the module's arrays change (bound again for another batch size), the updater forgets
    the Repeat of the old tuples instead of keeping their arrays alive."""
    mod = _train_with(None, True, steps=3, learning_rate=0.1, momentum=0.9)
    old = next(iter(mod._updater._repeats.values()))
    mod.bind(data_shapes=[('data', (3, 11))], label_shapes=[('softmax_label', (3,))],
             force_rebind=True)
    batch = mx.io.DataBatch(data=[mx.nd.ones((3, 11))], label=[mx.nd.zeros((3,))])
    for _ in range(2):
        mod.forward_backward(batch)
        mod.update()
    repeats = list(mod._updater._repeats.values())
    assert len(repeats) == 1 and repeats[0] is not old
    assert repeats[0].weight[0] is mod._exec_group.param_arrays[0][0]
