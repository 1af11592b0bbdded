"""MXNet 1.9.1 still loads everything mxmod's whole checkpoints write (symbol, parameters and
optimizer states, with local and kvstore updaters): the manifest is an extra file it ignores."""
import json
import os
import subprocess

import numpy as np
import pytest

from mxmod_tests.conftest import ORACLE_PYTHON, oracle_available
from mxmod_tests.hardening.common import trained_module, cpus
from mxmod_tests.hardening.oracle_load import states_of as _states_of

pytestmark = [pytest.mark.oracle,
              pytest.mark.skipif(not oracle_available(), reason='no MXNet 1.9.1 oracle venv')]
CASES = [(1, 'sgd', {'learning_rate': 0.1, 'momentum': 0.9}),
         (2, 'adam', {'learning_rate': 0.01}),
         (1, 'rmsprop', {'learning_rate': 0.01})]


def test_mxnet_loads_mxmod_checkpoints(tmp_path):
    specs, expected = [], []
    for case, (ndev, optimizer, params) in enumerate(CASES):
        mod = trained_module(context=cpus(ndev), optimizer=optimizer, optimizer_params=params,
                             steps=3)
        prefix = str(tmp_path / ('case%d' % case))
        mod.save_checkpoint(prefix, 3, save_optimizer_states=True)
        assert os.path.exists(prefix + '-0003.manifest.json')
        specs.append({'prefix': prefix, 'epoch': 3, 'ndev': ndev, 'optimizer': optimizer,
                      'data_shape': [10, 6]})
        expected.append(({k: v.asnumpy() for k, v in mod.get_params()[0].items()},
                         _states_of(mod)))
    spec_file, out_file = str(tmp_path / 'spec.json'), str(tmp_path / 'out.npz')
    with open(spec_file, 'w') as handle:
        json.dump(specs, handle)
    script = os.path.join(os.path.dirname(__file__), 'oracle_load.py')
    run = subprocess.run([ORACLE_PYTHON, script, spec_file, out_file], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    got = np.load(out_file)
    for case, (params, states) in enumerate(expected):
        for name, value in params.items():
            np.testing.assert_array_equal(got['%d:param:%s' % (case, name)], value)
        mxnet_states = sorted(k.split(':', 2)[2] for k in got.files
                              if k.startswith('%d:state:' % case))
        assert mxnet_states == sorted(states)
        for key, value in states.items():
            np.testing.assert_array_equal(got['%d:state:%s' % (case, key)], value)
