"""MXNet's example/sparse programs (v1.9.x), unchanged, on generated data: mxmod (through an
``import mxnet`` alias) against MXNet 1.9.1, one thread each; prints wall time and each run's
last reported figure.

    python bench/run_sparse_examples.py [--examples /work/mxnet-src/example/sparse]
                                        [--only linear_classification,...]

The data sets are generated locally in the layouts the programs read (no download): an
Avazu-like LibSVM file (1,000,001 features), MovieLens-10M-like ``user::movie::rating::time``
lines, Criteo-like LibSVM lines for the factorization machine (1,000,000 features), and
census-income (adult) CSV rows. Feature ids follow Zipf laws; labels come from hidden models, so
the reported losses and accuracies move as training goes on.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_mxnet_examples import ALIAS, MXNET_PY  # noqa: E402


def _libsvm(path, rows, features, per_row, seed, zipf=1.2, uniform_share=0.0):
    rs = np.random.RandomState(seed)
    weights = rs.randn(features) * 0.5
    with open(path, 'w') as out:
        for _ in range(rows):
            if rs.rand() < uniform_share:
                idx = rs.choice(features, per_row, replace=False)
            else:
                idx = rs.zipf(zipf, per_row) % features
            idx = np.unique(idx)
            prob = 1 / (1 + np.exp(-weights[idx].sum()))
            out.write('%d %s\n' % (rs.rand() < prob, ' '.join('%d:1' % j for j in idx)))


def _movielens(folder, seed=0):
    rs = np.random.RandomState(seed)
    users, movies = rs.randn(71569, 4), rs.randn(65134, 4)
    os.makedirs(folder, exist_ok=True)
    for name, rows in (('r1.train', 100000), ('r1.test', 10000)):
        with open(os.path.join(folder, name), 'w') as out:
            for u, m in zip(rs.zipf(1.2, rows) % 71569, rs.zipf(1.2, rows) % 65134):
                score = float(np.clip(np.round(3 + 0.5 * users[u] @ movies[m]), 1, 5))
                out.write('%d::%d::%.1f::978300760\n' % (u, m, score))


ADULT = {'gender': ['Female', 'Male'],
         'education': ['Bachelors', 'HS-grad', '11th', 'Masters', '9th', 'Some-college',
                       'Assoc-acdm', 'Doctorate', 'Prof-school', '12th'],
         'marital_status': ['Married-civ-spouse', 'Divorced', 'Never-married', 'Widowed'],
         'relationship': ['Husband', 'Not-in-family', 'Wife', 'Own-child', 'Unmarried'],
         'workclass': ['Self-emp-not-inc', 'Private', 'State-gov', 'Federal-gov', '?'],
         'occupation': ['Tech-support', 'Craft-repair', 'Sales', 'Exec-managerial'],
         'race': ['White', 'Black'], 'native_country': ['United-States', 'Mexico', 'India']}


def _adult(folder, seed=0):
    rs = np.random.RandomState(seed)
    pick = lambda key: ADULT[key][rs.randint(len(ADULT[key]))]  # noqa: E731

    def row():
        age, edu, gender = rs.randint(17, 80), pick('education'), pick('gender')
        score = (age - 40) / 20 + 1.2 * (edu in ('Bachelors', 'Masters', 'Doctorate')) \
            + 0.5 * (gender == 'Male') + rs.randn()
        return ', '.join(str(v) for v in (
            age, pick('workclass'), rs.randint(10000, 400000), edu, rs.randint(1, 16),
            pick('marital_status'), pick('occupation'), pick('relationship'), pick('race'),
            gender, rs.randint(0, 5000), rs.randint(0, 2000), rs.randint(10, 80),
            pick('native_country'), '>50K' if score > 1 else '<=50K'))
    os.makedirs(folder, exist_ok=True)
    for name, rows in (('adult.data', 8000), ('adult.test', 2000)):
        with open(os.path.join(folder, name), 'w') as out:
            out.write('\n'.join(row() for _ in range(rows)) + '\n')


def _prepare(name, work):
    if name == 'linear_classification':
        os.makedirs(os.path.join(work, 'data'), exist_ok=True)
        _libsvm(os.path.join(work, 'data', 'avazu-app'), 20000, 1000001, 15, 0, 1.3, 0.3)
        _libsvm(os.path.join(work, 'data', 'avazu-app.t'), 4000, 1000001, 15, 1, 1.3, 0.3)
        return ['--num-epoch', '2', '--batch-size', '512'], r'eval nll = ([0-9.]+)'
    if name == 'matrix_factorization':
        _movielens(os.path.join(work, 'data', 'ml-10M100K'))
        return ['--num-epoch', '1'], r'eval MSE = ([0-9.]+)'
    if name == 'factorization_machine':
        _libsvm(os.path.join(work, 'train.t'), 20000, 1000000, 20, 2)
        _libsvm(os.path.join(work, 'test.t'), 4000, 1000000, 20, 3)
        return (['--data-train', 'train.t', '--data-test', 'test.t', '--num-epoch', '2'],
                r'eval log loss = ([0-9.]+)')
    if name == 'wide_deep':
        _adult(os.path.join(work, 'data'))
        return ['--num-epoch', '2'], r'accuracy = ([0-9.]+)'
    raise SystemExit('unknown example %r' % name)


def _run(impl, work, args, pattern):
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1',
               PYTHONPATH=os.path.dirname(HERE))
    if impl == 'mxmod':
        cmd = [sys.executable, '-c', ALIAS, 'train.py'] + args
    else:
        cmd = [MXNET_PY, 'train.py'] + args
    tic = time.perf_counter()
    out = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - tic
    if out.returncode:
        raise RuntimeError('%s failed in %s:\n%s' % (impl, work, out.stderr[-3000:]))
    figures = re.findall(pattern, out.stdout + out.stderr)
    return wall, figures[-1] if figures else '?'


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--examples', default='/work/mxnet-src/example/sparse')
    parser.add_argument('--only', default='linear_classification,matrix_factorization,'
                                          'factorization_machine,wide_deep')
    args = parser.parse_args()
    impls = ['mxmod'] + (['mxnet'] if os.path.exists(MXNET_PY) else [])
    print('%-24s %-6s %9s  %s' % ('example', 'impl', 'wall s', 'last reported figure'))
    for name in args.only.split(','):
        for impl in impls:
            work = os.path.join(tempfile.mkdtemp(prefix='sparse_example_'), name)
            shutil.copytree(os.path.join(args.examples, name), work)
            run_args, pattern = _prepare(name, work)
            wall, figure = _run(impl, work, run_args, pattern)
            print('%-24s %-6s %9.2f  %s' % (name, impl, wall, figure))


if __name__ == '__main__':
    main()
