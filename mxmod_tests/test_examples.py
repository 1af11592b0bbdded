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


def test_train_ctr_learns_the_hidden_model(tmp_path):
    """One process, small tables: the held-out AUC rises well above chance and checkpoints are
    written."""
    import json
    out = str(tmp_path / 'ctr.json')
    proc = _run('train_ctr.py', '--samples', '16384', '--eval-samples', '4096',
                '--rows-per-field', '2000', '--epochs', '2', '--prefix', str(tmp_path / 'ctr'),
                '--out', out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out) as fin:
        epochs = json.load(fin)['epochs']
    assert epochs[-1]['auc'] > 0.7, epochs
    assert (tmp_path / 'ctr-0002.params').exists()


def test_train_ctr_distributed_with_cache(tmp_path):
    """2 workers + 1 server, LFU cache with bound 10: it trains to a useful AUC and the rows that
    cross the network are fewer than the rows the steps ask for."""
    import json
    from mxmod_tests.kvstore.dist_scripts.runner import MPIEXEC, require_mpi
    require_mpi()
    out = str(tmp_path / 'ctr.json')
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    env['PYTHONPATH'] = ROOT + os.pathsep + env.get('PYTHONPATH', '')
    proc = subprocess.run([sys.executable, '-m', 'mxmod.launch', '-n', '2', '-s', '1', 'python',
                           os.path.join(ROOT, 'examples', 'train_ctr.py'), '--kvstore',
                           'dist_sync', '--samples', '16384', '--eval-samples', '4096',
                           '--rows-per-field', '2000', '--epochs', '2', '--cache', 'lfu:0.1:10',
                           '--prefix', str(tmp_path / 'ctr'), '--out', out],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert os.path.exists(MPIEXEC)
    with open(out) as fin:
        last = json.load(fin)['epochs'][-1]
    assert last['auc'] > 0.7, last
    assert last['cache_hits'] > 0 and last['data_rate'] < 0.5, last
