"""Binding time of an unrolled LSTM language model (2 x 200 LSTMCell layers, embedding 200,
vocabulary 10,000, batch 32: the network of MXNet's example/rnn/bucketing/lstm_bucketing.py),
mxmod against MXNet 1.9.1, side by side in one run, single-threaded, with ratios.

    python bench/bench_bind.py [--cases simple,bucketing,example] [--rounds N]
                               [--mxnet-python PY] [--mxmod-python PY]

Cases:

- ``simple``: ``Symbol.simple_bind`` of the buckets 10, 20, ..., 60 (the symbol is made
  beforehand and not timed);
- ``bucketing``: a BucketingModule with 20 buckets (3, 6, ..., 60; the default is 60) is bound,
  initialised, given an optimizer, then switched to each other bucket once: every switch makes
  the bucket's symbol (sym_gen) and binds it sharing the default bucket's memory;
- ``example``: MXNet's example/rnn/bucketing/lstm_bucketing.py, unchanged (mxmod through an
  ``import mxnet`` alias as in run_mxnet_examples.py), one epoch on generated PTB-like text
  (data/sherlockholmes.{train,test}.txt: 10,000 words of Zipf frequency, sentence lengths
  like PTB's), after one untimed run of each (numba's kernel cache warm, files cached).

Each implementation runs in its own long-lived worker process (``--worker``); the driver asks
them in turn for one measurement, alternating which goes first, so that load from other
processes falls on both alike. Every figure is a median over rounds of wall-clock time and of
process CPU time (steadier on a shared machine); ratios are mxmod / MXNet per round, then the
median. The garbage collector is run before each timed call in both workers.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MXNET_PYTHON = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')
MIRROR = '/work/.mirror/apache+mxnet/repo'
EXAMPLE = 'example/rnn/bucketing/lstm_bucketing.py'
VOCAB, EMBED, HIDDEN, LAYERS, BATCH = 10000, 200, 200, 2, 32
SIMPLE_BUCKETS = (10, 20, 30, 40, 50, 60)
MODULE_BUCKETS = tuple(range(3, 61, 3))
THREADS = {'OMP_NUM_THREADS': '1', 'OPENBLAS_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1',
           'MXNET_CPU_WORKER_NTHREADS': '1', 'MXMOD_NUM_THREADS': '1'}


# ---- worker side ------------------------------------------------------------------------------
def sym_gen_of(mx):
    """sym_gen(seq_len) of lstm_bucketing.py."""
    stack = mx.rnn.SequentialRNNCell()
    for i in range(LAYERS):
        stack.add(mx.rnn.LSTMCell(num_hidden=HIDDEN, prefix='lstm_l%d_' % i))

    def sym_gen(seq_len):
        data = mx.sym.Variable('data')
        label = mx.sym.Variable('softmax_label')
        embed = mx.sym.Embedding(data=data, input_dim=VOCAB, output_dim=EMBED, name='embed')
        stack.reset()
        outputs = stack.unroll(seq_len, inputs=embed, merge_outputs=True)[0]
        pred = mx.sym.Reshape(outputs, shape=(-1, HIDDEN))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=VOCAB, name='pred')
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(data=pred, label=label, name='softmax')
        return pred, ('data',), ('softmax_label',)
    return sym_gen


def _timed(fn):
    import gc  # pylint: disable=import-outside-toplevel
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def simple_binds(mx, sym_gen):
    """{bucket: (wall, cpu)} of simple_bind for each of SIMPLE_BUCKETS."""
    out = {}
    for seq_len in SIMPLE_BUCKETS:
        sym = sym_gen(seq_len)[0]
        wall, cpu, exe = _timed(lambda: sym.simple_bind(
            mx.cpu(), data=(BATCH, seq_len), softmax_label=(BATCH, seq_len)))
        mx.nd.waitall()
        del exe
        out[seq_len] = (wall, cpu)
    return out


def module_binds(mx, sym_gen):
    """{bucket: (wall, cpu)}: the default bucket's bind + init, then each switch_bucket."""
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=max(MODULE_BUCKETS),
                                 context=mx.cpu())

    def shapes(seq_len):
        return ([mx.io.DataDesc('data', (BATCH, seq_len))],
                [mx.io.DataDesc('softmax_label', (BATCH, seq_len))])

    def first():
        mod.bind(*shapes(max(MODULE_BUCKETS)))
        mod.init_params(initializer=mx.init.Xavier(factor_type='in', magnitude=2.34))
        mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.01})
        mx.nd.waitall()
    wall, cpu, _ = _timed(first)
    out = {max(MODULE_BUCKETS): (wall, cpu)}
    for seq_len in MODULE_BUCKETS[:-1]:
        wall, cpu, _ = _timed(lambda: mod.switch_bucket(seq_len, *shapes(seq_len)))
        out[seq_len] = (wall, cpu)
    mx.nd.waitall()
    return out


