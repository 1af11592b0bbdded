"""Run MXNet 1.9.1's example/stochastic-depth/sd_mnist.py, example/nce-loss/wordvec.py and
example/image-classification/train_cifar10.py, unchanged, on locally generated data, with mxmod
(through an ``import mxnet`` alias) and with MXNet 1.9.1, each with several seeds, and print each
run's final metric and wall time side by side.

    python bench/run_more_mxnet_examples.py [--programs sd_mnist,wordvec,train_cifar10]
        [--impls mxmod,mxnet] [--seeds 1,2] [--mirror GITDIR | --examples DIR]
        [--cache DIR] [--mxmod-python PY]

The example folders come from the MXNet repository (branch v1.9.x; ``--mirror`` is its git
directory) or ``--examples`` (a copy of its example/ folder); each run gets a fresh copy in a work
directory whose data/ holds what the program would download: the MNIST files of
bench/make_local_datasets.py (full size: 6,000 images do not train sd_mnist's network in its two
epochs, in MXNet either), its --small CIFAR-10 .rec files, and a text8 stand-in (200,000 words).
A seed is set before the program starts (``random``, ``numpy.random``, ``mx.random``), for both
implementations alike; the programs' own text and arguments are MXNet's (wordvec.py runs its 20
epochs; sd_mnist.py its 2; train_cifar10.py gets ``--num-epochs 2`` and a ResNet-8 as in
run_mxnet_examples.py). ``--mxmod-python`` runs mxmod under another interpreter, e.g. a venv
made by ``pip install .`` alone (to show that its default dependencies decode JPEG)."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from run_mxnet_examples import ALIAS, MXNET_PY  # noqa: E402

SEED = r'''
import random, runpy, sys
seed = int(sys.argv.pop(1))
random.seed(seed)
import numpy
numpy.random.seed(seed)
import mxnet
mxnet.random.seed(seed)
'''
# mxmod: the alias first, then the seeds, then ALIAS's runpy of the script
MXMOD_PRELUDE = ALIAS.replace('script = sys.argv[1]', SEED + 'script = sys.argv[1]')
MXNET_PRELUDE = SEED + "sys.path.insert(0, '.')\nsys.argv = sys.argv[1:]\n" \
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"

PROGRAMS = {
    'sd_mnist': {'folder': 'stochastic-depth', 'script': 'sd_mnist.py', 'args': [],
                 'metric': r'Validation-accuracy=([0-9.]+)', 'label': 'validation accuracy'},
    'wordvec': {'folder': 'nce-loss', 'script': 'wordvec.py', 'args': [],
                'metric': r'Train-nce-auc=([0-9.]+)', 'label': 'train NCE AUC'},
    'train_cifar10': {'folder': 'image-classification', 'script': 'train_cifar10.py',
                      'args': ['--network', 'resnet', '--num-layers', '8', '--num-epochs', '2',
                               '--batch-size', '128', '--disp-batches', '10'],
                      'metric': r'Validation-accuracy=([0-9.]+)',
                      'label': 'validation accuracy'},
}


def examples_from_mirror(mirror, dest):
    """Extract example/{stochastic-depth,nce-loss,image-classification} of v1.9.x to ``dest``."""
    folders = ['example/' + p['folder'] for p in PROGRAMS.values()]
    archive = subprocess.run(['git', '--git-dir', mirror, 'archive', 'v1.9.x'] + folders,
                             check=True, capture_output=True, timeout=300).stdout
    with tempfile.TemporaryFile() as handle:
        handle.write(archive)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(dest)
    return os.path.join(dest, 'example')


def ensure_data(cache, python, programs):
    """Generate what ``programs`` need and ``cache`` lacks: cache/full (MNIST 60,000),
    cache/small (CIFAR --small), cache/text8."""
    maker = os.path.join(HERE, 'make_local_datasets.py')
    os.makedirs(cache, exist_ok=True)
    for sub, extra, user in (('full', [], 'sd_mnist'), ('small', ['--small'], 'train_cifar10')):
        folder = os.path.join(cache, sub)
        if user in programs and not os.path.exists(os.path.join(folder, 'cifar10.zip')):
            subprocess.run([python, maker, '--dir', folder] + extra, check=True, timeout=1800)
    text8 = os.path.join(cache, 'text8')
    if 'wordvec' in programs and not os.path.exists(text8):
        subprocess.run([python, maker, '--text8', text8], check=True, timeout=600)


def prepare(program, examples, cache, work):
    """A fresh copy of the program's folder with its data/ laid out; returns its path."""
    spec = PROGRAMS[program]
    folder = os.path.join(work, spec['folder'])
    shutil.copytree(os.path.join(examples, spec['folder']), folder)
    data = os.path.join(folder, 'data')
    os.makedirs(data, exist_ok=True)
    if program == 'sd_mnist':
        with zipfile.ZipFile(os.path.join(cache, 'full', 'mnist.zip')) as archive:
            archive.extractall(data)
    elif program == 'wordvec':
        shutil.copy(os.path.join(cache, 'text8'), os.path.join(data, 'text8'))
    else:
        with zipfile.ZipFile(os.path.join(cache, 'small', 'cifar10.zip')) as archive:
            for src, dst in (('cifar/train.rec', 'cifar10_train.rec'),
                             ('cifar/test.rec', 'cifar10_val.rec')):
                with archive.open(src) as fin, open(os.path.join(data, dst), 'wb') as fout:
                    shutil.copyfileobj(fin, fout)
    return folder


