"""The compiled kernels on the threads the governor allows (:mod:`mxmod.threads`).

Every kernel is compiled with ``nogil=True``, so a kernel called from several Python threads runs
on several cores at once. :func:`run` calls one kernel on a few pieces of its work (disjoint
output elements: images, row blocks, the partial weight gradients of fixed image groups), the
first piece on the calling thread and the others on a small pool of persistent helper threads,
and returns when all are done. Each output element is computed by the same arithmetic in the
same order whatever the number of pieces, so results are bit-identical for every thread count.

- :func:`threads` is the number of pieces a kernel may use now: the governor's thread count
  (``MXMOD_NUM_THREADS``, ``set_num_threads``, or in 'auto' the idle cores: one while another
  process keeps a core busy); one where ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` /
  ``MKL_NUM_THREADS`` decide (mxmod then leaves threads to those libraries). With one piece a
  kernel is called directly, as before. While kernels run on several threads the BLAS
  libraries get one (``threads.kernels_threaded``): OpenBLAS's idle threads spin on the cores
  the helpers need.
- The pool is used by one caller at a time; a second thread that calls a kernel meanwhile (or a
  kernel started from a helper) runs all its pieces itself, one after another.
- A forked child (multiprocessing data loaders, launcher ranks) never inherits helper threads:
  its pool starts empty and is rebuilt on first use (``os.register_at_fork``).
- ``MXMOD_KERNEL_THREADS=0`` keeps every kernel on the calling thread (the BLAS libraries still
  follow the governor)."""
import os
import threading

__all__ = ['threads', 'run', 'split', 'MIN_WORK']

# a piece should be worth at least this many multiply-adds (about 5-20 us of a kernel) for the
# hand-over to another thread (about 7 us, see HELPER_ROUNDS) to pay
MIN_WORK = 1 << 18


# Hand-over without sleeping threads. A thread that sleeps (on a lock, or waiting for the GIL)
# took about 50 us to wake here, against 0.1-2 ms for a kernel's piece, so the threads watch
# counters instead (kpool_spin, without the GIL) and take the locks only once the counters say
# they are free: a helper looks for its next task for HELPER_ROUNDS looks (about 10 ns each)
# before it sleeps; the caller, after handing tasks out, waits up to BEGIN_ROUNDS for each
# helper to take the GIL and start, then SETTLE_ROUNDS more while the helper's kernel call
# releases it again (so that neither waits for the GIL), and at the end waits for the helpers'
# counters before their locks.
HELPER_ROUNDS = 200000
BEGIN_ROUNDS = 5000
SETTLE_ROUNDS = 300
CALLER_ROUNDS = 2000000
MAX_HELPERS = 15
_STRIDE = 8             # int64 counters 64 bytes apart (one cache line each)


def _spin():
    """The kpool_spin module, or None where numba is missing (then the locks alone are used)."""
    try:
        from . import kpool_spin  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    return kpool_spin


class _Helper(object):
    """A persistent helper thread. Counters (in the pool's ``counters``): tasks given (start),
    tasks begun (began), tasks done (done); the ``start`` and ``done`` locks carry the same
    events for threads that stopped watching."""

    def __init__(self, pool, index):
        self.start = threading.Lock()
        self.start.acquire()
        self.done = threading.Lock()
        self.done.acquire()
        self.counters = pool.counters
        base = 3 * index * _STRIDE
        self.slots = (base, base + _STRIDE, base + 2 * _STRIDE)
        self.spin = pool.spin
        self.sent = 0           # tasks given to it (the caller's count)
        self.task = None
        self.error = None
        self.thread = threading.Thread(target=self._loop, name='mxmod-kernel', daemon=True)
        self.thread.start()

    def _loop(self):
        counters, spin = self.counters, self.spin
        start, began, done = self.slots
        if spin is not None:
            spin.wait(counters, start, 1, HELPER_ROUNDS)
        seq = 0
        while True:
            seq += 1
            self.start.acquire()
            fn, args = self.task
            self.task = None
            counters[began] = seq
            try:
                fn(*args)
            except BaseException as err:  # pylint: disable=broad-except
                self.error = err
            self.done.release()
            if spin is not None:
                spin.post_and_wait(counters, done, seq, start, seq + 1, HELPER_ROUNDS, 0)
            else:
                counters[done] = seq

    def give(self, fn, args):
        """Hand ``fn(*args)`` to the helper and wait (briefly) until it has started it and
        released the GIL: the counter is written without the GIL held, so that the helper,
        which sees it at once, never waits for the GIL (and sleeps) meanwhile."""
        self.sent += 1
        self.task = (fn, args)
        self.start.release()
        if self.spin is None:
            self.counters[self.slots[0]] = self.sent
        else:
            self.spin.post_and_wait(self.counters, self.slots[0], self.sent, self.slots[1],
                                    self.sent, BEGIN_ROUNDS, SETTLE_ROUNDS)

    def join(self):
        if self.spin is not None:
            self.spin.wait(self.counters, self.slots[2], self.sent, CALLER_ROUNDS)
        self.done.acquire()