def worker(impl):
    """Answer one JSON line per request line read from stdin."""
    if impl == 'mxnet':
        import mxnet as mx  # pylint: disable=import-outside-toplevel,import-error
    else:
        sys.path.insert(0, ROOT)
        import mxmod as mx  # pylint: disable=import-outside-toplevel
    sym_gen = sym_gen_of(mx)
    simple_binds(mx, sym_gen)       # warm: imports, first-call caches
    for line in sys.stdin:
        case = line.strip()
        result = simple_binds(mx, sym_gen) if case == 'simple' else module_binds(mx, sym_gen)
        print(json.dumps({str(k): v for k, v in result.items()}), flush=True)


# ---- driver side ------------------------------------------------------------------------------
class Worker(object):
    def __init__(self, impl, python):
        env = dict(os.environ, **THREADS)
        self.impl = impl
        self.proc = subprocess.Popen([python, os.path.abspath(__file__), '--worker', impl],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                     stderr=subprocess.DEVNULL, text=True)

    def ask(self, case):
        self.proc.stdin.write(case + '\n')
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError('%s worker died' % self.impl)
        return {int(k): tuple(v) for k, v in json.loads(line).items()}

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _median(values):
    return statistics.median(values) if values else float('nan')


def report(case, rounds, keys):
    """Print per-bucket medians (ms) and the median per-round ratios mxmod / MXNet."""
    impls = list(rounds[0])
    print('\n%s: medians of %d rounds, milliseconds (wall / process CPU)' % (case, len(rounds)))
    head = '%8s' % 'bucket' + ''.join('%20s' % i for i in impls)
    if len(impls) == 2:
        head += '%22s' % 'ratio wall / cpu'
    print(head)
    rows = [('%d' % k, [[r[i][k] for r in rounds] for i in impls]) for k in keys]
    rows.append(('total', [[tuple(sum(r[i][k][j] for k in keys) for j in (0, 1))
                            for r in rounds] for i in impls]))
    worst = 0.0
    for label, per_impl in rows:
        line = '%8s' % label
        for values in per_impl:
            line += '%10.1f /%7.1f ' % (1e3 * _median([v[0] for v in values]),
                                        1e3 * _median([v[1] for v in values]))
        if len(impls) == 2:
            ratios = [_median([a[j] / b[j] for a, b in zip(*per_impl)]) for j in (0, 1)]
            line += '%11.2f /%6.2f' % tuple(ratios)
            if label != 'total':
                worst = max(worst, ratios[1])
        print(line)
    if len(impls) == 2:
        print('largest per-bucket CPU ratio: %.2f' % worst)


def run_binds(args, workers):
    for case, keys in (('simple', SIMPLE_BUCKETS), ('bucketing', MODULE_BUCKETS)):
        if case not in args.cases:
            continue
        rounds = []
        for n in range(args.rounds):
            order = workers if n % 2 == 0 else workers[::-1]
            rounds.append({w.impl: w.ask(case) for w in order})
        report(case, rounds, keys)


