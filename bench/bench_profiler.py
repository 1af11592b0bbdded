"""What the profiler costs: ``Module.fit`` time per batch with the profiler off, on
(``profile_all``), and on with aggregate statistics, and (``--baseline DIR``) with the mxmod of
another checkout (before the profiler's hooks existed, say), in one interleaved run.

Workloads: 'tiny' (MLP 10-16-2, batch 8: framework overhead dominates, the worst case for
per-operator events) and 'mlp' (784-512-256-10, batch 128: arithmetic dominates). Every variant
runs in its own long-lived worker process (one thread); the driver asks the workers in turn,
rotating the order, for one timed epoch each, and prints medians of process CPU time per batch
and the median per-round ratio against 'off'.

Usage: python bench/bench_profiler.py [--rounds 7] [--batches 400] [--workloads tiny,mlp]
                                      [--baseline DIR] [--json FILE]
"""
import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHAPES = {'tiny': (10, [16], 2, 8), 'mlp': (784, [512, 256], 10, 128)}
VARIANTS = ('off', 'on', 'on+stats')


def _network(mx, hidden, classes):
    net = mx.sym.Variable('data')
    for i, width in enumerate(hidden):
        net = mx.sym.FullyConnected(net, num_hidden=width, name='fc%d' % i)
        net = mx.sym.Activation(net, act_type='relu', name='relu%d' % i)
    net = mx.sym.FullyConnected(net, num_hidden=classes, name='out')
    return mx.sym.SoftmaxOutput(net, name='softmax')


class Workload(object):
    """One model and its data; ``epoch()`` trains one pass and returns CPU seconds per batch."""

    def __init__(self, mx, name, batches):
        features, hidden, classes, batch = SHAPES[name]
        rng = np.random.RandomState(0)
        data = rng.randn(batches * batch, features).astype(np.float32)
        label = rng.randint(0, classes, len(data)).astype(np.float32)
        self.iter = mx.io.NDArrayIter(data, label, batch)
        self.mod = mx.mod.Module(_network(mx, hidden, classes), context=mx.cpu())
        self.batches = batches
        self.epochs = 0
        self.epoch()        # warm-up: bind, initialize

    def epoch(self):
        self.iter.reset()
        tic = time.process_time()
        self.mod.fit(self.iter, begin_epoch=self.epochs, num_epoch=self.epochs + 1,
                     optimizer_params={'learning_rate': 0.01, 'momentum': 0.9})
        self.epochs += 1
        return (time.process_time() - tic) / self.batches


def worker(variant, workloads, batches):
    """Serve 'round <workload>' requests on stdin with one timed epoch each."""
    import mxmod as mx  # pylint: disable=import-outside-toplevel
    logging.getLogger().setLevel(logging.ERROR)    # no per-epoch lines
    trace_dir = tempfile.mkdtemp(prefix='bench_profiler_')
    if variant.startswith('on'):
        mx.profiler.set_config(profile_all=True, aggregate_stats=variant == 'on+stats',
                               continuous_dump=True, filename=os.path.join(trace_dir, 't.json'))
        mx.profiler.set_state('run')
    models = {name: Workload(mx, name, batches) for name in workloads}
    print('ready', flush=True)
    for line in sys.stdin:
        name = line.split()[1]
        print(json.dumps(models[name].epoch()), flush=True)


def _spawn(variant, pythonpath, args):
    env = dict(os.environ, PYTHONPATH=pythonpath, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1',
               MKL_NUM_THREADS='1')
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), '--worker', variant,
                             '--workloads', args.workloads, '--batches', str(args.batches)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    if proc.stdout.readline().strip() != 'ready':
        raise SystemExit('worker %s failed to start' % variant)
    return proc


def _ask(proc, workload):
    proc.stdin.write('round %s\n' % workload)
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def _report(times, workloads, names):
    """Print and return the medians (CPU time per batch) and per-round ratios against 'off'."""
    report = {}
    for workload in workloads:
        base = np.array(times[(workload, 'off')])
        for variant in names:
            own = np.array(times[(workload, variant)])
            report['%s/%s' % (workload, variant)] = {
                'us_per_batch': float(np.median(own) * 1e6),
                'ratio_to_off': float(np.median(own / base))}
            print('%-5s %-9s %9.1f us/batch (CPU, median)   / off: %.3f'
                  % (workload, variant, np.median(own) * 1e6, np.median(own / base)))
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=7)
    parser.add_argument('--batches', type=int, default=400)
    parser.add_argument('--workloads', default='tiny,mlp')
    parser.add_argument('--baseline', default=None, metavar='DIR',
                        help='a directory holding another mxmod package, run as "baseline" '
                             '(profiler off)')
    parser.add_argument('--json', default=None)
    parser.add_argument('--worker', default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    workloads = args.workloads.split(',')
    if args.worker:
        worker(args.worker, workloads, args.batches)
        return
    procs = {variant: _spawn(variant, ROOT, args) for variant in VARIANTS}
    if args.baseline:
        procs['baseline'] = _spawn('off', os.path.abspath(args.baseline), args)
    names = list(procs)
    times = {(w, v): [] for w in workloads for v in names}
    for rnd in range(args.rounds):
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        for workload in workloads:
            for variant in order:
                times[(workload, variant)].append(_ask(procs[variant], workload))
    for proc in procs.values():
        proc.stdin.close()
        proc.wait()
    report = _report(times, workloads, names)
    if args.json:
        with open(args.json, 'w') as out:
            json.dump({'report': report, 'rounds': {'%s/%s' % k: v for k, v in times.items()}},
                      out, indent=1)


if __name__ == '__main__':
    main()
