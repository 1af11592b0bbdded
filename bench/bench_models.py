"""Whole-model training speed: mxmod against MXNet 1.9.1 and PyTorch, side by side in one run.

Workloads (those of /work/shared/reference/bench; the MXNet program runs unchanged on mxmod):
``mlp`` MLP 784-512-256-10, batch 128, Module.fit (samples/s); ``lenet`` conv5x5x20-tanh-pool-
conv5x5x50-tanh-pool-fc500-tanh-fc10, batch 64, Module.fit (samples/s); ``lstm`` 2 x 200 LSTM
language model (vocabulary 1000), BucketingModule, buckets 10/20/30/40, batch 32 (sentences/s).
PyTorch runs the same networks in a plain loop (``nn.LSTM`` for the language model).

Each implementation runs in its own long-lived worker process, single-threaded; after one
untimed warm-up epoch the driver asks the workers in turn for one timed epoch each, round after
round, and reports medians and per-round ratios. bench/README.md describes the options.

    python bench/bench_models.py                  # all workloads, all implementations found
    python bench/bench_models.py --quick          # small epochs, 3 rounds, under a minute
    python bench/bench_models.py --workloads lenet --baseline /tmp/base   # before/after
"""
import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
IMPLS = ('mxmod', 'mxnet', 'torch')
WORKLOADS = ('mlp', 'lenet', 'lstm')
UNITS = {'mlp': 'samples/s', 'lenet': 'samples/s', 'lstm': 'sentences/s'}
BATCH = {'mlp': 128, 'lenet': 64, 'lstm': 32}
SIZE = {'mlp': 60000, 'lenet': 10000, 'lstm': 5000}
QUICK_SIZE = {'mlp': 6400, 'lenet': 640, 'lstm': 320}
LSTM_VOCAB, LSTM_EMBED, LSTM_HIDDEN, LSTM_LAYERS = 1000, 200, 200, 2
BUCKETS = [10, 20, 30, 40]


# ---- data (identical for every implementation) --------------------------------------------------
def image_data(n, shape):
    """Uniform[0, 1) float32 inputs and integer labels 0..9 (as float32), RandomState(0)."""
    rs = np.random.RandomState(0)
    x = rs.uniform(0.0, 1.0, size=(n,) + shape).astype(np.float32)
    return x, rs.randint(0, 10, size=(n,)).astype(np.float32)


def sentences(n):
    """``n`` token lists, lengths uniform in 5..40, tokens in 1..999 (0 pads), RandomState(0)."""
    rs = np.random.RandomState(0)
    lengths = rs.randint(5, 41, size=n)
    return [list(rs.randint(1, LSTM_VOCAB, size=length)) for length in lengths]


# ---- MXNet-API workers (mxmod and MXNet run the very same code) ---------------------------------
def import_mx(impl):
    """MXNet, or mxmod from this checkout ('mxmod') or from $BENCH_MXMOD_ROOT ('baseline')."""
    if impl == 'mxnet':
        import mxnet as mx  # pylint: disable=import-outside-toplevel
    else:
        root = os.environ['BENCH_MXMOD_ROOT'] if impl == 'baseline' else os.path.dirname(HERE)
        sys.path.insert(0, os.path.abspath(root))
        import mxmod as mx  # pylint: disable=import-outside-toplevel
    return mx


def mx_mlp(mx):
    net = mx.sym.Variable('data')
    for i, hidden in enumerate((512, 256)):
        net = mx.sym.FullyConnected(net, num_hidden=hidden, name='fc%d' % (i + 1))
        net = mx.sym.Activation(net, act_type='relu', name='relu%d' % (i + 1))
    net = mx.sym.FullyConnected(net, num_hidden=10, name='fc3')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def mx_lenet(mx):
    net = mx.sym.Variable('data')
    for i, filters in enumerate((20, 50)):
        net = mx.sym.Convolution(net, kernel=(5, 5), num_filter=filters, name='conv%d' % (i + 1))
        net = mx.sym.Activation(net, act_type='tanh', name='tanh%d' % (i + 1))
        net = mx.sym.Pooling(net, pool_type='max', kernel=(2, 2), stride=(2, 2),
                             name='pool%d' % (i + 1))
    net = mx.sym.Flatten(net, name='flatten')
    net = mx.sym.FullyConnected(net, num_hidden=500, name='fc1')
    net = mx.sym.Activation(net, act_type='tanh', name='tanh3')
    net = mx.sym.FullyConnected(net, num_hidden=10, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def mx_lstm_sym_gen(mx):
    stack = mx.rnn.SequentialRNNCell()
    for i in range(LSTM_LAYERS):
        stack.add(mx.rnn.LSTMCell(num_hidden=LSTM_HIDDEN, prefix='lstm_l%d_' % i))

    def sym_gen(seq_len):
        data = mx.sym.Variable('data')
        label = mx.sym.Variable('softmax_label')
        embed = mx.sym.Embedding(data=data, input_dim=LSTM_VOCAB, output_dim=LSTM_EMBED,
                                 name='embed')
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.Reshape(outputs, shape=(-1, LSTM_HIDDEN))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=LSTM_VOCAB, name='pred')
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(data=pred, label=label, name='softmax')
        return pred, ('data',), ('softmax_label',)
    return sym_gen


