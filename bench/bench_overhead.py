"""Framework overhead: Module.fit time per batch on a tiny MLP (10-16-2, ReLU, SoftmaxOutput,
batch 8, SGD lr 0.1 momentum 0.9, Xavier, metric 'acc'), after a warm-up epoch.

Runs the same program under mxmod (this interpreter) and, when an MXNet 1.9.1 interpreter is at
hand (--mxnet-python, or MXNET_ORACLE_PYTHON; default the oracle venv of the reference notes),
under MXNet 1.9.1, and prints both figures and their ratio.
Also reports the bare step (forward_backward + update) and step + update_metric.

Each figure is measured in --rounds child processes per implementation, the implementations
alternating, and reported as the median of wall-clock and of process CPU time per step.

With --baseline DIR (a directory holding another mxmod package, e.g. an older commit's
``git archive``), that code runs as a third implementation in the same interleaved rounds.

Usage: python bench/bench_overhead.py [--steps N] [--rounds R] [--baseline DIR]
       [--backend mxmod|mxnet|baseline]
"""
import argparse
import json
import logging
import os
import subprocess
import sys
import time

import statistics

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MXNET_PYTHON = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')
BS = 8


def tiny(mx):
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=16, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=2, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def _timed(mx, fn):
    """(wall seconds, process CPU seconds) of ``fn()``."""
    mx.nd.waitall()
    tic, cpu = time.perf_counter(), time.process_time()
    fn()
    mx.nd.waitall()
    return time.perf_counter() - tic, time.process_time() - cpu


def measure(mx, steps):
    """Per-step times in microseconds: bare step, step + metric, and Module.fit per batch."""
    rs = np.random.RandomState(0)
    X = rs.randn(BS, 10).astype(np.float32)
    y = rs.randint(0, 2, size=(BS,)).astype(np.float32)
    fit_kwargs = dict(optimizer='sgd', optimizer_params={'learning_rate': 0.1, 'momentum': 0.9},
                      initializer=mx.init.Xavier(), eval_metric='acc')
    mod = mx.mod.Module(tiny(mx), context=mx.cpu())
    mod.bind(data_shapes=[('data', (BS, 10))], label_shapes=[('softmax_label', (BS,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    batch = mx.io.DataBatch(data=[mx.nd.array(X)], label=[mx.nd.array(y)])
    metric = mx.metric.Accuracy()

    def step():
        for _ in range(steps):
            mod.forward_backward(batch)
            mod.update()

    def step_metric():
        for _ in range(steps):
            mod.forward_backward(batch)
            mod.update()
            mod.update_metric(metric, batch.label)
    step()
    t_step = _timed(mx, step)
    t_metric = _timed(mx, step_metric)
    it = mx.io.NDArrayIter(np.tile(X, (steps, 1)), np.tile(y, steps), batch_size=BS,
                           shuffle=False, label_name='softmax_label')
    mod2 = mx.mod.Module(tiny(mx), context=mx.cpu())
    mod2.fit(it, num_epoch=1, **fit_kwargs)
    it.reset()
    t_fit = _timed(mx, lambda: mod2.fit(it, begin_epoch=1, num_epoch=2, **fit_kwargs))
    out = {}
    for key, (wall, cpu) in (('step_us', t_step), ('step_metric_us', t_metric),
                             ('fit_us_per_batch', t_fit)):
        out[key], out[key + '_cpu'] = wall / steps * 1e6, cpu / steps * 1e6
    return out


def run_backend(name, steps):
    logging.basicConfig(level=logging.WARNING)
    if name == 'mxnet':
        import mxnet as mx  # pylint: disable=import-outside-toplevel
    else:
        root = os.environ['BENCH_MXMOD_ROOT'] if name == 'baseline' else os.path.dirname(HERE)
        sys.path.insert(0, os.path.abspath(root))
        import mxmod as mx  # pylint: disable=import-outside-toplevel
    mx.random.seed(0)
    print(json.dumps(dict(measure(mx, steps), backend=name)))


def _child(python, backend, steps, baseline=None):
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get('OMP_NUM_THREADS', '1'))
    if baseline:
        env['BENCH_MXMOD_ROOT'] = baseline
    out = subprocess.run([python, os.path.abspath(__file__), '--backend', backend,
                          '--steps', str(steps)], env=env, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


KEYS = ('step_us', 'step_metric_us', 'fit_us_per_batch')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--steps', type=int, default=2000)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--backend', choices=['mxmod', 'mxnet', 'baseline'])
    parser.add_argument('--baseline', help='directory with another mxmod package to compare')
    parser.add_argument('--mxnet-python', default=MXNET_PYTHON)
    args = parser.parse_args()
    if args.backend:
        run_backend(args.backend, args.steps)
        return
    pythons = {'mxmod': sys.executable}
    if args.baseline:
        pythons['baseline'] = sys.executable
    if os.path.exists(args.mxnet_python):
        pythons['mxnet'] = args.mxnet_python
    runs = {name: [] for name in pythons}
    names = list(pythons)
    for rnd in range(args.rounds):
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        for name in order:
            runs[name].append(_child(pythons[name], name, args.steps, args.baseline))
    med = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0] if k != 'backend'}
           for name, rs in runs.items()}
    for name, res in med.items():
        print('%-6s step %7.1f us (cpu %7.1f)  step+metric %7.1f us (cpu %7.1f)  fit %7.1f '
              'us/batch (cpu %7.1f)' % (name, res['step_us'], res['step_us_cpu'],
                                        res['step_metric_us'], res['step_metric_us_cpu'],
                                        res['fit_us_per_batch'], res['fit_us_per_batch_cpu']))
    if 'baseline' in med:
        for key in KEYS:
            print('ratio mxmod/baseline %-13s %.2f  cpu %.2f' % (
                key, med['mxmod'][key] / med['baseline'][key],
                med['mxmod'][key + '_cpu'] / med['baseline'][key + '_cpu']))
    if 'mxnet' in med:
        for key in KEYS:
            print('ratio mxmod/mxnet %-16s %.2f  cpu %.2f' % (
                key, med['mxmod'][key] / med['mxnet'][key],
                med['mxmod'][key + '_cpu'] / med['mxnet'][key + '_cpu']))
    else:
        print('MXNet reference: fit 509 us/batch (reference/README.md); ratio %.2f'
              % (med['mxmod']['fit_us_per_batch'] / 509.0))


if __name__ == '__main__':
    main()