def run(impl, program, folder, seed, timeout, mxmod_python):
    """Run one program; returns (metric values in order, seconds, exit code, log)."""
    spec = PROGRAMS[program]
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1')
    if impl == 'mxmod':
        env['PYTHONPATH'] = ROOT
        cmd = [mxmod_python, '-c', MXMOD_PRELUDE, str(seed), spec['script']] + spec['args']
    else:
        cmd = [MXNET_PY, '-c', MXNET_PRELUDE, str(seed), spec['script']] + spec['args']
    start = time.time()
    proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=timeout)
    seconds = time.time() - start
    log = proc.stdout + proc.stderr
    values = [float(v) for v in re.findall(spec['metric'], log)]
    return values, seconds, proc.returncode, log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--programs', default=','.join(PROGRAMS))
    ap.add_argument('--impls', default='mxmod,mxnet')
    ap.add_argument('--seeds', default='1,2')
    ap.add_argument('--mirror', default='/work/.mirror/apache+mxnet/repo')
    ap.add_argument('--examples', help="MXNet's example/ folder (instead of --mirror)")
    ap.add_argument('--cache', default=os.path.join(tempfile.gettempdir(), 'mxmod-example-data'))
    ap.add_argument('--mxmod-python', default=sys.executable)
    ap.add_argument('--timeout', type=int, default=3000)
    args = ap.parse_args()
    top = tempfile.mkdtemp(prefix='mxnet_examples_')
    examples = args.examples or examples_from_mirror(args.mirror, top)
    programs = args.programs.split(',')
    ensure_data(args.cache, sys.executable, programs)
    for program in programs:
        for seed in [int(s) for s in args.seeds.split(',')]:
            for impl in args.impls.split(','):
                if impl == 'mxnet' and not os.path.exists(MXNET_PY):
                    print('no MXNet at %s: skipped' % MXNET_PY)
                    continue
                work = tempfile.mkdtemp(dir=top)
                folder = prepare(program, examples, args.cache, work)
                values, seconds, code, log = run(impl, program, folder, seed, args.timeout,
                                                 args.mxmod_python)
                tail = values[-5:]
                print('%-13s %-6s seed %d  exit %d  %s: last %s, mean of last %d %s  %.0f s'
                      % (program, impl, seed, code, PROGRAMS[program]['label'],
                         '%.4f' % values[-1] if values else 'none', len(tail),
                         '%.4f' % (sum(tail) / len(tail)) if tail else '-', seconds),
                      flush=True)
                if code:
                    print(log[-3000:])
                shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(top, ignore_errors=True)


if __name__ == '__main__':
    main()
