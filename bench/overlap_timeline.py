"""Where a distributed step's time goes with gradient overlap: per step, backward's duration, the
CPU time of the main thread and of the communication thread (and of the watched waits in it),
and, with --show, each bucket's start and end on the communication thread against backward.

Run under the launcher (one BLAS thread per rank), e.g.

    OMP_NUM_THREADS=1 MXMOD_NET_EMULATION="bandwidth=1.6Gbit/s,latency=50us" \\
        python -m mxmod.launch -n 2 python bench/overlap_timeline.py lstm [--no-overlap] [--show]

Workloads are those of bench_overlap.py (resnet20, lstm, mlp50m, ...)."""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import mxmod as mx  # noqa: E402
from mxmod.kvstore import peer_watch  # noqa: E402
from mxmod.module.overlap_policy import fit_step  # noqa: E402
from bench_overlap import make_module  # noqa: E402


class Recorder(object):
    """Wraps the exchange's bucket calls and the watched waits to time them."""

    def __init__(self, exchange):
        self.exchange = exchange
        self.t0 = 0.0
        self.events = []
        self.comm_cpu = self.wait_cpu = 0.0
        reduce_, pull = exchange._reduce, exchange._pull_weights

        def timed_reduce(bucket, private=False):
            self._timed('bucket %d' % bucket, lambda: reduce_(bucket, private),
                        self._bytes(bucket))

        def timed_pull():
            self._timed('pull', pull, 0)
        exchange._reduce, exchange._pull_weights = timed_reduce, timed_pull
        wait = peer_watch.PeerWatch.wait

        def timed_wait(watch, test, blame):
            cpu = time.thread_time()
            try:
                wait(watch, test, blame)
            finally:
                self.wait_cpu += time.thread_time() - cpu
        peer_watch.PeerWatch.wait = timed_wait

    def _bytes(self, bucket):
        ex = self.exchange
        grads = [ex.group.grad_arrays[ex._index[n]][0] for n in ex.buckets[bucket]]
        return sum(g.size * np.dtype(g.dtype).itemsize for g in grads)

    def _timed(self, label, fn, nbytes):
        cpu, start = time.thread_time(), time.perf_counter()
        try:
            fn()
        finally:
            end = time.perf_counter()
            self.comm_cpu += time.thread_time() - cpu
            self.events.append((label, start - self.t0, end - self.t0, nbytes))

    def start(self):
        self.events = []
        self.comm_cpu = self.wait_cpu = 0.0
        self.t0 = time.perf_counter()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('workload')
    parser.add_argument('--steps', type=int, default=20)
    parser.add_argument('--no-overlap', action='store_true')
    parser.add_argument('--show', type=int, default=0, help='print the last N steps in full')
    args = parser.parse_args()
    kv = mx.kv.create('dist_sync')
    mod, batch = make_module(args.workload, kv)
    exchange = mod._exchange()
    exchange.overlap = not args.no_overlap
    rec = Recorder(exchange)
    steps = []
    for _ in range(args.steps):
        kv.barrier()
        rec.start()
        main_cpu = time.thread_time()
        mod.forward(batch, is_train=True)
        forward_end = time.perf_counter() - rec.t0
        with fit_step(mod):     # as fit runs a step (its backward may overlap)
            mod.backward()
        backward_end = time.perf_counter() - rec.t0
        mod.update()
        mod._drain_comm()
        step = time.perf_counter() - rec.t0
        steps.append(dict(forward=forward_end, backward=backward_end - forward_end, step=step,
                          main_cpu=time.thread_time() - main_cpu, comm_cpu=rec.comm_cpu,
                          wait_cpu=rec.wait_cpu, events=list(rec.events),
                          backward_end=backward_end))
    if kv.rank == 0:
        kept = steps[2:]
        med = {k: 1e3 * float(np.median([s[k] for s in kept]))
               for k in ('backward', 'step', 'main_cpu', 'comm_cpu', 'wait_cpu')}
        print('%s, %d ranks, overlap %s, %d buckets (ms, medians of %d steps): step %.1f, '
              'backward %.1f, CPU main %.1f, communication %.1f (waits %.1f)'
              % (args.workload, kv.num_workers, 'off' if args.no_overlap else 'on',
                 len(exchange.buckets), len(kept), med['step'], med['backward'], med['main_cpu'],
                 med['comm_cpu'], med['wait_cpu']))
        for s in steps[len(steps) - args.show:] if args.show else []:
            print('forward ends %.1f, backward ends %.1f, step %.1f'
                  % (1e3 * s['forward'], 1e3 * s['backward_end'], 1e3 * s['step']))
            for label, start, end, nbytes in s['events']:
                print('   %-10s %7.1f -> %7.1f  (%5.1f ms, %d B)'
                      % (label, 1e3 * start, 1e3 * end, 1e3 * (end - start), nbytes))
    kv.barrier()


if __name__ == '__main__':
    main()
