"""Run under MPI: rank 1 fails while the other ranks wait for it in a collective.

Usage: fault.py raise|kill|async_raise|hybrid_raise. ``raise``: rank 1 raises; ``kill``: rank 1 kills itself
with SIGKILL; ``async_raise``: like raise, with dist_async and a server rank;
``hybrid_raise``: rank 1 raises while rank 0 waits for a synchronous round of a server-held table
(with an embedding cache). A correct launcher
ends the whole job quickly with a non-zero exit status."""
import os
import signal
import sys

import mxmod as mx

MODE = sys.argv[1]
kv = mx.kv.create('dist_async' if MODE == 'async_raise' else 'dist_sync')
kv.init('w', mx.nd.zeros((4,)))
if MODE == 'hybrid_raise':
    # dist_sync with a server: the row_sparse table lives there, updated in rounds
    kv.init('emb', mx.nd.sparse.zeros('row_sparse', (100, 2)))
    kv.set_embedding_cache('lfu', capacity=10, bound=2)
    if kv.rank == 1:
        raise RuntimeError('boom from rank 1')
    kv.push('emb', mx.nd.sparse.row_sparse_array(([[1., 1.]], [3]), shape=(100, 2)))
    kv.row_sparse_pull('emb', out=mx.nd.sparse.zeros('row_sparse', (100, 2)),
                       row_ids=mx.nd.array([3], dtype='int64'))
    raise AssertionError('rank %d read rows of a round rank 1 never joined' % kv.rank)
if kv.rank == 1:
    if MODE == 'kill':
        os.kill(os.getpid(), signal.SIGKILL)
    raise RuntimeError('boom from rank 1')
if MODE == 'async_raise':
    kv.barrier()
else:
    kv.push('w', mx.nd.ones((4,)))
raise AssertionError('rank %d got past a collective that rank 1 never joined' % kv.rank)
