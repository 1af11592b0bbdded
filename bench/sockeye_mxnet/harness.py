"""A second third-party client on mxmod: Sockeye 1.18.106, Amazon's neural machine translation
toolkit written on MXNet's Module API (BucketingModule, its own training loop with gradient
clipping and update intervals, mx.rnn cells, custom metrics, a checkpoint decoder), trains and
translates as on MXNet 1.9.1.

On a generated task (reverse a sentence of 3-12 words over 30 words; 2000 training, 100 validation
and 50 test sentences), each configuration trains 200 updates per seed under each implementation.
mxmod's median best validation perplexity must lie in MXNet's seed-to-seed spread (its range
widened by half its width, at least 3%); updates per second are compared as a ratio. Then each
implementation translates (beam 5) the test set with the other's seed-0 model of the ``rnn``
configuration: translations must be identical to the ones the model's own implementation makes.

    python bench/sockeye_mxnet/harness.py --setup          # install commands (a --target dir)
    python bench/sockeye_mxnet/harness.py --site DIR [--configs a,b] [--seeds 0,1,2]
        [--fixture FILE | --mxnet-python PY] [--record FILE] [--out FILE]

``--record`` keeps MXNet's figures, its seed-0 ``rnn`` model and that model's translations in
``fixtures/`` (what ``--fixture`` and mxmod_tests/test_sockeye_client.py compare with)."""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(HERE, 'fixtures')
FIXTURE = os.path.join(FIXTURES, 'mxnet_1.9.1_results.json')
MXNET_PY = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')
PACKAGES = ['sockeye==1.18.106', 'portalocker==4.4.2', 'sacrebleu==1.3.6']
MODEL_FILES = ('config', 'params.best', 'vocab.src.0.json', 'vocab.trg.0.json', 'version')
REL_TOL = 0.03

COMMON = ('--batch-size 32 --batch-type sentence --checkpoint-frequency 100 --max-updates 200 '
          '--use-cpu --num-embed 32 --decode-and-evaluate 0').split()
CONFIGS = {
    'rnn': '--encoder rnn --decoder rnn --num-layers 1 --rnn-num-hidden 32',
    'rnn_coverage': '--encoder rnn --decoder rnn --num-layers 2 --rnn-num-hidden 32 '
                    '--rnn-cell-type gru --rnn-attention-type coverage '
                    '--rnn-attention-coverage-type gru --weight-tying '
                    '--weight-tying-type src_trg_softmax',
    'rnn_options': '--encoder rnn --decoder rnn --num-layers 1 --rnn-num-hidden 32 '
                   '--gradient-clipping-type norm --gradient-clipping-threshold 1 '
                   '--update-interval 2 --optimizer sgd --initial-learning-rate 0.1 '
                   '--learning-rate-scheduler-type fixed-rate-inv-sqrt-t --batch-type word '
                   '--batch-size 300 --label-smoothing 0.1 --layer-normalization',
    'transformer': '--encoder transformer --decoder transformer --num-layers 1 '
                   '--transformer-model-size 32 --transformer-attention-heads 4 '
                   '--transformer-feed-forward-num-hidden 64 --decode-and-evaluate 20',
    'cnn': '--encoder cnn --decoder cnn --num-layers 1 --cnn-num-hidden 32 '
           '--cnn-positional-embedding-type fixed',
}


def setup_commands(python, site):
    return ['%s -m pip install --target %s --no-deps %s' % (python, site, ' '.join(PACKAGES))]


def make_data(folder):
    """The reversal task's files (train/dev/test .src/.trg), the same on every call."""
    rs = random.Random(0)
    words = ['w%d' % i for i in range(30)]
    for name, count in (('train', 2000), ('dev', 100), ('test', 50)):
        with open(os.path.join(folder, name + '.src'), 'w') as src, \
                open(os.path.join(folder, name + '.trg'), 'w') as trg:
            for _ in range(count):
                sentence = [rs.choice(words) for _ in range(rs.randint(3, 12))]
                src.write(' '.join(sentence) + '\n')
                trg.write(' '.join(reversed(sentence)) + '\n')


def _run(impl, python, site, args, workdir, timeout=1200):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([site, ROOT]), OMP_NUM_THREADS='1',
               OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1')
    return subprocess.run([python, os.path.join(HERE, 'launch.py'), impl] + args,
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=workdir)


def train(impl, python, site, config, seed, workdir):
    """Figures of one training run (or {'error': ...})."""
    out = os.path.join(workdir, '%s_%s_%d' % (config, impl, seed))
    shutil.rmtree(out, ignore_errors=True)
    args = ['sockeye.train', '-s', 'train.src', '-t', 'train.trg', '-vs', 'dev.src',
            '-vt', 'dev.trg', '-o', out, '--seed', str(seed)] + COMMON + CONFIGS[config].split()
    proc = _run(impl, python, site, args, workdir)
    log = proc.stdout + proc.stderr
    best = re.findall(r'Best validation perplexity: ([0-9.]+)', log)
    if proc.returncode != 0 or not best:
        return {'error': log[-2000:]}
    rates = [float(r) for r in re.findall(r'Updates/sec=([0-9.]+)', log)]
    return {'val_ppl': float(best[-1]),
            'train_ppl': float(re.findall(r'Train-perplexity=([0-9.]+)', log)[-1]),
            'updates_per_s': statistics.median(rates[1:] or rates), 'model': out}