def mx_setup(impl, workload, size, batch):
    """(module, iterator, fit kwargs, metric factory, units per epoch) for one workload."""
    mx = import_mx(impl)
    np.random.seed(0)
    mx.random.seed(0)
    sgd = {'learning_rate': 0.1, 'momentum': 0.9}
    if workload == 'lstm':
        it = mx.rnn.BucketSentenceIter(sentences(size), batch, buckets=list(BUCKETS),
                                       invalid_label=0)
        mod = mx.mod.BucketingModule(sym_gen=mx_lstm_sym_gen(mx), context=mx.cpu(),
                                     default_bucket_key=it.default_bucket_key)
        kwargs = dict(kvstore='local', optimizer='sgd',
                      optimizer_params={'learning_rate': 0.01, 'momentum': 0.9, 'wd': 1e-5},
                      initializer=mx.init.Xavier(factor_type='in', magnitude=2.34))
        return mx, mod, it, kwargs, lambda: mx.metric.Perplexity(0), len(it.idx) * batch
    x, y = image_data(size, (784,) if workload == 'mlp' else (1, 28, 28))
    it = mx.io.NDArrayIter(x, y, batch_size=batch, shuffle=False, label_name='softmax_label')
    mod = mx.mod.Module(mx_mlp(mx) if workload == 'mlp' else mx_lenet(mx), context=mx.cpu())
    kwargs = dict(kvstore='local', optimizer='sgd', optimizer_params=sgd,
                  initializer=mx.init.Xavier(magnitude=2.0))
    return mx, mod, it, kwargs, lambda: mx.metric.create('acc'), size


class MXWorker:
    """One Module.fit epoch per call (the first, untimed, also binds and initialises)."""

    def __init__(self, impl, workload, size, batch):
        (self.mx, self.mod, self.it, self.kwargs, self.metric,
         self.units) = mx_setup(impl, workload, size, batch)
        self.epoch = 0

    def run_epoch(self):
        metric = self.metric()
        self.it.reset()
        self.mx.nd.waitall()
        tic = time.perf_counter()
        self.mod.fit(self.it, begin_epoch=self.epoch, num_epoch=self.epoch + 1,
                     eval_metric=metric, **self.kwargs)
        self.mx.nd.waitall()
        self.epoch += 1
        names, values = metric.get()
        return time.perf_counter() - tic, {str(names): float(values)}

    def finite(self):
        args, _ = self.mod.get_params()
        return all(bool(np.isfinite(v.asnumpy()).all()) for v in args.values())


# ---- PyTorch worker ----------------------------------------------------------------------------
def torch_buckets(sents, batch):
    """Full batches of (data, label) int64 arrays per bucket, as BucketSentenceIter forms them:
    each sentence padded with 0 to the smallest bucket that holds it, the label the data shifted
    left by one; incomplete batches dropped; batch order shuffled once with RandomState(0)."""
    rows = {b: [] for b in BUCKETS}
    for sent in sents:
        bucket = next((b for b in BUCKETS if b >= len(sent)), None)
        if bucket is not None:
            rows[bucket].append(list(sent) + [0] * (bucket - len(sent)))
    batches = []
    for bucket_rows in rows.values():
        data = np.array(bucket_rows, np.int64)
        for start in range(0, len(data) - batch + 1, batch):
            chunk = data[start:start + batch]
            label = np.zeros_like(chunk)
            label[:, :-1] = chunk[:, 1:]
            batches.append((chunk, label))
    np.random.RandomState(0).shuffle(batches)
    return batches


