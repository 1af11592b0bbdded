"""Two MPI workers training a 1,000,000 x 64 Embedding (batch 128 x 8 tokens per worker, SGD):
bytes on the wire per step and time per step for each way the embedding gradient can travel.

    python bench/bench_sparse_dist.py [--vocab 1000000] [--steps 30] [--dense-steps 5]

- ``dist_sync, row_sparse``: Embedding(sparse_grad=True), row_sparse weight: the gradient's rows
  are all-gathered (ids + values); the weight rows of each batch come from the local replica.
- ``dist_async, row_sparse (1 server)``: the table lives on a server rank; each step pushes the
  gradient rows and pulls the next batch's rows.
- ``dist_sync, dense``: the same model with a dense weight and gradient: the whole table is
  all-reduced every step (what mxmod did before row_sparse gradients travelled as rows).

Byte counts come from ``kv.comm_stats()`` of worker 0 (ring all-reduce: 2 (n-1)/n of the table
sent and received; all-gather: this worker's rows to each other worker, theirs received). One
machine, loopback, one thread per process.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = r'''
import json, sys, time
import numpy as np
import mxmod as mx
kvtype, stype, steps, vocab, dim, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
kv = mx.kv.create(kvtype)
data = mx.sym.Variable('data')
sparse = stype == 'row_sparse'
weight = mx.sym.Variable('embed_weight', stype=stype)
embed = mx.sym.Embedding(data, weight=weight, input_dim=vocab, output_dim=dim, sparse_grad=sparse,
                         name='embed')
net = mx.sym.LinearRegressionOutput(
    mx.sym.FullyConnected(mx.sym.sum(embed, axis=1), num_hidden=1, name='fc'), name='out')
mod = mx.mod.Module(net, data_names=['data'], label_names=['out_label'], context=mx.cpu())
mod.bind([('data', (128, 8))], [('out_label', (128, 1))])
rs = np.random.RandomState(0)
table = mx.nd.array(rs.uniform(-0.01, 0.01, (vocab, dim)).astype(np.float32))
mod.init_params(arg_params={'embed_weight': table.tostype(stype),
                            'fc_weight': mx.nd.ones((1, dim)) * 0.01, 'fc_bias': mx.nd.zeros((1,))})
mod.init_optimizer(kvstore=kv, optimizer='sgd', optimizer_params={'learning_rate': 0.1})
rs = np.random.RandomState(1 + kv.rank)
batches = [mx.io.DataBatch([mx.nd.array(rs.randint(0, vocab, (128, 8)))],
                           [mx.nd.array(rs.rand(128, 1))]) for _ in range(8)]
rows = lambda b: {'embed_weight': mx.nd.array(np.unique(b.data[0].asnumpy()), dtype='int64')}
def step(b):
    if sparse:
        mod.prepare(b, sparse_row_id_fn=rows)
    mod.forward_backward(b)
    mod.update()
for b in batches[:2]:
    step(b)
kv.barrier()
before = kv.comm_stats()
times = []
for i in range(steps):
    t = time.perf_counter()
    step(batches[i % 8])
    times.append(time.perf_counter() - t)
after = kv.comm_stats()
touched = float(np.mean([len(np.unique(b.data[0].asnumpy())) for b in batches]))
result = {k: (after[k] - before[k]) / steps for k in after if k != 'max_staleness'}
result.update(ms=1e3 * float(np.median(times)), touched_rows=touched, table_bytes=vocab * dim * 4)
if kv.rank == 0:
    with open(out, 'w') as fout:
        json.dump(result, fout)
kv.barrier()
'''


def run(kvtype, stype, steps, vocab, dim, servers=0):
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    with tempfile.TemporaryDirectory() as tmp:
        script, out = os.path.join(tmp, 'worker.py'), os.path.join(tmp, 'out.json')
        with open(script, 'w') as fout:
            fout.write(WORKER)
        cmd = [sys.executable, '-m', 'mxmod.launch', '-n', '2', '-s', str(servers), 'python',
               script, kvtype, stype, str(steps), str(vocab), str(dim), out]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
        if proc.returncode:
            raise RuntimeError('%s failed:\n%s' % (cmd, proc.stderr[-3000:]))
        with open(out) as fin:
            return json.load(fin)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--vocab', type=int, default=1000000)
    parser.add_argument('--dim', type=int, default=64)
    parser.add_argument('--steps', type=int, default=30)
    parser.add_argument('--dense-steps', type=int, default=5)
    args = parser.parse_args()
    cases = [('dist_sync, row_sparse', 'dist_sync', 'row_sparse', args.steps, 0),
             ('dist_async, row_sparse (1 server)', 'dist_async', 'row_sparse', args.steps, 1),
             ('dist_sync, dense', 'dist_sync', 'default', args.dense_steps, 0)]
    results = []
    for label, kvtype, stype, steps, servers in cases:
        res = run(kvtype, stype, steps, args.vocab, args.dim, servers)
        results.append((label, res))
        print(label, json.dumps(res), flush=True)
    table = results[0][1]['table_bytes']
    print('\n%-36s %10s %14s %14s %14s %12s' % ('worker 0, per step', 'ms', 'sparse B out',
                                                 'sparse B in', 'dense B out', 'vs dense'))
    dense_total = results[-1][1]['dense_bytes_sent'] + results[-1][1]['dense_bytes_received']
    for label, res in results:
        total = sum(res[k] for k in ('sparse_bytes_sent', 'sparse_bytes_received',
                                     'dense_bytes_sent', 'dense_bytes_received'))
        print('%-36s %10.2f %14.0f %14.0f %14.0f %12.5f' % (
            label, res['ms'], res['sparse_bytes_sent'], res['sparse_bytes_received'],
            res['dense_bytes_sent'], total / dense_total))
    row = 8 + args.dim * 4
    print('\ntouched rows per worker batch: %.0f (x %d bytes a row = %.0f bytes); table %d bytes'
          % (results[0][1]['touched_rows'], row, results[0][1]['touched_rows'] * row, table))


if __name__ == '__main__':
    main()
