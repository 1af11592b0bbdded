"""Gradient communication overlapped with backward: the buckets really start while backward
runs, parameters are bit-identical to the run without overlap (update_on_kvstore both ways,
grad_req='add', BucketingModule, sparse gradients, compression, 2 and 4 MPI ranks under an
emulated network), and errors on the communication thread reach the caller."""
import os

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.executor.executor import Executor
from mxmod.module import overlap

from . import overlap_cases
from ..kvstore.dist_scripts.runner import launch_ok, require_mpi


@pytest.fixture(autouse=True)
def small_buckets(monkeypatch):
    # many buckets even for these small networks
    monkeypatch.setenv('MXMOD_KVSTORE_BUCKET_MB', '0.002')


def _train(monkeypatch, flag, **kwargs):
    monkeypatch.setenv(overlap.ENV_OVERLAP, flag)
    return overlap_cases.train(**kwargs)[0]


def _assert_identical(a, b):
    assert sorted(a) == sorted(b)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@pytest.mark.parametrize('kwargs,on_kvstore', [
    (dict(kvstore='local', ndev=2), '1'),
    (dict(kvstore='local', ndev=2), '0'),
    (dict(kvstore='device', ndev=3), '1'),
    (dict(kvstore='device', ndev=2, optimizer='adam'), '0'),
    (dict(kvstore='local', ndev=2, grad_req='add'), '1'),
    (dict(kvstore='local', ndev=2, bucketing=True), '1'),
    (dict(kvstore='local', ndev=2, model='embed'), '1'),
    (dict(kvstore='local', ndev=2, model='embed'), '0'),
])
def test_bit_identical_with_and_without_overlap(monkeypatch, kwargs, on_kvstore):
    monkeypatch.setenv('MXNET_UPDATE_ON_KVSTORE', on_kvstore)
    _assert_identical(_train(monkeypatch, '0', **kwargs), _train(monkeypatch, '1', **kwargs))


def test_buckets_start_while_backward_runs(monkeypatch):
    """With overlap, most buckets are queued before the executors' backward has returned; with
    MXMOD_OVERLAP_COMM=0 none is queued at all (update reduces them)."""
    state = {'during': 0, 'after': 0}

    def submitted(during, label):  # pylint: disable=unused-argument
        state['during' if during else 'after'] += 1
    _spy_submissions(monkeypatch, submitted)
    _train(monkeypatch, '1', kvstore='local', ndev=2)
    assert state['during'] >= 3 * 4 and state['during'] > 2 * state['after'], state
    state.update(during=0, after=0)
    _train(monkeypatch, '0', kvstore='local', ndev=2)
    assert state['during'] == 0 and state['after'] == 0, state