# ---- the example -----------------------------------------------------------------------------
def write_ptb_like(data_dir, train_lines=300, test_lines=60, seed=0):
    """sherlockholmes.{train,test}.txt: space-separated words, one sentence a line, words of
    Zipf frequency over a VOCAB-word vocabulary, lengths around PTB's (mean ~21); the test file
    uses only words the training file has (encode_sentences refuses unknown ones)."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    rng = np.random.RandomState(seed)
    weights = 1.0 / np.arange(1, VOCAB + 1)
    weights /= weights.sum()
    os.makedirs(data_dir, exist_ok=True)
    seen = set()
    for name, lines in (('train', train_lines), ('test', test_lines)):
        with open(os.path.join(data_dir, 'sherlockholmes.%s.txt' % name), 'w') as out:
            for _ in range(lines):
                length = int(np.clip(rng.gamma(4.0, 5.5), 2, 70))
                words = rng.choice(VOCAB, size=length, p=weights)
                if name == 'train':
                    seen.update(words.tolist())
                else:
                    words = [w for w in words if w in seen] or [0]
                out.write(' ' + ' '.join('w%d' % w for w in words) + ' \n')


def run_example(args):
    """Time the first epoch of lstm_bucketing.py under both implementations, interleaved."""
    sys.path.insert(0, HERE)
    from run_mxnet_examples import ALIAS  # pylint: disable=import-outside-toplevel
    work = tempfile.mkdtemp(prefix='bench_bind_')
    script = os.path.join(work, 'lstm_bucketing.py')
    with open(script, 'w') as out:
        out.write(subprocess.run(['git', '--git-dir', args.mirror, 'show', 'v1.9.x:' + EXAMPLE],
                                 check=True, capture_output=True, text=True).stdout)
    write_ptb_like(os.path.join(work, 'data'), args.train_lines)
    commands = {'mxmod': [args.mxmod_python, '-c', ALIAS, script],
                'mxnet': [args.mxnet_python, script]}
    env = dict(os.environ, PYTHONPATH=ROOT, **THREADS)
    epoch_args = ['--num-epochs', '1', '--disp-batches', '1000']
    results = {impl: [] for impl in args.impls}
    for n in range(args.example_rounds + 1):
        order = args.impls if n % 2 == 0 else args.impls[::-1]
        for impl in order:
            tic = time.perf_counter()
            proc = subprocess.run(commands[impl] + epoch_args, cwd=work, env=env, text=True,
                                  capture_output=True, timeout=args.timeout)
            wall = time.perf_counter() - tic
            match = re.search(r'Epoch\[0\] Time cost=([0-9.]+)', proc.stderr + proc.stdout)
            if proc.returncode or not match:
                print('%s failed (exit %d):\n%s' % (impl, proc.returncode, proc.stderr[-3000:]))
                return
            if n:       # the first run warms the kernel and file caches
                results[impl].append((float(match.group(1)), wall))
    shutil.rmtree(work, ignore_errors=True)
    print('\nexample %s, first epoch (%d training sentences), medians of %d runs'
          % (EXAMPLE, args.train_lines, args.example_rounds))
    for impl in args.impls:
        print('%8s  epoch time cost %6.2f s   whole run %6.2f s'
              % (impl, _median([r[0] for r in results[impl]]),
                 _median([r[1] for r in results[impl]])))
    if len(args.impls) == 2:
        mine, theirs = results['mxmod'], results['mxnet']
        print('   ratio  epoch %.2f, whole run %.2f' % (
            _median([a[0] / b[0] for a, b in zip(mine, theirs)]),
            _median([a[1] / b[1] for a, b in zip(mine, theirs)])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--worker', help=argparse.SUPPRESS)
    ap.add_argument('--cases', default='simple,bucketing,example')
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--example-rounds', type=int, default=3)
    ap.add_argument('--train-lines', type=int, default=300)
    ap.add_argument('--mxnet-python', default=MXNET_PYTHON)
    ap.add_argument('--mxmod-python', default=sys.executable)
    ap.add_argument('--mirror', default=MIRROR, help="MXNet's git directory (for the example)")
    ap.add_argument('--timeout', type=int, default=1200)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker)
        return
    args.cases = args.cases.split(',')
    args.impls = ['mxmod'] + (['mxnet'] if os.path.exists(args.mxnet_python) else [])
    if 'mxnet' not in args.impls:
        print('no MXNet interpreter at %s: mxmod alone' % args.mxnet_python)
    pythons = {'mxmod': args.mxmod_python, 'mxnet': args.mxnet_python}
    if 'simple' in args.cases or 'bucketing' in args.cases:
        workers = [Worker(impl, pythons[impl]) for impl in args.impls]
        try:
            run_binds(args, workers)
        finally:
            for w in workers:
                w.close()
    if 'example' in args.cases:
        run_example(args)


if __name__ == '__main__':
    main()
