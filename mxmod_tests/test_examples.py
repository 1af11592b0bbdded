"""The examples run as a user would run them (short settings) and reach their targets."""
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')


def _run(script, *args, timeout=300):
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    env['PYTHONPATH'] = ROOT + os.pathsep + env.get('PYTHONPATH', '')
    return subprocess.run([sys.executable, os.path.join(ROOT, 'examples', script)] + list(args),
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


def test_train_mlp_converges_and_reloads(tmp_path):
    proc = _run('train_mlp.py', '--epochs', '12', '--contexts', '2', '--prefix', str(tmp_path / 'spirals'))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert 'validation accuracy of the reloaded checkpoint' in proc.stderr
    assert (tmp_path / 'spirals-symbol.json').exists() and (tmp_path / 'spirals-0012.params').exists()
    with open(tmp_path / 'spirals-history.csv') as src:
        assert len(src.read().splitlines()) == 13           # a header and 12 epochs
