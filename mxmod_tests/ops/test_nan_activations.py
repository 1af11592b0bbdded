"""relu in all its forms (Activation, mx.nd.relu, LeakyReLU's kinds, BatchNorm + relu fused,
the RNN operator, the compiled gradient kernels) and clip, at NaN and infinities, forward and
gradient, against MXNet 1.9.1 (fixtures/nan_activation_mxnet.json, written by
fixtures/make_nan_activation_fixture.py; a live run when the oracle venv is present)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mxmod as mx
from mxmod.ops import jit
from mxmod_tests.conftest import ORACLE_PYTHON, oracle_available
from mxmod_tests.ops import nan_activation_cases as cases

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, 'fixtures', 'nan_activation_mxnet.json')) as _handle:
    RECORDED = json.load(_handle)['cases']


def _compare(name, got, want):
    assert set(got) == set(want), name
    for key in want:
        assert got[key] != 'not periodic' and want[key] != 'not periodic', (name, key)
        # NaN and the infinities where MXNet has them; finite values to float32 rounding
        # (MXNet keeps its constants in float32 also for float64 data)
        np.testing.assert_allclose(cases.decode(got[key]), cases.decode(want[key]), rtol=2e-6,
                                   atol=1e-7, err_msg='%s %s' % (name, key))


@pytest.mark.parametrize('name', sorted(RECORDED))
def test_matches_mxnet_record(name):
    spec = cases._cases(mx)[name]
    _compare(name, cases.run_one(mx, *spec), RECORDED[name])


def test_the_record_has_the_mkldnn_split():
    """The record itself shows the rule the tests hold mxmod to (a record of all-NaN or all-zero
    values would pass vacuously)."""
    assert RECORDED['relu_4d']['fwd'][0] == 0.0 and RECORDED['relu_4d']['grad'][0] == 0.0
    assert RECORDED['relu_6d']['fwd'][0] == 'nan' and RECORDED['relu_6d']['grad'][0] == 'nan'
    assert RECORDED['relu_float64']['fwd'][0] == 'nan'
    assert RECORDED['sym_relu_float32']['fwd'][0] == 'nan'
    assert RECORDED['leaky_2d']['grad'][0] == 1.0
    assert RECORDED['leaky_6d']['grad'][0] == pytest.approx(0.1)
    assert RECORDED['elu_1d']['grad'][0] == 1.0 and RECORDED['elu_float64']['grad'][0] == 'nan'
    assert RECORDED['rnn_relu_float64']['fwd'][0] == 0.0
    assert RECORDED['clip_float32']['grad'][0] == 1.0


@pytest.mark.parametrize('kernels', [True, False])
def test_compiled_and_numpy_relu_gradients_agree(monkeypatch, kernels):
    """The large cases run the compiled relu gradient (act_kernels) or numpy's, same values."""
    if kernels and not jit.enabled():
        pytest.skip('numba is not in use')
    monkeypatch.setattr(jit, '_STATE', dict(jit._STATE, enabled=kernels))
    table = cases._cases(mx)
    for name in ('relu_large_float32', 'relu_large_float64', 'relu_large_6d', 'leaky_large'):
        _compare(name, cases.run_one(mx, *table[name]), RECORDED[name])


def _bn_relu_net():
    data = mx.sym.Variable('data')
    bn = mx.sym.BatchNorm(data, fix_gamma=False, name='bn')
    relu = mx.sym.Activation(bn, act_type='relu')   # read by a product: not fused elementwise
    return mx.sym.MakeLoss(mx.sym.sum(mx.sym.FullyConnected(relu, mx.sym.Variable('w'),
                                                            num_hidden=3, no_bias=True)))


@pytest.mark.parametrize('kernels_at_run_time', [True, False])
def test_fused_batchnorm_relu_gives_zero_for_nan_as_apart(monkeypatch, kernels_at_run_time):
    """A channel made NaN (a NaN in its batch) and one with an infinity: the fused BatchNorm +
    relu (executor/fusion.py) gives what the two operators give apart, which is MXNet's rule
    (0 for NaN in float32); the gradients are NaN in those channels in both."""
    rs = np.random.RandomState(3)
    x = rs.uniform(-1, 1, (8, 16, 4, 4)).astype(np.float32)
    x[2, 3, 1, 1] = np.nan
    x[5, 7, 0, 2] = np.inf
    w = rs.uniform(-1, 1, (3, x[0].size)).astype(np.float32)
    results = {}
    for fuse in ('1', '0'):
        monkeypatch.setenv('MXMOD_FUSE_BN_RELU', fuse)
        exe = _bn_relu_net().simple_bind(mx.cpu(), data=x.shape, w=w.shape)
        assert len(exe._fusion_pairs) == (1 if fuse == '1' and jit.enabled() else 0)
        monkeypatch.setattr(jit, '_STATE', dict(jit._STATE, enabled=kernels_at_run_time))
        exe.arg_dict['data'][:] = x
        exe.arg_dict['w'][:] = w
        exe.arg_dict['bn_gamma'][:] = 1
        exe.arg_dict['bn_beta'][:] = 0.1
        exe.forward(is_train=True)
        exe.backward()
        results[fuse] = {'out': exe.outputs[0].asnumpy(),
                         'd_data': exe.grad_dict['data'].asnumpy(),
                         'd_gamma': exe.grad_dict['bn_gamma'].asnumpy()}
    for key, value in results['0'].items():
        np.testing.assert_array_equal(results['1'][key], value, err_msg=key)
    assert np.isfinite(results['1']['out']).all()       # the NaN channels gave 0, not NaN
    d_data = results['1']['d_data']
    assert np.isnan(d_data[:, 3]).all() and np.isnan(d_data[:, 7]).all()
    assert np.isfinite(np.delete(d_data, [3, 7], axis=1)).all()


def test_ndarray_forms():
    """mx.nd.Activation follows the operator's rule; mx.nd.relu keeps NaN."""
    x = mx.nd.array(cases.PATTERN)
    np.testing.assert_array_equal(mx.nd.Activation(x, act_type='relu').asnumpy(),
                                  [0, 0, 0, 2, np.inf, 0, 3])
    np.testing.assert_array_equal(mx.nd.relu(x).asnumpy(), [np.nan, 0, 0, 2, np.inf, 0, 3])
    np.testing.assert_array_equal(
        mx.nd.Activation(x.astype('float64'), act_type='relu').asnumpy(),
        [np.nan, 0, 0, 2, np.inf, 0, 3])


@pytest.mark.oracle
@pytest.mark.skipif(not oracle_available(), reason='needs the MXNet 1.9.1 oracle venv')
def test_record_is_what_mxnet_gives_now(tmp_path):
    out = tmp_path / 'live.json'
    script = os.path.join(HERE, 'fixtures', 'make_nan_activation_fixture.py')
    subprocess.run([ORACLE_PYTHON, script, str(out)], check=True, timeout=300,
                   capture_output=True, env=dict(os.environ, OMP_NUM_THREADS='1'))
    live = json.loads(out.read_text())['cases']
    assert sorted(live) == sorted(RECORDED)
    for name, want in live.items():
        _compare(name, RECORDED[name], want)


if __name__ == '__main__':
    sys.exit(pytest.main([__file__, '-q']))
