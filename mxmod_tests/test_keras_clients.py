"""A third-party library on mxmod: keras-mxnet 2.2.4.3 (Keras 2.2 with an MXNet backend) trains
every case of bench/keras_mxnet/cases.py within MXNet 1.9.1's seed-to-seed spread (recorded in
bench/keras_mxnet/mxnet_1.9.1_results.json by ``harness.py --record``), and mxmod's Module loads
the model MXNet exported through Keras.

Needs keras-mxnet in this interpreter (``harness.py --setup`` prints the install commands); slow
(about two minutes), so CI skips it."""
import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, 'bench', 'keras_mxnet', 'harness.py')
FIXTURE = os.path.join(ROOT, 'bench', 'keras_mxnet', 'mxnet_1.9.1_results.json')

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    importlib.util.find_spec('keras') is None or importlib.util.find_spec('h5py') is None,
    reason='keras-mxnet is not installed (bench/keras_mxnet/harness.py --setup)')]


def test_keras_mxnet_cases_match_mxnet():
    proc = subprocess.run([sys.executable, HARNESS, '--fixture', FIXTURE],
                          capture_output=True, text=True, timeout=1800, cwd=ROOT)
    print(proc.stdout[-6000:], proc.stderr[-3000:])
    assert 'of 19 cases match' in proc.stdout
    assert proc.returncode == 0, proc.stdout[-4000:]