def torch_model(nn, workload):
    if workload == 'mlp':
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    if workload == 'lenet':
        return nn.Sequential(nn.Conv2d(1, 20, 5), nn.Tanh(), nn.MaxPool2d(2),
                             nn.Conv2d(20, 50, 5), nn.Tanh(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(50 * 4 * 4, 500), nn.Tanh(), nn.Linear(500, 10))

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(LSTM_VOCAB, LSTM_EMBED)
            self.lstm = nn.LSTM(LSTM_EMBED, LSTM_HIDDEN, num_layers=LSTM_LAYERS, batch_first=True)
            self.pred = nn.Linear(LSTM_HIDDEN, LSTM_VOCAB)

        def forward(self, tokens):
            out, _ = self.lstm(self.embed(tokens))
            return self.pred(out.reshape(-1, LSTM_HIDDEN))
    return LanguageModel()


class TorchWorker:
    """The same networks in a plain PyTorch loop (SGD momentum 0.9, cross-entropy)."""

    def __init__(self, workload, size, batch, threads):
        import torch  # pylint: disable=import-outside-toplevel
        self.torch = torch
        torch.set_num_threads(threads)
        torch.manual_seed(0)
        self.model = torch_model(torch.nn, workload)
        if workload == 'lstm':
            pairs = torch_buckets(sentences(size), batch)
            self.batches = [(torch.from_numpy(data), torch.from_numpy(label).reshape(-1))
                            for data, label in pairs]
            self.units = len(pairs) * batch
            lr, wd = 0.01, 1e-5
        else:
            x, y = image_data(size, (784,) if workload == 'mlp' else (1, 28, 28))
            x, y = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))
            self.batches = [(x[s:s + batch], y[s:s + batch]) for s in range(0, size, batch)]
            self.units = size
            lr, wd = 0.01, 0.0
        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9, weight_decay=wd)
        self.loss = torch.nn.CrossEntropyLoss()

    def run_epoch(self):
        tic = time.perf_counter()
        last = None
        for data, label in self.batches:
            self.opt.zero_grad(set_to_none=True)
            loss = self.loss(self.model(data), label)
            loss.backward()
            self.opt.step()
            last = loss
        return time.perf_counter() - tic, {'loss': float(last.item())}

    def finite(self):
        return all(bool(self.torch.isfinite(p).all()) for p in self.model.parameters())


def worker_main(args):
    """Answer JSON command lines on stdin, one JSON line each on stdout:
    {"setup": workload, "size": n, "batch": b} builds a model and trains the warm-up epoch,
    {"run": 1} trains one timed epoch, {"finite": 1} checks the parameters, anything else ends."""
    reply = os.fdopen(os.dup(1), 'w')
    os.dup2(2, 1)               # whatever the frameworks print goes to stderr, not the protocol
    logging.basicConfig(level=logging.ERROR)
    worker = None
    for line in sys.stdin:
        cmd = json.loads(line)
        if 'setup' in cmd:
            worker = None
            tic = time.perf_counter()
            if args.worker == 'torch':
                worker = TorchWorker(cmd['setup'], cmd['size'], cmd['batch'], args.threads)
            else:
                worker = MXWorker(args.worker, cmd['setup'], cmd['size'], cmd['batch'])
            worker.run_epoch()
            out = {'units': worker.units, 'warmup_s': time.perf_counter() - tic}
        elif 'run' in cmd:
            cpu = time.process_time()
            seconds, metric = worker.run_epoch()
            out = {'seconds': seconds, 'cpu_seconds': time.process_time() - cpu,
                   'units': worker.units, 'metric': metric}
        elif 'finite' in cmd:
            out = {'params_finite': worker.finite()}
        else:
            break
        reply.write(json.dumps(out) + '\n')
        reply.flush()


