"""Run MXNet's own example/image-classification/train_mnist.py and train_cifar10.py, unchanged, on
the local synthetic data sets (bench/make_local_datasets.py), with mxmod (through an ``import
mxnet`` alias) and with MXNet 1.9.1, and print each run's final validation accuracy, samples/s
and wall time.

    python bench/run_mxnet_examples.py [--examples DIR] [--impls mxmod,mxnet] [--quick]

The example folder is copied to a work directory whose data/ holds the files the scripts would
download (cifar10_train.rec / cifar10_val.rec from cifar10.zip, the MNIST .gz files), so the
scripts find them and skip the download. Arguments (epochs, network) go on the command line, as
a user would give them; the scripts' text is not changed. train_mnist.py reads its data with
``np.fromstring`` (removed in numpy 2), so it needs mxmod on numpy < 2 (``--mxmod-python``)."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MXNET_PY = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')

ALIAS = r'''
import runpy, sys
sys.path.insert(0, %r)
from mxnet_alias import install
install()
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, '.')
runpy.run_path(script, run_name='__main__')
''' % os.path.join(ROOT, 'bench')

RUNS = {
    'train_mnist.py': ['--network', 'mlp', '--num-epochs', '2'],
    'train_cifar10.py': ['--network', 'resnet', '--num-layers', '8', '--num-epochs', '2',
                         '--batch-size', '128', '--disp-batches', '10'],
}


def prepare(examples, cache, work):
    """Copy the examples to ``work`` and lay the data files where the scripts look."""
    shutil.copytree(examples, work)
    data = os.path.join(work, 'data')
    os.makedirs(data, exist_ok=True)
    for name in ('train-labels-idx1-ubyte.gz', 'train-images-idx3-ubyte.gz',
                 't10k-labels-idx1-ubyte.gz', 't10k-images-idx3-ubyte.gz'):
        shutil.copy(os.path.join(cache, name), data)
    with zipfile.ZipFile(os.path.join(cache, 'cifar10.zip')) as archive:
        for src, dst in (('cifar/train.rec', 'cifar10_train.rec'),
                         ('cifar/test.rec', 'cifar10_val.rec')):
            with archive.open(src) as fin, open(os.path.join(data, dst), 'wb') as fout:
                shutil.copyfileobj(fin, fout)


def run(impl, script, args, work, timeout, mxmod_python=sys.executable):
    """Run one example; return (validation accuracy, median samples/s, seconds, log tail)."""
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    if impl == 'mxmod':
        env['PYTHONPATH'] = ROOT
        cmd = [mxmod_python, '-c', ALIAS, script] + args
    else:
        cmd = [MXNET_PY, script] + args
    start = time.time()
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                          timeout=timeout)
    seconds = time.time() - start
    log = proc.stdout + proc.stderr
    accs = re.findall(r'Validation-accuracy=([0-9.]+)', log)
    speeds = sorted(float(s) for s in re.findall(r'Speed: ([0-9.]+) samples/sec', log))
    speed = speeds[len(speeds) // 2] if speeds else float('nan')
    return (float(accs[-1]) if accs else float('nan')), speed, seconds, proc.returncode, log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--examples', default='/work/mxnet-src/example/image-classification')
    ap.add_argument('--cache', default=os.path.expanduser(os.environ.get('MXNET_HOME',
                                                                          '~/.mxnet')))
    ap.add_argument('--impls', default='mxmod,mxnet')
    ap.add_argument('--scripts', default=','.join(RUNS))
    ap.add_argument('--timeout', type=int, default=3000)
    ap.add_argument('--mxmod-python', default=sys.executable,
                    help='interpreter for mxmod (train_mnist.py calls np.fromstring, which '
                         'numpy 2 removed: use one with numpy 1.23-1.26)')
    args = ap.parse_args()
    for impl in args.impls.split(','):
        if impl == 'mxnet' and not os.path.exists(MXNET_PY):
            print('no MXNet at %s: skipped' % MXNET_PY)
            continue
        for script in args.scripts.split(','):
            work = os.path.join(tempfile.mkdtemp(prefix='mxnet_example_'), 'ic')
            prepare(args.examples, args.cache, work)
            acc, speed, seconds, code, log = run(impl, script, RUNS[script], work, args.timeout,
                                                  args.mxmod_python)
            print('%-6s %-17s exit %d  validation accuracy %.4f  median %.0f samples/s  %.0f s'
                  % (impl, script, code, acc, speed, seconds), flush=True)
            if code:
                print(log[-3000:])


if __name__ == '__main__':
    main()
