"""A 1,000,000 x 64 Embedding with ``sparse_grad=True`` and a row_sparse weight, batch 128 x 8
tokens, SGD: time per ``forward_backward`` + ``update`` step, mxmod against MXNet 1.9.1, one
thread, interleaved rounds (each round runs both in fresh processes), medians.

    python bench/bench_sparse_embedding.py [--rounds 3] [--steps 50] [--vocab 1000000]
                                           [--mxnet /tmp/mxnet-ref/bin/python]

Also prints each implementation's peak resident memory (the table itself is vocab x dim x 4
bytes: 244 MiB at 1M rows, 2.4 GiB at 10M).
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = r'''
import json, sys, time
import numpy as np
mod_name, steps, vocab, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
mx = __import__(mod_name)
data = mx.sym.Variable('data')
weight = mx.sym.Variable('embed_weight', stype='row_sparse')
embed = mx.sym.Embedding(data, weight=weight, input_dim=vocab, output_dim=dim, sparse_grad=True,
                         name='embed')
pooled = mx.sym.sum(embed, axis=1)
net = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(pooled, num_hidden=1, name='fc'),
                                    name='out')
mod = mx.mod.Module(net, data_names=['data'], label_names=['out_label'], context=mx.cpu())
mod.bind([('data', (128, 8))], [('out_label', (128, 1))])
mod.init_params(mx.init.Uniform(0.01))
mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1})
rs = np.random.RandomState(0)
batches = [mx.io.DataBatch([mx.nd.array(rs.randint(0, vocab, (128, 8)))],
                           [mx.nd.array(rs.rand(128, 1))]) for _ in range(8)]
for b in batches[:3]:
    mod.forward_backward(b); mod.update()
mx.nd.waitall()
times = []
for i in range(steps):
    t = time.perf_counter()
    mod.forward_backward(batches[i % 8]); mod.update()
    mx.nd.waitall()
    times.append(time.perf_counter() - t)
import resource
print(json.dumps({'ms': 1e3 * float(np.median(times)),
                  'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.}))
'''


def run(python, module, args, env):
    out = subprocess.run([python, '-c', WORKER, module, str(args.steps), str(args.vocab),
                          str(args.dim)], env=env, capture_output=True, text=True, timeout=1800)
    if out.returncode:
        raise RuntimeError('%s failed:\n%s' % (module, out.stderr[-3000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--steps', type=int, default=50)
    parser.add_argument('--vocab', type=int, default=1000000)
    parser.add_argument('--dim', type=int, default=64)
    parser.add_argument('--mxnet', default='/tmp/mxnet-ref/bin/python')
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1',
               PYTHONPATH=os.path.dirname(HERE))
    impls = [('mxmod', sys.executable, 'mxmod')]
    if os.path.exists(args.mxnet):
        impls.append(('mxnet', args.mxnet, 'mxnet'))
    samples = {name: [] for name, _, _ in impls}
    rss = {name: [] for name, _, _ in impls}
    for rnd in range(args.rounds):
        for name, python, module in (impls if rnd % 2 == 0 else impls[::-1]):
            got = run(python, module, args, env)
            samples[name].append(got['ms'])
            rss[name].append(got['rss_mb'])
    med = {k: float(np.median(v)) for k, v in samples.items()}
    for name in med:
        print('%-6s %8.2f ms/step, peak RSS %.0f MiB  (rounds: %s)'
              % (name, med[name], max(rss[name]), ', '.join('%.2f' % v for v in samples[name])))
    if 'mxnet' in med:
        print('mxmod / MXNet time per step: %.2f' % (med['mxmod'] / med['mxnet']))


if __name__ == '__main__':
    main()
