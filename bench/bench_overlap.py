"""Overlap of gradient communication with backward, measured on 2 MPI workers (one thread each)
under an emulated network (MXMOD_NET_EMULATION).

For each workload the driver first profiles one process (``mxmod.tools.scaling``), picks a link
whose bandwidth makes the model's gradient bytes take about half of the one-process step
(``--comm-share``), then launches 2 workers that measure, in interleaved rounds:

- t_compute: forward + backward of the distributed module with the communication switched off
  (the same executors, no kvstore call);
- t_comm: the gradient exchange alone (the same buckets and calls as a step, incl. the store's
  optimizer), with nothing to overlap;
- t_step with overlap (as fit's steps run by default) and without (the buckets run in update).

Overlap efficiency = (t_compute + t_comm - t_step) / min(t_compute, t_comm): 1 when communication
hides completely, 0 when it simply adds. "hidden" is the step time overlap saved (step without
minus step with) over what the gradient-ready times allow it to hide. For the LSTM language
model, whose embedding and recurrent weights are final only when backward ends, the scaling
model's prediction from the measured gradient-ready times gives the best efficiency any
bit-identical overlap can reach, and the measured efficiency is reported against it. The same
runs on a 10 Gbit/s link are reported beside. "comm_cpu" is the CPU time of the exchange alone
(MPI's copies, the store's optimizer); "bound1c" scales the bound by the share of t_comm that is
not CPU work: with one core per rank (2 workers on this 2-core machine) the exchange's CPU work
runs on the core backward needs, so only the link's time can hide.

    python bench/bench_overlap.py [--workloads resnet20,mlp50m,lstm] [--steps 6] [--rounds 3]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import mxmod as mx  # noqa: E402
from mxmod.module.overlap_policy import fit_step  # noqa: E402
from mxmod.tools.scaling import model as scaling, profile as profiling, zoo  # noqa: E402

LSTM = dict(vocab=1000, embed=200, hidden=200, layers=2, seq=35, batch=32)


def lstm_symbol():
    """The unrolled 2 x 200 LSTM language model of bench_models (one sequence length)."""
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('softmax_label')
    embed = mx.sym.Embedding(data, input_dim=LSTM['vocab'], output_dim=LSTM['embed'],
                             name='embed')
    stack = mx.rnn.SequentialRNNCell()
    for i in range(LSTM['layers']):
        stack.add(mx.rnn.LSTMCell(num_hidden=LSTM['hidden'], prefix='lstm_l%d_' % i))
    outputs, _ = stack.unroll(LSTM['seq'], inputs=embed, merge_outputs=True)
    pred = mx.sym.Reshape(outputs, shape=(-1, LSTM['hidden']))
    pred = mx.sym.FullyConnected(pred, num_hidden=LSTM['vocab'], name='pred')
    return mx.sym.SoftmaxOutput(pred, mx.sym.Reshape(label, shape=(-1,)), name='softmax')


def workload(name):
    """(symbol, data shape, label shape, classes, integer data?) of a workload."""
    if name == 'lstm':
        shape = (LSTM['batch'], LSTM['seq'])
        return lstm_symbol(), shape, shape, LSTM['vocab'], True
    sym, shape, batch = zoo.build(name)
    return sym, (batch,) + shape, (batch,), None, False


def make_module(name, kvstore):
    sym, dshape, lshape, classes, integer = workload(name)
    mod = mx.mod.Module(sym, context=mx.cpu())
    mod.bind([('data', dshape)], [('softmax_label', lshape)])
    mx.random.seed(1)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(kvstore=kvstore, optimizer='sgd',
                       optimizer_params={'learning_rate': 0.01, 'momentum': 0.9})
    rs = np.random.RandomState(0)
    classes = classes or mod.output_shapes[0][1][-1]
    data = rs.randint(0, classes, dshape) if integer else rs.rand(*dshape)
    batch = mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(rs.randint(0, classes, lshape))])
    return mod, batch


# ---- worker side (under mxmod.launch) -----------------------------------------------------------
def _timed(fn, steps, cpu=None):
    times = []
    for _ in range(steps):
        tic, used = time.perf_counter(), time.thread_time()
        fn()
        times.append(time.perf_counter() - tic)
        if cpu is not None:
            cpu.append(time.thread_time() - used)
    return times


def worker(args):
    kv = mx.kv.create('dist_sync')
    mod, batch = make_module(args.workload, kv)
    exchange = mod._exchange()

    def compute():
        exchange.overlap = False
        mod.forward(batch, is_train=True)
        mod._exec_group.backward()

    def comm():
        exchange.overlap = False
        exchange.reduce()

    def step(overlap):
        def run():
            exchange.overlap = overlap
            with fit_step(mod):         # as fit runs a step (its backward may overlap)
                mod.forward_backward(batch)
            mod.update()
            mod._drain_comm()
        return run
    for fn in (compute, comm, step(True), step(False)):
        fn()
    samples = {'compute': [], 'comm': [], 'on': [], 'off': []}
    comm_cpu = []       # CPU time of the exchange alone (it runs on this thread then)
    for _ in range(args.rounds):
        for key, fn in (('compute', compute), ('comm', comm), ('on', step(True)),
                        ('off', step(False))):
            kv.barrier()
            samples[key] += _timed(fn, args.steps, comm_cpu if key == 'comm' else None)
    if kv.rank == 0:
        result = {k: float(np.median(v)) for k, v in samples.items()}
        result['comm_cpu'] = float(np.median(comm_cpu))
        result['buckets'] = len(exchange.buckets)
        with open(args.out, 'w') as out:
            json.dump(result, out)
    kv.barrier()


# ---- driver ----------------------------------------------------------------------------------
def calibrate(name, steps):
    mod, batch = make_module(name, None)
    prof = profiling.profile_module(mod, batch, steps=steps, name=name, threads=1)
    return prof


def launch(name, link, args):
    out = tempfile.mktemp(suffix='.json')
    env = dict(os.environ, MXMOD_NET_EMULATION=link, OMP_NUM_THREADS='1',
               OPENBLAS_NUM_THREADS='1', PYTHONPATH=os.path.dirname(HERE))
    cmd = [sys.executable, '-m', 'mxmod.launch', '-n', str(args.workers), 'python',
           os.path.abspath(__file__), '--worker', '--workload', name, '--out', out, '--steps', str(args.steps),
           '--rounds', str(args.rounds)]
    subprocess.run(cmd, env=env, check=True, timeout=3600)
    with open(out) as handle:
        return json.load(handle)


def efficiency(t_compute, t_comm, t_step):
    return (t_compute + t_comm - t_step) / min(t_compute, t_comm)


def bound(prof, measured):
    """Best efficiency a bit-identical overlap can reach from the gradient-ready times."""
    return scaling.overlap_bound(prof, measured['compute'], measured['comm'])


def one_core_bound(best, measured):
    """The bound when each rank has one core: the CPU work of the exchange (MPI's copies, the
    store's update) runs on the core backward needs, so only the rest of t_comm (the link's time)
    can hide."""
    comm = measured['comm']
    return best * max(0.0, comm - measured['comm_cpu']) / comm if comm > 0 else float('nan')


def hidden_share(measured, best):
    """Time overlap saved (step without minus step with) over the time the gradient-ready times
    allow it to hide (``bound * min(t_compute, t_comm)``). Unlike the efficiency, this does not
    count against overlap the time ranks wait for each other inside a step (skew), which the
    separately timed t_compute and t_comm leave out."""
    hideable = best * min(measured['compute'], measured['comm'])
    return (measured['off'] - measured['on']) / hideable if hideable > 0 else float('nan')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workloads', default='resnet20,mlp50m,lstm')
    parser.add_argument('--workers', type=int, default=2,
                        help='MPI workers (more than the cores: they share them)')
    parser.add_argument('--steps', type=int, default=5)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--comm-share', type=float, default=0.5,
                        help='emulated link: gradient bytes take this share of the 1-process step')
    parser.add_argument('--fast-link', default='bandwidth=10Gbit/s,latency=50us')
    parser.add_argument('--json', help='write every figure here')
    parser.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--workload', help=argparse.SUPPRESS)
    parser.add_argument('--out', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    report = {}
    print('%-11s %-24s %8s %8s %8s %8s %8s %7s %7s %7s %7s %7s'
          % ('workload', 'link', 't_comp', 't_comm', 'comm_cpu', 't_step', 'no-ovl', 'eff',
             'bound', 'bound1c', 'hidden', 'speedup'))
    for name in args.workloads.split(','):
        prof = calibrate(name, args.steps)
        total = sum(p['bytes'] for p in prof['params'])
        step1 = prof['forward_s'] + prof['backward_s'] + prof['update_s']
        # a ring all-reduce sends 2 (n - 1) / n of the gradient bytes from every worker
        sent = 2.0 * (args.workers - 1) / args.workers * total
        mbit = sent * 8 / (args.comm_share * step1) / 1e6
        for link in ('bandwidth=%.3gMbit/s,latency=50us' % mbit, args.fast_link):
            res = launch(name, link, args)
            eff = efficiency(res['compute'], res['comm'], res['on'])
            best = bound(prof, res)
            hidden = hidden_share(res, best)
            core_bound = one_core_bound(best, res)
            report.setdefault(name, []).append(dict(res, link=link, efficiency=eff, bound=best,
                                                    bound_one_core=core_bound, hidden=hidden,
                                                    grad_mb=total / 1e6))
            print('%-11s %-24s %8.1f %8.1f %8.1f %8.1f %8.1f %7.2f %7.2f %7.2f %7.2f %7.2f'
                  % (name, link.replace('bandwidth=', '').replace(',latency=', ' '),
                     1e3 * res['compute'], 1e3 * res['comm'], 1e3 * res['comm_cpu'],
                     1e3 * res['on'], 1e3 * res['off'], eff, best, core_bound, hidden,
                     res['off'] / res['on']))
    if args.json:
        with open(args.json, 'w') as out:
            json.dump(report, out, indent=1)


if __name__ == '__main__':
    main()
