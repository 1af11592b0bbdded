"""mx.contrib.svrg_optimization against MXNet 1.9.1: the same training runs
(svrg_scenarios.py: no kvstore, a local kvstore by name and as an object, two devices, fit with
momentum) reach MXNet's parameters and metrics (fixtures/svrg_mxnet.json, written by that
script on MXNet); the optimizers' routing and the argument checks."""
import json
import os

import numpy as np
import pytest

import mxmod as mx
from mxmod.contrib.svrg_optimization.svrg_module import SVRGModule
from mxmod.contrib.svrg_optimization.svrg_optimizer import _SVRGOptimizer
from mxmod_tests.contrib import svrg_scenarios

with open(svrg_scenarios.FIXTURE) as _src:
    MXNET = json.load(_src)['results']


@pytest.fixture(scope='module')
def results():
    return svrg_scenarios.scenarios(mx, SVRGModule)


@pytest.mark.parametrize('name', sorted(MXNET))
def test_training_reaches_mxnets_parameters(results, name):
    got, want = results[name], MXNET[name]
    for param, value in want['params'].items():
        np.testing.assert_allclose(got['params'][param], value, rtol=2e-5, atol=1e-6,
                                   err_msg='%s %s' % (name, param))
    np.testing.assert_allclose(got['mse'], want['mse'], rtol=2e-5, err_msg=name)
    if 'batches' in want:
        assert [list(b) for b in got['batches']] == want['batches']


def test_import_paths_as_mxnet():
    from mxmod.contrib import svrg_optimization  # noqa: F401  pylint: disable=import-outside-toplevel
    assert mx.contrib.svrg_optimization.svrg_module.SVRGModule is SVRGModule
    assert isinstance(mx.optimizer.create('_svrgoptimizer', default_optimizer='sgd',
                                          param_idx2name={0: 'w'}), _SVRGOptimizer)


def test_optimizer_routes_full_keys_to_assignment():
    opt = mx.optimizer.create('_SVRGOptimizer', default_optimizer='sgd', learning_rate=0.5,
                              momentum=0.9, param_idx2name={0: 'w', 1: 'w_full'})
    assert opt.default_opt.momentum == 0.9 and opt.lr == 0.5
    weight, grad = mx.nd.array([1., 2.]), mx.nd.array([4., 6.])
    opt.update(1, weight, grad, opt.create_state(1, weight))
    np.testing.assert_array_equal(weight.asnumpy(), [4., 6.])       # assigned
    opt.update('w_full', weight, mx.nd.array([1., 1.]), None)      # a key given by name
    np.testing.assert_array_equal(weight.asnumpy(), [1., 1.])
    state = opt.create_state(0, weight)
    opt.update(0, weight, mx.nd.array([2., 2.]), state)             # momentum SGD
    np.testing.assert_allclose(weight.asnumpy(), [0., 0.])
    with pytest.raises(KeyError, match='param_idx2name'):
        opt.update(7, weight, grad, None)


@pytest.mark.parametrize('freq,error', [(None, TypeError), (1.5, TypeError), (True, TypeError),
                                        (0, ValueError), (-2, ValueError)])
def test_update_freq_checked(freq, error):
    net = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(mx.sym.Variable('data'),
                                                              num_hidden=1), name='lro')
    with pytest.raises(error, match='update_freq'):
        SVRGModule(net, label_names=['lro_label'], update_freq=freq)
