"""A second third-party library on mxmod: Sockeye 1.18 (neural machine translation on MXNet's
Module API) trains each configuration of bench/sockeye_mxnet/harness.py within MXNet 1.9.1's
seed-to-seed spread (recorded in bench/sockeye_mxnet/fixtures by ``harness.py --record``), and
mxmod translates with MXNet's trained model exactly as MXNet does.

Needs Sockeye installed into a folder (``harness.py --setup``; ``SOCKEYE_SITE``, default
/tmp/sockeye_site); slow (about five minutes), so CI skips it."""
import os
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, 'bench', 'sockeye_mxnet', 'harness.py')
FIXTURE = os.path.join(ROOT, 'bench', 'sockeye_mxnet', 'fixtures', 'mxnet_1.9.1_results.json')
SITE = os.environ.get('SOCKEYE_SITE', os.path.join(tempfile.gettempdir(), 'sockeye_site'))

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not os.path.isdir(os.path.join(SITE, 'sockeye')),
    reason='Sockeye is not installed in %s (bench/sockeye_mxnet/harness.py --setup)' % SITE)]


def test_sockeye_trains_and_translates_as_on_mxnet(tmp_path):
    proc = subprocess.run([sys.executable, HARNESS, '--site', SITE, '--fixture', FIXTURE,
                           '--workdir', str(tmp_path)],
                          capture_output=True, text=True, timeout=3600, cwd=ROOT)
    print(proc.stdout[-6000:], proc.stderr[-3000:])
    assert 'of 5 configurations match' in proc.stdout
    assert 'mxmod translates MXNet model: identical' in proc.stdout
    assert proc.returncode == 0, proc.stdout[-4000:]
