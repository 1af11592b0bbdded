"""mxmod's optimizers, update operators, schedulers and .states pickles against MXNet 1.9.1.

The frozen values come from gen_oracle.py (run under the real MXNet); the subprocess tests run
the oracle itself and skip when it is absent."""
import json
import os
import subprocess
import warnings

import numpy as np
import pytest

import mxmod as mx
from mxmod_tests.conftest import ORACLE_PYTHON, oracle_available, GOLDEN
from .cases import CASES, OPS, SCHEDULES
from .driver import run_case, run_op, run_schedule

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope='module')
def oracle():
    data = np.load(os.path.join(HERE, 'oracle_trajectories.npz'))
    arrays = {k: data[k] for k in data.files}
    inputs = {k[len('input:'):]: v for k, v in arrays.items() if k.startswith('input:')}
    return arrays, inputs


def assert_ulps(got, ref, key, max_ulps=4):
    """got equals ref within ``max_ulps`` units in the last place of ref's dtype."""
    assert got.dtype == ref.dtype and got.shape == ref.shape, (key, got.dtype, ref.dtype)
    if got.dtype.kind != 'f':
        np.testing.assert_array_equal(got, ref, err_msg=key)
        return
    ulp = np.spacing(np.maximum(np.abs(ref), np.finfo(ref.dtype).tiny).astype(ref.dtype))
    ulps = np.abs(got.astype(np.float64) - ref.astype(np.float64)) / ulp.astype(np.float64)
    assert ulps.max(initial=0) <= max_ulps, '%s: off by %.1f ulps (max %d)' % (
        key, ulps.max(), max_ulps)


@pytest.mark.parametrize('case', sorted(CASES))
def test_trajectory_matches_mxnet(case, oracle):
    arrays, inputs = oracle
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        got = run_case(mx, case, inputs)
    assert sorted(got) == sorted(k for k in arrays if k.startswith(case + ':'))
    for key, value in got.items():
        # lamb_mp: MXNet's multi-LAMB master copy differs by an ulp now and then (cause unknown)
        assert_ulps(np.asarray(value), arrays[key], key, max_ulps=8 if case == "lamb_mp" else 2)


@pytest.mark.parametrize('name', sorted(OPS))
def test_update_operator_matches_mxnet(name, oracle):
    arrays, inputs = oracle
    got = run_op(mx, name, inputs)
    assert sorted(got) == sorted(k for k in arrays if k.startswith('op:%s:' % name))
    for key, value in got.items():
        assert_ulps(value, arrays[key], key, max_ulps=0)


def test_schedules_match_mxnet():
    with open(os.path.join(HERE, 'oracle_schedules.json')) as handle:
        expected = json.load(handle)
    assert {name: run_schedule(mx, name) for name in SCHEDULES} == expected


def test_golden_states_load():
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9))
    with open(os.path.join(GOLDEN, 'fit_mlp_mod-0002.states'), 'rb') as handle:
        updater.set_states(handle.read())
    ref = np.load(os.path.join(GOLDEN, 'fit_mlp_mod-0002.states.npz'))
    by_index = {int(k.split(':')[1]): ref[k] for k in ref.files}
    assert sorted(updater.states) == sorted(by_index)
    for index, value in by_index.items():
        state = updater.states[index]
        assert type(state) is mx.nd.NDArray
        np.testing.assert_array_equal(state.asnumpy(), value)
    assert all(flag is False for flag in updater.states_synced.values())


