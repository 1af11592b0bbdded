"""A 2-worker dist_sync sequence recorded from MXNet 1.9.1 (ps-lite) and replayed on mxmod.

Each worker sets 2-bit compression and the 'test' optimizer (weight += rescale_grad * grad),
initializes keys with rank-dependent values (rank 0's must win), then pushes per-device lists of
random gradients and pulls after every push. Usage: oracle_sequence.py OUT.json (each worker
writes OUT.json with ``.rank<r>`` inserted). Imports mxnet when MXMOD_ORACLE=1, else mxmod."""
import json
import os
import sys

import numpy as np

if os.environ.get('MXMOD_ORACLE') == '1':
    import mxnet as mx  # pylint: disable=import-error
else:
    import mxmod as mx

STEPS = 3


def grad(rank, step, dev, shape):
    rs = np.random.RandomState(100 * rank + 10 * step + dev)
    return rs.uniform(-0.8, 0.8, size=shape).astype(np.float32)


def main(out):
    kv = mx.kv.create('dist_sync')
    rank = kv.rank
    kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
    kv.set_optimizer(mx.optimizer.create('test', rescale_grad=2.0))
    kv.init('a', mx.nd.zeros((2, 3)))
    kv.init('b', mx.nd.ones((5,)) * (rank + 1))
    record = {'rank': rank, 'num_workers': kv.num_workers, 'a': [], 'b': []}
    ctxs = [mx.cpu(0), mx.cpu(1)]
    for step in range(STEPS):
        kv.push('a', [mx.nd.array(grad(rank, step, d, (2, 3)), ctx=c) for d, c in enumerate(ctxs)])
        kv.push('b', mx.nd.array(grad(rank, step, 5, (5,))))
        for key, shape in (('a', (2, 3)), ('b', (5,))):
            val = mx.nd.zeros(shape)
            kv.pull(key, out=val)
            record[key].append(val.asnumpy().tolist())
    with open(out.replace('.json', '.rank%d.json' % rank), 'w') as fout:
        json.dump(record, fout)


if __name__ == '__main__':
    main(sys.argv[1])
