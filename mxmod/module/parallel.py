"""Running one call per device concurrently (a thread per context).

numpy and cupy release the GIL inside their kernels, so executors of different contexts overlap.
One device, or ``MXMOD_EXEC_THREADS=0``, runs inline. Exceptions are re-raised in the caller."""
import os
import threading
from concurrent.futures import ThreadPoolExecutor

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


def run_per_device(func, items):
    """Call ``func(i, item)`` for every item (one per device) and return the results in order."""
    nested = threading.current_thread().name.startswith('mxmod-exec')
    if len(items) <= 1 or nested or not _enabled():
        return [func(i, item) for i, item in enumerate(items)]
    futures = [_pool(len(items)).submit(func, i, item) for i, item in enumerate(items)]
    return [f.result() for f in futures]