def test_oracle_pickle_with_optimizer_resumes_identically():
    with open(os.path.join(HERE, 'oracle_adam_sched.states'), 'rb') as handle:
        blob = handle.read()
    resume = np.load(os.path.join(HERE, 'oracle_resume.npz'))
    trajectories = np.load(os.path.join(HERE, 'oracle_trajectories.npz'))
    updater = mx.optimizer.get_updater(mx.optimizer.SGD())
    updater.set_states(blob)
    opt = updater.optimizer
    assert type(opt) is mx.optimizer.Adam
    assert type(opt.lr_scheduler) is mx.lr_scheduler.CosineScheduler
    assert opt.num_update == 3 and opt._index_update_count == {0: 3, 1: 3}
    assert opt.param_dict == {} and opt.idx2name == {0: 'fc1_weight', 1: 'fc1_bias'}
    weights = [mx.nd.array(resume['resume:w%d_before' % i]) for i in range(2)]
    for k in range(3, 5):
        grads = [mx.nd.array(trajectories['input:adam_default:grad%d_%d' % (i, k)])
                 for i in range(2)]
        updater([0, 1], grads, weights)
    for i in range(2):
        assert_ulps(weights[i].asnumpy(), resume['resume:w%d_after' % i], 'w%d' % i, 0)


def test_mxmod_pickle_round_trip_keeps_classes():
    opt = mx.optimizer.SGD(momentum=0.9, lr_scheduler=mx.lr_scheduler.FactorScheduler(2),
                           param_idx2name={0: 'a_weight'})
    updater = mx.optimizer.get_updater(opt)
    weight = mx.nd.ones((2, 3))
    updater(0, mx.nd.ones((2, 3)), weight)
    clone = mx.optimizer.get_updater(mx.optimizer.Test())
    clone.set_states(updater.get_states(dump_optimizer=True))
    assert type(clone.optimizer) is mx.optimizer.SGD
    assert clone.optimizer.wd_mult == {} and clone.optimizer.num_update == 1
    assert type(clone.optimizer.lr_scheduler) is mx.lr_scheduler.FactorScheduler
    np.testing.assert_array_equal(clone.states[0].asnumpy(), updater.states[0].asnumpy())
    raw = updater.get_states()
    assert b'mxnet.ndarray.ndarray' in raw and b'mxmod' not in raw


_ORACLE_SCRIPT = r'''
import json, pickle, sys, warnings
warnings.simplefilter('ignore')
import mxnet as mx
blob = open(sys.argv[1], 'rb').read()
states, opt = pickle.loads(blob)
upd = mx.optimizer.get_updater(opt)
upd.set_states(blob)
w = mx.nd.array([[1.0, 2.0, 3.0]], dtype='float16')
upd(0, mx.nd.array([[0.5, -0.5, 1.0]], dtype='float16'), w)
print(json.dumps({'class': [type(opt).__module__, type(opt).__name__],
                  'scheduler': type(opt.lr_scheduler).__name__, 'momentum': opt.momentum,
                  'counts': sorted(opt._index_update_count.items()),
                  'mom': states[0][0].asnumpy().tolist(), 'master': states[0][1].dtype.__name__,
                  'weight': w.asnumpy().tolist()}))
'''


@pytest.mark.skipif(not oracle_available(), reason='MXNet oracle not installed')
def test_mxnet_loads_mxmod_pickle(tmp_path):
    opt = mx.optimizer.SGD(momentum=0.9, multi_precision=True, learning_rate=0.5,
                           lr_scheduler=mx.lr_scheduler.FactorScheduler(1, factor=0.5,
                                                                        base_lr=0.5))
    updater = mx.optimizer.get_updater(opt)
    weight = mx.nd.array([[1.0, 2.0, 3.0]], dtype='float16')
    grad = mx.nd.array([[0.5, -0.5, 1.0]], dtype='float16')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        updater(0, grad, weight)
    path = tmp_path / 'mxmod.states'
    path.write_bytes(updater.get_states(dump_optimizer=True))
    out = subprocess.run([ORACLE_PYTHON, '-c', _ORACLE_SCRIPT, str(path)], check=True,
                         capture_output=True, text=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got['class'] == ['mxnet.optimizer.optimizer', 'SGD']
    assert got['scheduler'] == 'FactorScheduler' and got['momentum'] == 0.9
    assert got['counts'] == [[0, 1]] and got['master'] == 'float32'
    np.testing.assert_array_equal(np.float32(got['mom']), updater.states[0][0].asnumpy())
    updater(0, grad, weight)       # the same second step in mxmod
    np.testing.assert_array_equal(np.float16(got['weight']), weight.asnumpy())