# ---- driver ------------------------------------------------------------------------------------
class WorkerProcess:
    """A worker subprocess (one per implementation) speaking the protocol of :func:`worker_main`."""

    def __init__(self, impl, python, threads, baseline=None):
        self.impl = impl
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                   MKL_NUM_THREADS=str(threads), BENCH_MXMOD_ROOT=baseline or '')
        self.log = tempfile.TemporaryFile(mode='w+')
        cmd = [python, os.path.abspath(__file__), '--worker', impl, '--threads', str(threads)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, env=env, text=True, cwd=HERE)

    def send(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + '\n')
        self.proc.stdin.flush()

    def receive(self):
        """The next JSON reply; RuntimeError with the worker's stderr if it died."""
        answer = self.proc.stdout.readline()
        if not answer:
            self.proc.wait()
            self.log.seek(0)
            raise RuntimeError('%s worker exited with status %s:\n%s' % (
                self.impl, self.proc.returncode, self.log.read()[-3000:]))
        return json.loads(answer)

    def request(self, **cmd):
        try:
            self.send(**cmd)
        except (BrokenPipeError, OSError):
            pass                # receive() reports why
        return self.receive()

    def close(self):
        try:
            self.send(quit=1)
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        self.proc.wait()
        self.log.close()


def interpreters(args):
    """{impl: python} for the requested implementations that are available; notes for the rest."""
    found, notes = {}, []
    paths = {'mxmod': sys.executable, 'mxnet': args.mxnet_python, 'torch': args.torch_python,
             'baseline': sys.executable}
    if args.baseline:
        if not os.path.isdir(os.path.join(args.baseline, 'mxmod')):
            raise SystemExit('--baseline: no mxmod package in %s' % args.baseline)
        args.baseline = os.path.abspath(args.baseline)
        args.impls.insert(1, 'baseline')
    for impl in args.impls:
        if os.path.exists(paths[impl]):
            found[impl] = paths[impl]
        else:
            notes.append('%s skipped: %s not found' % (impl, paths[impl]))
    return found, notes


def setup_workers(args, workload, workers, notes):
    """Set every worker up for ``workload`` (their warm-ups overlap); {impl: ready reply}."""
    size, batch = args.size[workload], args.batch[workload]
    for proc in workers.values():
        proc.send(setup=workload, size=size, batch=batch)
    ready = {}
    for impl, proc in list(workers.items()):
        try:
            ready[impl] = proc.receive()
        except RuntimeError as err:
            notes.append('%s %s failed to start: %s' % (workload, impl, err))
            del workers[impl]
    return ready


def bench_workload(args, workload, workers, notes):
    """Interleaved timed epochs; returns {impl: record} with per-round throughputs."""
    ready = setup_workers(args, workload, workers, notes)
    records = {impl: {'warmup_s': r['warmup_s'], 'units_per_epoch': r['units'],
                      'per_round': [], 'cpu_per_round': [], 'metric': None}
               for impl, r in ready.items()}
    for rnd in range(args.rounds):
        order = list(workers)
        order = order[rnd % len(order):] + order[:rnd % len(order)] if order else order
        for impl in order:
            try:
                res = workers[impl].request(run=1)
            except RuntimeError as err:
                notes.append('%s %s failed in round %d: %s' % (workload, impl, rnd, err))
                del workers[impl]
                continue
            records[impl]['per_round'].append(res['units'] / res['seconds'])
            records[impl]['cpu_per_round'].append(res['units'] / res['cpu_seconds'])
            records[impl]['metric'] = res['metric']
    for impl, proc in list(workers.items()):
        try:
            records[impl]['params_finite'] = proc.request(finite=1)['params_finite']
        except RuntimeError as err:
            notes.append('%s %s failed: %s' % (workload, impl, err))
            del workers[impl]
    return {impl: rec for impl, rec in records.items() if rec['per_round']}


def summarise(workload, records):
    """Median throughputs (wall clock and process CPU time) and the per-round ratios
    mxmod / other, paired by round."""
    out = {'workload': workload, 'unit': UNITS[workload], 'impls': {}, 'ratios': {}}
    for impl, rec in records.items():
        rates = rec['per_round']
        out['impls'][impl] = dict(rec, median=statistics.median(rates), min=min(rates),
                                  max=max(rates),
                                  cpu_median=statistics.median(rec['cpu_per_round']))
    base = records.get('mxmod')
    for impl, rec in records.items():
        if base is None or impl == 'mxmod':
            continue
        pairs = [a / b for a, b in zip(base['per_round'], rec['per_round'])]
        cpu = [a / b for a, b in zip(base['cpu_per_round'], rec['cpu_per_round'])]
        out['ratios']['mxmod/' + impl] = {'median': statistics.median(pairs), 'min': min(pairs),
                                          'max': max(pairs), 'cpu_median': statistics.median(cpu)}
    return out


