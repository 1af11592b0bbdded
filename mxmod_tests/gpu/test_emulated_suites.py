"""Whole operator suites on an emulated GPU: MXNet's frozen nn results replayed on gpu(1), and
every opcheck-based operator test (forward against numpy, backward against central differences)
run again with the operators on gpu(0)."""
import os
import subprocess
import sys

import pytest

import mxmod as mx
from ..ops import nn_oracle

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize('name', nn_oracle.case_names(set(c['op'] for c in nn_oracle.META['cases'].values())))
def test_mxnet_nn_cases_on_gpu(gpus, name):
    nn_oracle.run_case(name, ctx=mx.gpu(1))


def test_operator_suite_under_gpu_emulation():
    env = dict(os.environ, MXMOD_TEST_DEVICE='emulated-gpu', OMP_NUM_THREADS='1')
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-x', '-p', 'no:cacheprovider',
                           os.path.join('mxmod_tests', 'ops')], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    assert ' passed' in proc.stdout and 'failed' not in proc.stdout.splitlines()[-1]