def translate(impl, python, site, model, workdir):
    """The test set's translations by ``impl`` with ``model`` (or an error text)."""
    out = os.path.join(workdir, 'translation_%s_%s.txt' % (impl, os.path.basename(model)))
    proc = _run(impl, python, site, ['sockeye.translate', '-m', model, '-i', 'test.src', '-o',
                                     out, '--use-cpu', '--beam-size', '5'], workdir)
    if proc.returncode != 0:
        return 'error: ' + (proc.stdout + proc.stderr)[-2000:]
    with open(out) as handle:
        return handle.read()


def spread(values):
    low, high = min(values), max(values)
    margin = max((high - low) / 2, REL_TOL * high)
    return low - margin, high + margin


def compare(reference, candidate):
    """Per configuration: (ok, problems, speed ratio)."""
    verdicts = {}
    for config, runs in candidate.items():
        errors = [r['error'] for r in runs.values() if 'error' in r]
        ref = [r for r in reference.get(config, {}).values() if 'error' not in r]
        if errors or not ref:
            verdicts[config] = (False, ['error: ' + errors[0][-600:]] if errors
                                else ['MXNet has no result'], None)
            continue
        low, high = spread([r['val_ppl'] for r in ref])
        got = statistics.median(r['val_ppl'] for r in runs.values())
        problems = [] if low <= got <= high else [
            'validation perplexity %.3f outside MXNet spread [%.3f, %.3f]' % (got, low, high)]
        ratio = statistics.median(r['updates_per_s'] for r in runs.values()) / \
            statistics.median(r['updates_per_s'] for r in ref)
        verdicts[config] = (not problems, problems, ratio)
    return verdicts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--setup', action='store_true', help='print the install commands')
    parser.add_argument('--site', default=os.path.join(tempfile.gettempdir(), 'sockeye_site'),
                        help='the folder Sockeye was installed into (pip --target)')
    parser.add_argument('--configs', default=','.join(CONFIGS))
    parser.add_argument('--seeds', default='0,1,2')
    parser.add_argument('--fixture', help="MXNet's recorded results instead of running MXNet")
    parser.add_argument('--mxnet-python', default=MXNET_PY)
    parser.add_argument('--record', help="write MXNet's results (and fixtures/) here")
    parser.add_argument('--out', help='write every figure here (JSON)')
    parser.add_argument('--workdir')
    args = parser.parse_args()
    if args.setup:
        print('\n'.join(setup_commands(sys.executable, args.site)))    # pure Python: one
        return 0                                                         # folder serves both
    configs, seeds = args.configs.split(','), [int(s) for s in args.seeds.split(',')]
    workdir = args.workdir or tempfile.mkdtemp(prefix='sockeye-client-')
    os.makedirs(workdir, exist_ok=True)
    make_data(workdir)
    mine = {c: {str(s): train('mxmod', sys.executable, args.site, c, s, workdir)
                for s in seeds} for c in configs}
    if args.fixture:
        with open(args.fixture) as handle:
            recorded = json.load(handle)
        theirs, model = recorded['results'], os.path.join(FIXTURES, 'model_rnn')
        expected = recorded['translation_rnn']
    else:
        theirs = {c: {str(s): train('mxnet', args.mxnet_python, args.site, c, s, workdir)
                      for s in seeds} for c in configs}
        model = theirs.get('rnn', {}).get(str(seeds[0]), {}).get('model')
        expected = translate('mxnet', args.mxnet_python, args.site, model, workdir) \
            if model else None
    verdicts = compare(theirs, mine)
    checks = {}
    if model and expected is not None:
        checks['mxmod translates MXNet model'] = \
            translate('mxmod', sys.executable, args.site, model, workdir) == expected
    own = mine.get('rnn', {}).get(str(seeds[0]), {}).get('model')
    if own and not args.fixture:
        checks['MXNet translates mxmod model'] = \
            translate('mxnet', args.mxnet_python, args.site, own, workdir) == \
            translate('mxmod', sys.executable, args.site, own, workdir)
    print('| configuration | MXNet val. ppl (seeds) | mxmod val. ppl (seeds) | updates/s mxmod '
          '/ MXNet | verdict |')
    print('| --- | --- | --- | --- | --- |')
    for config in configs:
        ok, problems, ratio = verdicts[config]
        fmt = lambda runs: ', '.join('%.2f' % r['val_ppl'] if 'error' not in r else 'error'
                                     for r in runs.values())
        print('| %s | %s | %s | %s | %s |' % (
            config, fmt(theirs.get(config, {})), fmt(mine[config]),
            '%.2f' % ratio if ratio else '-', 'match' if ok else '; '.join(problems)))
    for name, ok in checks.items():
        print('%s: %s' % (name, 'identical' if ok else 'DIFFERENT'))
    matched = sum(v[0] for v in verdicts.values())
    print('%d of %d configurations match; translation checks %d of %d'
          % (matched, len(configs), sum(checks.values()), len(checks)))
    if args.record and not args.fixture:
        _record(args.record, theirs, model, expected)
    if args.out:
        with open(args.out, 'w') as handle:
            json.dump({'mxmod': mine, 'mxnet': theirs, 'checks': checks}, handle, indent=1)
    return 0 if matched == len(configs) and all(checks.values()) else 1


def _record(path, theirs, model, expected):
    target = os.path.join(FIXTURES, 'model_rnn')
    os.makedirs(target, exist_ok=True)
    for name in MODEL_FILES:
        shutil.copyfile(os.path.join(model, name), os.path.join(target, name))
    kept = {c: {s: {k: v for k, v in r.items() if k != 'model'} for s, r in runs.items()}
            for c, runs in theirs.items()}
    with open(path, 'w') as handle:
        json.dump({'results': kept, 'translation_rnn': expected}, handle, indent=1)


if __name__ == '__main__':
    sys.exit(main())
