"""Run under MPI: rank 1 ends normally (its script simply finishes) while rank 0 still has work.

Usage: early_exit.py MODE. Modes in which rank 0 then waits for rank 1 (a correct store raises an
MXNetError on rank 0 within seconds, which ends the job with a non-zero status):

- ``pushpull``: rank 1 runs 3 batches of pushpull, rank 0 runs 5;
- ``barrier``: rank 1 returns after init, rank 0 calls barrier();
- ``create``: rank 1 returns before creating any store, rank 0 creates one (under mxmod.launch);
- ``async_barrier``: dist_async with a server: rank 1 returns after init/set_optimizer, rank 0
  pushes and calls barrier();
- ``async_nostop``: dist_async; rank 1 skips the 'stop' message to the server and returns (the
  server, waiting for it, must raise instead).

``normal`` (dist_sync) and ``async_normal`` (dist_async with a server): every rank makes the same
calls but the ranks end at different times (rank 0 leaves right after its last collective, rank 1
after a pause; in ``normal`` rank 0 is the root of the last init): the job must exit 0 and print
nothing."""
import sys
import time

from mpi4py import MPI

import mxmod as mx
from mxmod.kvstore import mpi_comm

MODE = sys.argv[1]


def main():
    if MODE == 'create':
        if MPI.COMM_WORLD.Get_rank() == 1:
            return
        mx.kv.create('dist_sync')
        raise AssertionError('rank 0 created a store that rank 1 never created')
    kv = mx.kv.create('dist_async' if MODE.startswith('async') else 'dist_sync')
    kv.init('w', mx.nd.zeros((4,)))
    grad = mx.nd.ones((4,))
    if MODE == 'async_nostop':
        if kv.rank == 1:
            mpi_comm._STOP_SENT = True  # pylint: disable=protected-access
        return
    if MODE == 'async_barrier':
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
        if kv.rank == 1:
            return
        kv.push('w', grad)
        kv.barrier()
    elif MODE == 'barrier':
        if kv.rank == 1:
            sys.exit(0)
        kv.barrier()
    elif MODE == 'pushpull':
        for _ in range(3 if kv.rank == 1 else 5):
            kv.pushpull('w', grad)
        if kv.rank == 1:
            return
    elif MODE == 'async_normal':
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
        for _ in range(3):
            kv.pushpull('w', grad)
        kv.barrier()
        time.sleep(0.5 if kv.rank == 1 else 0)
        return
    else:
        for _ in range(3):
            kv.pushpull('w', grad)
        kv.barrier()
        kv.init('big', mx.nd.ones((1 << 16,)))
        time.sleep(0.5 if kv.rank == 1 else 0)
        return
    raise AssertionError('rank %d got past a call that rank 1 never made' % kv.rank)


main()