class _Pool(object):
    def __init__(self):
        import numpy  # pylint: disable=import-outside-toplevel
        self.busy = threading.Lock()
        self.helpers = []
        self.counters = numpy.zeros(3 * _STRIDE * MAX_HELPERS, dtype=numpy.int64)
        self.spin = _spin()

    def helpers_for(self, count):
        count = min(count, MAX_HELPERS)
        while len(self.helpers) < count:
            self.helpers.append(_Helper(self, len(self.helpers)))
        return self.helpers[:count]


_POOL = _Pool()
_OFF = os.environ.get('MXMOD_KERNEL_THREADS', '').strip().lower() in ('0', 'off', 'false', 'no')


def _after_fork():
    global _POOL    # pylint: disable=global-statement
    _POOL = _Pool()


if hasattr(os, 'register_at_fork'):
    os.register_at_fork(after_in_child=_after_fork)


def threads():
    """Pieces a kernel may split its work into now (1: the calling thread alone): the governor's
    thread count; 1 where the thread variables decide (mode 'env') or MXMOD_KERNEL_THREADS=0."""
    gov = _GOV[0]
    if gov is None:
        from .. import threads as mod  # pylint: disable=import-outside-toplevel
        gov = _GOV[0] = mod
    gov = gov.GOVERNOR
    if _OFF or gov.mode == 'env':
        return 1
    return gov.threads or 1


_GOV = [None]           # mxmod.threads, imported on first use


def split(units, work, limit=None):
    """Number of pieces for ``units`` independent parts (images, blocks) of ``work``
    multiply-adds in all: the thread limit, at most ``units``, each piece at least MIN_WORK."""
    count = threads() if limit is None else limit
    if count <= 1:
        return 1
    return max(1, min(count, units, int(work // MIN_WORK)))


def bounds(units, pieces, align=1):
    """``pieces + 1`` boundaries splitting ``units`` into nearly equal ranges (multiples of
    ``align`` except the last)."""
    blocks = -(-units // align)
    return [min(units, (blocks * k // pieces) * align) for k in range(pieces)] + [units]


def run(fn, pieces):
    """``fn(*args)`` for every ``args`` in ``pieces``: the first on this thread, the others on
    helper threads at the same time; returns when all are done (re-raising a helper's error)."""
    if len(pieces) == 1:
        fn(*pieces[0])
        return
    from ..threads import kernels_threaded  # pylint: disable=import-outside-toplevel
    kernels_threaded()          # the BLAS libraries step aside meanwhile (threads.py)
    pool = _POOL
    if not pool.busy.acquire(False):
        for args in pieces:
            fn(*args)
        return
    started = []
    try:
        helpers = pool.helpers_for(len(pieces) - 1)
        for helper, args in zip(helpers, pieces[1:]):
            helper.give(fn, args)
            started.append(helper)
        for args in pieces[1 + len(helpers):]:      # beyond MAX_HELPERS: this thread
            fn(*args)
        fn(*pieces[0])
    finally:
        error = None
        for helper in started:
            helper.join()
            if helper.error is not None:
                error, helper.error = helper.error, None
        pool.busy.release()
    if error is not None:
        raise error
