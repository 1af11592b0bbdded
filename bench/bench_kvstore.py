"""dist_sync pushpull bandwidth against one raw MPI Allreduce of the same bytes.

The gradient set is shaped like ResNet-50's parameters (161 float32 arrays, about 25.6M values,
102 MB): convolutions, BatchNorm gammas/betas and the classifier. Every round runs each variant
once (so a drifting machine load hits all alike); the median and the best round after a warm-up
are printed as algorithm bandwidth (bytes of the gradient set / seconds):

- raw: one ``MPI_Allreduce`` of a single buffer holding all the bytes, in place and send->recv;
- pushpull (list): ``kv.pushpull(keys, grads)`` for all keys in one call (small arrays fused);
- pushpull (list, sgd on store): the same with ``set_optimizer(SGD)`` (Module's default path);
- pushpull (per key): one call per key, Module's current calling pattern.

Usage: python bench/bench_kvstore.py [--reps N] [-n WORKERS]   (re-launches itself under
``python -m mxmod.launch``), or ``python -m mxmod.launch -n 2 python bench/bench_kvstore.py``.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np


def resnet50_shapes():
    """Parameter shapes of ResNet-50 v1 (conv weights, BatchNorm gamma/beta, fc)."""
    shapes = [(64, 3, 7, 7), (64,), (64,)]
    in_ch = 64
    for width, blocks in zip((64, 128, 256, 512), (3, 4, 6, 3)):
        for block in range(blocks):
            for out_ch, cin, kernel in ((width, in_ch, 1), (width, width, 3),
                                        (4 * width, width, 1)):
                shapes += [(out_ch, cin, kernel, kernel), (out_ch,), (out_ch,)]
            if block == 0:
                shapes += [(4 * width, in_ch, 1, 1), (4 * width,), (4 * width,)]
            in_ch = 4 * width
    return shapes + [(1000, 2048), (1000,)]


def _round_robin(variants, comm, reps):
    """Run every variant once per round (so drifting machine load hits all alike); return
    (median, best) seconds of each, the slowest rank deciding."""
    for _, fn in variants:
        fn()
    times = [[] for _ in variants]
    for _ in range(reps):
        for i, (_, fn) in enumerate(variants):
            comm.Barrier()
            tic = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - tic)
    return [(float(np.max(comm.allgather(float(np.median(t))))),
             float(np.max(comm.allgather(float(np.min(t)))))) for t in times]


def _variants(mx, MPI, kv, kv_sgd, keys, grads, shapes):
    comm = kv._comm  # pylint: disable=protected-access
    flat = np.concatenate([g._data.reshape(-1) for g in grads])
    recv = np.empty_like(flat)
    outs = [mx.nd.zeros(s) for s in shapes]

    def per_key():
        for key, grad in zip(keys, grads):
            kv.pushpull(key, grad)
    return [('raw MPI_Allreduce, one buffer, in place',
             lambda: comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM)),
            ('raw MPI_Allreduce, one buffer, send->recv',
             lambda: comm.Allreduce(flat, recv, op=MPI.SUM)),
            ('kv.pushpull(list of keys)', lambda: kv.pushpull(keys, grads)),
            ('kv.pushpull(list, out=), SGD on store',
             lambda: kv_sgd.pushpull(keys, grads, out=outs)),
            ('kv.pushpull per key (161 calls)', per_key)]


def run(reps):
    """Measure on this MPI job; rank 0 prints the table."""
    import mxmod as mx  # pylint: disable=import-outside-toplevel
    from mpi4py import MPI  # pylint: disable=import-outside-toplevel
    shapes = resnet50_shapes()
    keys = ['p%03d' % i for i in range(len(shapes))]
    rs = np.random.RandomState(0)
    grads = [mx.nd.array(rs.rand(*s).astype(np.float32) * 1e-3) for s in shapes]
    nbytes = sum(g._data.nbytes for g in grads)
    kv = mx.kv.create('dist_sync')
    kv.init(keys, [mx.nd.zeros(s) for s in shapes])
    kv_sgd = mx.kv.create('dist_sync')
    kv_sgd.set_optimizer(mx.optimizer.SGD(learning_rate=1e-9, momentum=0.9))
    kv_sgd.init(keys, [mx.nd.zeros(s) for s in shapes])
    variants = _variants(mx, MPI, kv, kv_sgd, keys, grads, shapes)
    seconds = _round_robin(variants, kv._comm, reps)  # pylint: disable=protected-access
    if kv.rank == 0:
        raw_median = nbytes / min(sec[0] for sec in seconds[:2])
        raw_best = nbytes / min(sec[1] for sec in seconds[:2])
        print('gradient set: %d arrays, %.1fM float32 values, %.1f MB; %d workers; bucket %.1f MB;'
              ' %d rounds' % (len(shapes), nbytes / 4e6, nbytes / 1e6, kv.num_workers,
                              kv._bucketer.bucket_size / 2.0 ** 20, reps))  # pylint: disable=protected-access
        print('%-42s %21s %21s' % ('', 'median (% of raw)', 'best (% of raw)'))
        for (name, _), (median, best) in zip(variants, seconds):
            print('%-42s %6.1f ms %5.2f GB/s %4.0f%%  %6.1f ms %5.2f GB/s %4.0f%%'
                  % (name, median * 1e3, nbytes / median / 1e9, 100.0 * nbytes / median / raw_median,
                     best * 1e3, nbytes / best / 1e9, 100.0 * nbytes / best / raw_best))
        print('(% of raw: against the faster of the two raw MPI_Allreduce forms)')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--reps', type=int, default=7)
    parser.add_argument('-n', '--workers', type=int, default=2)
    args = parser.parse_args()
    if 'MXMOD_WORLD_SIZE' not in os.environ and 'PMI_SIZE' not in os.environ:
        sys.exit(subprocess.call([sys.executable, '-m', 'mxmod.launch', '-n', str(args.workers),
                                  'python', os.path.abspath(__file__), '--reps', str(args.reps)]))
    run(args.reps)


if __name__ == '__main__':
    main()
