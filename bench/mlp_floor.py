"""The floor of the MLP workload in plain numpy: the three layers' products (784-512-256-10,
batch 128) forward and backward, ReLU and its gradient, and mxmod's blocked SGD-momentum update,
with nothing else (no bias, softmax, metric, batch copy or framework). Prints process CPU time
(and wall-clock time) per step and per product, at the BLAS threads the environment gives
(OMP_NUM_THREADS=1 for one) or, with --threads, at each of those counts in turn (threadpoolctl).

    OMP_NUM_THREADS=1 python bench/mlp_floor.py [--steps 100]
    python bench/mlp_floor.py --threads 1,2,1,2
"""
import argparse
import collections
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from mxmod.ops import optimizer_kernels as K  # noqa: E402  pylint: disable=wrong-import-position


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--steps', type=int, default=100)
    parser.add_argument('--threads', default=None,
                        help='comma-separated BLAS thread counts to run in turn')
    args = parser.parse_args()
    rs = np.random.RandomState(0)
    batch, dims = 128, [784, 512, 256, 10]
    data = rs.rand(50 * batch, dims[0]).astype(np.float32)
    weights = [(rs.randn(dims[i + 1], dims[i]) * 0.05).astype(np.float32) for i in range(3)]
    grads = [np.zeros_like(w) for w in weights]
    moms = [np.zeros_like(w) for w in weights]
    head_grad = (rs.randn(batch, dims[-1]) * 0.01).astype(np.float32)
    scalars = K.scalars(np.dtype(np.float32), 0.9, 0.01, 0.0, 1.0 / batch, -1.0)
    spent = collections.Counter()

    def product(tag, a, b, out=None):
        tic = time.process_time()
        res = np.matmul(a, b, out=out)
        spent[tag] += time.process_time() - tic
        return res

    def step(i):
        x = data[(i % 50) * batch:(i % 50 + 1) * batch].copy()
        acts, h = [x], x
        for layer, w in enumerate(weights):
            h = product('forward', h, w.T)
            if layer < 2:
                h = np.maximum(h, 0)
            acts.append(h)
        dy = head_grad
        for layer in (2, 1, 0):
            product('weight gradient', dy.T, acts[layer], out=grads[layer])
            if layer > 0:
                dy = product('data gradient', dy, weights[layer]) * (acts[layer] > 0)
        tic = time.process_time()
        for w, g, m in zip(weights, grads, moms):
            K.mom_update_into(m, w, g, *scalars)
        spent['update'] += time.process_time() - tic

    def run(label):
        for i in range(20):
            step(i)
        spent.clear()
        tic, wall = time.process_time(), time.perf_counter()
        for i in range(args.steps):
            step(i)
        total = (time.process_time() - tic) / args.steps
        wall = (time.perf_counter() - wall) / args.steps
        print('%s%.0f us of CPU per step (%.0f samples per CPU second), %.0f us of wall clock '
              '(%.0f samples/s): %s' % (
                  label, total * 1e6, batch / total, wall * 1e6, batch / wall,
                  ', '.join('%s %.0f us' % (k, v / args.steps * 1e6)
                            for k, v in sorted(spent.items()))), flush=True)

    if args.threads is None:
        run('')
        return
    from threadpoolctl import threadpool_limits  # pylint: disable=import-outside-toplevel
    for count in args.threads.split(','):
        with threadpool_limits(int(count), 'blas'):
            run('%s thread(s): ' % count)

if __name__ == '__main__':
    main()
