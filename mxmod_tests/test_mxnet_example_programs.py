"""MXNet 1.9.1's own example programs, unchanged, on mxmod (bench/run_more_mxnet_examples.py:
generated data, one seed): they finish and reach accuracies near MXNet's (bench/NOTES.md,
"MXNet's example programs, unchanged": sd_mnist 0.99 validation accuracy, wordvec 0.89 train
NCE AUC on the generated corpus). Slow, and they need the MXNet repository (its example/ folder)
as a git directory."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIRROR = os.environ.get('MXNET_MIRROR', '/work/.mirror/apache+mxnet/repo')


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir(MIRROR), reason='needs a git directory of apache/mxnet')
@pytest.mark.parametrize('program, floor', [('wordvec', 0.85), ('sd_mnist', 0.95)])
def test_example_program_runs_on_mxmod(tmp_path, program, floor):
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, 'bench', 'run_more_mxnet_examples.py'),
         '--programs', program, '--impls', 'mxmod', '--seeds', '1', '--mirror', MIRROR,
         '--cache', str(tmp_path / 'data')],
        capture_output=True, text=True, timeout=1800, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    found = re.search(r'exit (\d+) .*: last ([0-9.]+)', proc.stdout)
    assert found, proc.stdout[-2000:]
    assert int(found.group(1)) == 0, proc.stdout[-3000:]
    assert float(found.group(2)) > floor, proc.stdout
