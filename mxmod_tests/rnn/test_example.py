"""examples/lstm_bucketing.py runs as a user would run it (short settings): perplexity falls, the
unpacked checkpoint is written and reloads."""
import os
import re
import subprocess
import sys

import pytest

import mxmod as mx

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')


def run_example(*args):
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    env['PYTHONPATH'] = ROOT + os.pathsep + env.get('PYTHONPATH', '')
    return subprocess.run([sys.executable, os.path.join(ROOT, 'examples', 'lstm_bucketing.py')]
                          + list(args), capture_output=True, text=True, timeout=300, env=env,
                          cwd=ROOT)


@pytest.mark.parametrize('extra', [[], ['--fused']], ids=['cells', 'fused'])
def test_lstm_bucketing_example(tmp_path, extra):
    prefix = str(tmp_path / 'lm')
    proc = run_example('--epochs', '3', '--sentences', '1000', '--prefix', prefix, *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.search(r'validation perplexity per epoch: ([\d., ]+); reloaded checkpoint: ([\d.]+)',
                      proc.stderr)
    assert found, proc.stderr[-3000:]
    history = [float(v) for v in found.group(1).split(',')]
    assert history[-1] < 0.8 * history[0] and float(found.group(2)) < 0.8 * history[0]
    saved = mx.nd.load(prefix + '-0003.params')
    assert 'arg:lstm_l0_i2h_f_weight' in saved and 'arg:lstm_l0_i2h_weight' not in saved