def report(summary, args):
    workload, unit = summary['workload'], summary['unit']
    print('%s (batch %d, %d %s per epoch, %d rounds) [%s; cpu: per second of process CPU time]'
          % (workload, args.batch[workload], args.size[workload],
             'sentences generated' if workload == 'lstm' else 'samples', args.rounds, unit))
    for impl, rec in summary['impls'].items():
        print('  %-8s median %8.1f  min %8.1f  max %8.1f  cpu %8.1f  warm-up %4.1f s  finite=%s  %s'
              % (impl, rec['median'], rec['min'], rec['max'], rec['cpu_median'], rec['warmup_s'],
                 rec.get('params_finite'), rec['metric']))
    for name, ratio in summary['ratios'].items():
        print('  ratio %-15s %.3f  (rounds %.3f .. %.3f)  cpu %.3f' % (
            name, ratio['median'], ratio['min'], ratio['max'], ratio['cpu_median']))
    sys.stdout.flush()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--workloads', default=','.join(WORKLOADS),
                   help='comma-separated subset of %s' % ','.join(WORKLOADS))
    p.add_argument('--impls', default=','.join(IMPLS),
                   help='comma-separated subset of %s' % ','.join(IMPLS))
    p.add_argument('--rounds', type=int, default=None, help='timed epochs per implementation '
                   '(default 5, 3 with --quick)')
    p.add_argument('--quick', action='store_true', help='small epochs and 3 rounds (< 1 minute)')
    for name in WORKLOADS:
        p.add_argument('--%s-%s' % (name, 'sentences' if name == 'lstm' else 'samples'),
                       type=int, dest='%s_size' % name, default=None,
                       help='epoch size (default %d, %d with --quick)' % (SIZE[name],
                                                                          QUICK_SIZE[name]))
        p.add_argument('--%s-batch' % name, type=int, default=BATCH[name], dest='%s_batch' % name)
    p.add_argument('--threads', type=int, default=1, help='threads per worker (default 1)')
    p.add_argument('--mxnet-python', default=os.environ.get('MXNET_ORACLE_PYTHON',
                                                            '/tmp/mxnet-ref/bin/python'))
    p.add_argument('--torch-python', default='/tmp/venv_torch/bin/python')
    p.add_argument('--json', default=None, help='also write the results to this file')
    p.add_argument('--baseline', default=None, metavar='DIR',
                   help="also run the mxmod of another checkout DIR as 'baseline' (before/after: "
                        "git worktree add /tmp/base HEAD~1)")
    p.add_argument('--worker', choices=IMPLS + ('baseline',), help=argparse.SUPPRESS)  # internal
    return p.parse_args(argv)


def _checked(text, allowed, what):
    items = [t.strip() for t in text.split(',') if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise SystemExit('--%s: expected a comma-separated subset of %s, got %r'
                         % (what, ','.join(allowed), text))
    return items


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        worker_main(args)
        return
    workloads = _checked(args.workloads, WORKLOADS, 'workloads')
    args.impls = _checked(args.impls, IMPLS, 'impls')
    args.rounds = args.rounds or (3 if args.quick else 5)
    sizes = QUICK_SIZE if args.quick else SIZE
    args.size = {w: getattr(args, '%s_size' % w) or sizes[w] for w in WORKLOADS}
    args.batch = {w: getattr(args, '%s_batch' % w) for w in WORKLOADS}
    pythons, notes = interpreters(args)
    for note in notes:
        print('note:', note)
    early = len(notes)
    workers = {impl: WorkerProcess(impl, python, args.threads, args.baseline)
               for impl, python in pythons.items()}
    results = []
    try:
        for workload in workloads:
            results.append(summarise(workload, bench_workload(args, workload, workers, notes)))
            report(results[-1], args)
    finally:
        for proc in workers.values():
            proc.close()
    for note in notes[early:]:
        print('note:', note)
    if args.json:
        with open(args.json, 'w') as handle:
            json.dump({'results': results, 'notes': notes, 'threads': args.threads,
                       'rounds': args.rounds}, handle, indent=1)


if __name__ == '__main__':
    main()
