"""Run under MPI: rank 1 fails while the other ranks wait for it in a collective.

Usage: fault.py raise|kill|async_raise. ``raise``: rank 1 raises; ``kill``: rank 1 kills itself
with SIGKILL; ``async_raise``: like raise, with dist_async and a server rank. A correct launcher
ends the whole job quickly with a non-zero exit status."""
import os
import signal
import sys

import mxmod as mx

MODE = sys.argv[1]
kv = mx.kv.create('dist_async' if MODE == 'async_raise' else 'dist_sync')
kv.init('w', mx.nd.zeros((4,)))
if kv.rank == 1:
    if MODE == 'kill':
        os.kill(os.getpid(), signal.SIGKILL)
    raise RuntimeError('boom from rank 1')
if MODE == 'async_raise':
    kv.barrier()
else:
    kv.push('w', mx.nd.ones((4,)))
raise AssertionError('rank %d got past a collective that rank 1 never joined' % kv.rank)
