"""Running one call per device concurrently (a thread per context).

numpy and cupy release the GIL inside their kernels, so executors of different contexts overlap.
One device, or ``MXMOD_EXEC_THREADS=0``, runs inline. Each call runs with its GPU (if any) as
cupy's current device. Exceptions are re-raised in the caller."""
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from ..context import device_scope

__all__ = ['run_per_device']

_POOLS = {}
_LOCK = threading.Lock()


def _enabled():
    return os.environ.get('MXMOD_EXEC_THREADS', '1') not in ('0', 'false', 'False', '')


def _pool(size):
    with _LOCK:
        pool = _POOLS.get(size)
        if pool is None:
            pool = _POOLS[size] = ThreadPoolExecutor(max_workers=size,
                                                     thread_name_prefix='mxmod-exec')
        return pool


def run_per_device(func, items, contexts=None):
    """Call ``func(i, item)`` for every item (one per device, on ``contexts[i]`` when given) and
    return the results in order."""
    contexts = contexts or [None] * len(items)

    def call(i):
        with device_scope(contexts[i]):
            return func(i, items[i])
    nested = threading.current_thread().name.startswith('mxmod-exec')
    if len(items) <= 1 or nested or not _enabled():
        return [call(i) for i in range(len(items))]
    futures = [_pool(len(items)).submit(call, i) for i in range(len(items))]
    return [f.result() for f in futures]