def test_grad_req_add_and_switch_fall_back_to_update(monkeypatch):
    monkeypatch.setenv(overlap.ENV_OVERLAP, '1')
    mod = mx.mod.Module(overlap_cases.convnet(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([('data', (4, 2, 8, 8))], [('softmax_label', (4,))], grad_req='add')
    mod.init_params()
    mod.init_optimizer(kvstore='local')
    assert mod._exchange() is not None and not mod._exchange().overlap
    assert len(mod._exchange().buckets) > 3
    monkeypatch.setenv(overlap.ENV_OVERLAP, '0')
    assert not overlap.overlap_enabled()


def test_gradients_keep_local_values_until_update(monkeypatch):
    """update_on_kvstore=False: after backward each device still holds its own gradient (the
    sums land in private buffers), as without overlap; update then uses the sums."""
    monkeypatch.setenv('MXNET_UPDATE_ON_KVSTORE', '0')
    monkeypatch.setenv(overlap.ENV_OVERLAP, '1')
    mod = mx.mod.Module(overlap_cases.convnet(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([('data', (8, 2, 8, 8))], [('softmax_label', (8,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(kvstore='local', optimizer_params={'learning_rate': 0.0})
    data, _ = overlap_cases.batches('conv')
    mod.forward_backward(data[0])
    mod._drain_comm()
    grads = [[g.asnumpy() for g in devs] for devs in mod._exec_group.grad_arrays]
    assert not np.array_equal(grads[0][0], grads[0][1])
    mod.update()
    summed = [[g.asnumpy() for g in devs] for devs in mod._exec_group.grad_arrays]
    for before, after in zip(grads, summed):
        np.testing.assert_allclose(after[0], before[0] + before[1], rtol=1e-6, atol=1e-7)


def test_background_error_reaches_update_with_rank_and_keys(monkeypatch):
    monkeypatch.setenv(overlap.ENV_OVERLAP, '1')
    mod = mx.mod.Module(overlap_cases.convnet(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([('data', (8, 2, 8, 8))], [('softmax_label', (8,))])
    mod.init_params()
    mod.init_optimizer(kvstore='local')
    real = mod._kvstore.push

    def failing(key, value, priority=0):
        # during backward the overlapped buckets push (the new weights are pulled at its end)
        if 'fc2_weight' in key:
            raise ValueError('link down')
        return real(key, value, priority=priority)
    monkeypatch.setattr(mod._kvstore, 'push', failing)
    data, _ = overlap_cases.batches('conv')
    mod.forward_backward(data[0])
    with pytest.raises(MXNetError, match=r"kvstore local, worker rank 0: reducing the gradients "
                                         r"of \[.*'fc2_weight'.*\].*ValueError: link down"):
        mod.update()
    # the store works again afterwards (the error was reported once)
    monkeypatch.setattr(mod._kvstore, 'push', real)
    mod.forward_backward(data[1])
    mod.update()


def test_error_also_reaches_the_next_forward(monkeypatch):
    monkeypatch.setenv(overlap.ENV_OVERLAP, '1')
    mod = mx.mod.Module(overlap_cases.convnet(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([('data', (8, 2, 8, 8))], [('softmax_label', (8,))])
    mod.init_params()
    mod.init_optimizer(kvstore='local')
    monkeypatch.setattr(mod._kvstore, 'push', lambda *a, **k: 1 / 0)
    data, _ = overlap_cases.batches('conv')
    mod.forward_backward(data[0])
    with pytest.raises(MXNetError, match='ZeroDivisionError'):
        mod.forward(data[1])


def _dist_params(tmp_path, flag, workers, extra, env_more=None):
    path = str(tmp_path / ('p%s.npz' % flag))
    env = {overlap.ENV_OVERLAP: flag, 'MXMOD_KVSTORE_BUCKET_MB': '0.002',
           'MXMOD_NET_EMULATION': 'bandwidth=200Mbit/s,latency=100us'}
    env.update(env_more or {})
    launch_ok(os.path.join('..', '..', 'module', 'overlap_cases.py'), extra + [path],
              workers=workers, env=env, timeout=120)
    return [dict(np.load(path.replace('.npz', '.rank%d.npz' % r))) for r in range(workers)]


@pytest.mark.parametrize('workers,extra,env', [
    (2, ['dist_sync', '1', 'conv'], {}),
    (2, ['dist_sync', '1', 'conv'], {'MXNET_UPDATE_ON_KVSTORE': '0'}),
    (2, ['dist_device_sync', '2', 'conv', '--compress'], {}),
    (4, ['dist_sync', '1', 'conv'], {}),
])
def test_dist_bit_identical_under_emulated_network(tmp_path, workers, extra, env):
    require_mpi()
    off = _dist_params(tmp_path, '0', workers, extra, env)
    on = _dist_params(tmp_path, '1', workers, extra, env)
    for rank in range(workers):
        _assert_identical(off[rank], on[rank])
        # the weights are the same on every worker (BatchNorm's moving statistics are local)
        for name in on[0]:
            if not name.startswith('aux:'):
                np.testing.assert_array_equal(on[0][name], on[rank][name], err_msg=name)


def test_bucket_plan_keeps_backward_order_and_shrinks_towards_the_end():
    """Buckets follow backward order and hold at most `limit` bytes (a larger gradient alone);
    the gradients backward finishes last go into buckets that halve towards the end, the last
    at most `tail` bytes (a sixteenth of the limit by default)."""
    from mxmod.module.overlap import plan_buckets
    sizes = dict(fc3=40, fc2=100, fc1=30, fc0=20, conv1=6, conv0=3)
    order = list(sizes)
    plan = plan_buckets(order, sizes, 60, tail=10)
    assert [n for b in plan for n in b] == order
    # from the end: at most 10 bytes, then 20, 40 (a larger one alone), then the 60-byte limit
    assert plan == [['fc3'], ['fc2'], ['fc1'], ['fc0'], ['conv1', 'conv0']]
    assert all(sum(sizes[n] for n in b) <= 60 for b in plan if len(b) > 1)
    assert plan_buckets(['a', 'b'], dict(a=5, b=50), 20) == [['a'], ['b']]
    assert plan_buckets(order, sizes, 60, tail=0)[-1] == ['conv0']
    many = {'g%02d' % i: 10 for i in range(40)}
    plan = plan_buckets(sorted(many), many, 160, tail=10)
    # 1, 2, 4, 8 names from the end; the 25 before by the limit (small ones ride along)
    assert [sum(many[n] for n in b) for b in plan] == [180, 70, 80, 40, 20, 10]
    assert [n for b in plan for n in b] == sorted(many)
    # a bias rides along with its (oversized) weight instead of paying a collective of its own,
    # up to limit / 8 bytes of riders; a larger one starts a bucket
    sizes = dict(w1=100, b1=3, w0=50, b0=3, big=40)
    assert plan_buckets(list(sizes), sizes, 64, tail=64) == [['w1', 'b1'], ['w0', 'b0'], ['big']]
    sizes = dict(w1=100, b1=4, c1=4, d1=4, w0=10)
    assert plan_buckets(list(sizes), sizes, 64, tail=64) == [['w1', 'b1', 'c1'], ['d1', 'w0']]


def _two_device_module(monkeypatch, flag, on_kvstore):
    """The convnet bound on 2 devices with a local kvstore, MXMOD_OVERLAP_COMM=flag (None:
    unset) and MXNET_UPDATE_ON_KVSTORE=on_kvstore."""
    monkeypatch.setenv('MXNET_UPDATE_ON_KVSTORE', on_kvstore)
    if flag is None:
        monkeypatch.delenv(overlap.ENV_OVERLAP, raising=False)
    else:
        monkeypatch.setenv(overlap.ENV_OVERLAP, flag)
    mod = mx.mod.Module(overlap_cases.convnet(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([('data', (8, 2, 8, 8))], [('softmax_label', (8,))])
    mx.random.seed(11)
    mod.init_params(mx.init.Xavier(magnitude=2.0))
    mod.init_optimizer(kvstore='local', optimizer_params={'learning_rate': 0.1})
    return mod


def _manual(monkeypatch, flag, edit, on_kvstore, update=True, twice=False):
    """Manual steps on 2 devices (local kvstore): backward, an optional edit of every gradient
    (halved) and update; returns the final parameters."""
    mod = _two_device_module(monkeypatch, flag, on_kvstore)
    data, _ = overlap_cases.batches('conv')
    for batch in data:
        mod.forward_backward(batch)
        if twice:
            mod.forward_backward(batch)
        if edit:
            for grads in mod._exec_group.grad_arrays:
                for grad in grads:
                    grad *= 0.5
        if update:
            mod.update()
    args, auxs = mod.get_params()
    return {k: v.asnumpy() for k, v in list(args.items()) + list(auxs.items())}


@pytest.mark.parametrize('on_kvstore', ['1', '0'])
def test_user_steps_see_their_gradient_edits(monkeypatch, on_kvstore):
    """By default a backward the user calls does not start the communication: gradients edited
    before update are what update reduces (as in MXNet), bit for bit as with
    MXMOD_OVERLAP_COMM=0 (MXMOD_OVERLAP_COMM=1 promises no such edits)."""
    edited = _manual(monkeypatch, None, True, on_kvstore)
    _assert_identical(edited, _manual(monkeypatch, '0', True, on_kvstore))
    plain = _manual(monkeypatch, '0', False, on_kvstore)
    assert not np.array_equal(edited['fc1_weight'], plain['fc1_weight'])


def test_backward_without_update_leaves_the_weights(monkeypatch):
    """Input gradients of a trained model (backward, no update) do not move its weights, and
    two backward passes before one update are one step."""
    before = _manual(monkeypatch, '0', False, '1', update=False)
    del before['bn1_moving_mean'], before['bn1_moving_var']
    after = _manual(monkeypatch, None, False, '1', update=False)
    for name in before:
        np.testing.assert_array_equal(before[name], after[name], err_msg=name)
    _assert_identical(_manual(monkeypatch, None, False, '1', twice=True),
                      _manual(monkeypatch, '0', False, '1', twice=True))


def test_fit_overlaps_by_default_and_not_for_subclasses(monkeypatch):
    """fit's steps start the buckets during backward without any setting; a Module subclass
    that overrides update (it may edit the gradients first) gets no overlap."""
    monkeypatch.delenv(overlap.ENV_OVERLAP, raising=False)
    queued = []
    real_submit = overlap.CommChannel.submit

    def submit(self, job, label):
        queued.append(label)
        return real_submit(self, job, label)
    monkeypatch.setattr(overlap.CommChannel, 'submit', submit)
    data, _ = overlap_cases.batches('conv')
    X = np.concatenate([b.data[0].asnumpy() for b in data])
    y = np.concatenate([b.label[0].asnumpy() for b in data])

    class Halved(mx.mod.Module):
        def update(self):
            for grads in self._exec_group.grad_arrays:
                for grad in grads:
                    grad *= 0.5
            super().update()
    results = {}
    for cls in (mx.mod.Module, Halved):
        del queued[:]
        mod = cls(overlap_cases.convnet(), context=[mx.cpu(0), mx.cpu(1)])
        mod.fit(mx.io.NDArrayIter(X, y, batch_size=8), num_epoch=1, kvstore='local',
                optimizer_params={'learning_rate': 0.1})
        results[cls] = len(queued)
    assert results[mx.mod.Module] >= 4 * 3 and results[Halved] == 0, results


def test_overlap_switch_values(monkeypatch):
    for value, mode in (('0', 'off'), ('false', 'off'), ('1', 'on'), ('', 'fit')):
        monkeypatch.setenv(overlap.ENV_OVERLAP, value)
        assert overlap.overlap_mode() == mode
    monkeypatch.setenv(overlap.ENV_OVERLAP, 'sometimes')
    with pytest.raises(ValueError, match="MXMOD_OVERLAP_COMM='sometimes': expected 0"):
        overlap.overlap_mode()


def _user_loop(monkeypatch, flag, on_kvstore, steps=6, edit_from=None, backward_only_at=None,
               queued=None):
    """A user's loop on 2 devices (local kvstore): forward_backward then update each step; from
    step ``edit_from`` on, every executor's gradients are halved first (read through the
    executors, as Sockeye's norm clipping does); at ``backward_only_at`` a backward without
    update (the parameters are recorded right after it). Returns (params, recorded)."""
    mod = _two_device_module(monkeypatch, flag, on_kvstore)
    data, _ = overlap_cases.batches('conv', steps=steps)
    recorded = None
    for step, batch in enumerate(data):
        if queued is not None:
            queued.append([])
        mod.forward_backward(batch)
        if step == backward_only_at:
            recorded = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
            mod.forward_backward(data[0])
            recorded = (recorded, {k: v.asnumpy() for k, v in mod.get_params()[0].items()})
            continue
        if edit_from is not None and step >= edit_from:
            for exe in mod._exec_group.execs:
                for grad in exe.grad_arrays:
                    if grad is not None:
                        grad *= 0.5
        mod.update()
    args, auxs = mod.get_params()
    return {k: v.asnumpy() for k, v in list(args.items()) + list(auxs.items())}, recorded


def _spy_submissions(monkeypatch, submitted):
    """Call ``submitted(during_backward, label)`` for every job queued on a communication
    thread (the executors run one after another)."""
    real_backward, real_submit = Executor.backward, overlap.CommChannel.submit
    state = {'backward': 0}

    def backward(self, *args, **kwargs):
        state['backward'] += 1
        try:
            return real_backward(self, *args, **kwargs)
        finally:
            state['backward'] -= 1

    def submit(self, job, label):
        submitted(bool(state['backward']), label)
        return real_submit(self, job, label)
    monkeypatch.setattr(Executor, 'backward', backward)
    monkeypatch.setattr(overlap.CommChannel, 'submit', submit)
    monkeypatch.setenv('MXMOD_EXEC_THREADS', '0')


def _count_queued(monkeypatch):
    """Per step (a list appended by the loop), the jobs queued during backward."""
    queued = []

    def submitted(during, label):
        if during and queued:
            queued[-1].append(label)
    _spy_submissions(monkeypatch, submitted)
    return queued


@pytest.mark.parametrize('on_kvstore', ['1', '0'])
def test_user_loop_overlaps_once_its_steps_go_straight_to_update(monkeypatch, on_kvstore):
    """A loop of forward_backward then update that never reads the gradients overlaps from its
    third step on, bit-identical to no overlap."""
    queued = _count_queued(monkeypatch)
    on, _ = _user_loop(monkeypatch, None, on_kvstore, queued=queued)
    assert [bool(q) for q in queued] == [False] * overlap.USER_STEPS + [True] * 4, queued
    _assert_identical(on, _user_loop(monkeypatch, '0', on_kvstore)[0])


@pytest.mark.parametrize('on_kvstore', ['1', '0'])
def test_user_loop_reading_gradients_never_overlaps(monkeypatch, on_kvstore):
    """Gradients read through the executors (and edited) at every step, as Sockeye's norm
    clipping does: no step overlaps and the edits are what update reduces, as without
    overlap."""
    queued = _count_queued(monkeypatch)
    edited, _ = _user_loop(monkeypatch, None, on_kvstore, edit_from=0, queued=queued)
    _assert_identical(edited, _user_loop(monkeypatch, '0', on_kvstore, edit_from=0)[0])
    assert not any(queued), queued
    plain, _ = _user_loop(monkeypatch, '0', on_kvstore)
    assert not np.array_equal(edited['fc1_weight'], plain['fc1_weight'])


def test_user_backward_without_update_leaves_the_parameters(monkeypatch):
    """A backward without update after overlapped steps (update_on_kvstore): the parameters
    do not change until an update (the new weights are pulled in update only), and the next
    steps no longer overlap."""
    queued = _count_queued(monkeypatch)
    _, (before, after) = _user_loop(monkeypatch, None, '1', backward_only_at=3, queued=queued)
    for name in before:
        np.testing.assert_array_equal(before[name], after[name], err_msg=name)
    assert [bool(q) for q in queued][4:] == [False, False], queued
