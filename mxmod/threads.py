"""How many threads the BLAS (and OpenMP) libraries that numpy links may use, set at import with
threadpoolctl and kept right while training.

numpy's matrix products run on OpenBLAS (the dense layers' on Intel MKL when it is installed,
ops/blas.py), which by default starts one thread per core. When another process keeps a core
busy, those threads wait on each other and a training step can take several times longer than
on one thread. mxmod therefore chooses the number itself, unless the user did:

- ``MXMOD_NUM_THREADS=N`` uses N threads, always (``auto``, the default, adapts as below);
- otherwise, if ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` or ``MKL_NUM_THREADS`` is set,
  mxmod leaves the libraries as those variables configured them;
- otherwise (``auto``) it uses the cores this process may run on (its CPU affinity) that other
  processes leave idle: at import from the instantaneous run queue, and then, while an executor
  runs, from the CPU time the whole machine and this process used over the last second or so
  (``/proc/stat``), so that a busy neighbour brings it down to fewer threads and an idle machine
  back up within about a second.

:func:`set_num_threads` fixes the number from Python; :func:`share_cores` gives each of several
processes started on one machine (for example MPI ranks) its share, ``cores // local_ranks``."""
import math
import os
import time

__all__ = ['available_cores', 'get_num_threads', 'set_num_threads', 'share_cores', 'tick',
           'kernels_threaded', 'ENV_VARS']

ENV_VARS = ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS')
INTERVAL = 1.0          # seconds between two looks at the machine's load
SLACK = 0.3             # a core counts as free while others use less than this fraction of it
# a window in which this process used less than BUSY cores on average was mostly spent waiting
# (between epochs, or while other workers of an interleaved benchmark ran): what the others did
# then says nothing about the cores free while it computes, so such a window is not used; a new,
# shorter one (FIRST_LOOK seconds) starts instead, decided meanwhile from the run queue
BUSY = 0.5
FIRST_LOOK = 0.25
# two forward passes more than GAP seconds apart, with less than BUSY of a core used between
# them, mean this process waited: the window starts again there
GAP = 0.05
# seconds after a resume at fewer threads than cores when the run queue is read again
RECHECK = 0.03


def available_cores():
    """The number of cores this process may run on (its affinity mask, else ``os.cpu_count``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _machine_busy():
    """(busy seconds of all CPUs together since boot, from /proc/stat) or None elsewhere."""
    try:
        with open('/proc/stat', 'rb') as handle:
            fields = handle.readline().split()[1:]
    except OSError:
        return None
    ticks = [int(f) for f in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)       # idle + iowait
    return (sum(ticks[:8]) - idle) / _CLOCK_TICKS


def _own_runnable():
    """This process's threads runnable right now (at least the calling one): its BLAS library's
    workers and the compiled kernels' helpers wait spinning for a while after their work, and
    are not another process's load."""
    count = 0
    try:
        tasks = os.listdir('/proc/self/task')
    except OSError:
        return 1
    for tid in tasks:
        try:
            with open('/proc/self/task/%s/stat' % tid, 'rb') as handle:
                stat = handle.read()
        except OSError:
            continue
        # the state follows the parenthesised command name, which may hold spaces
        if stat[stat.rfind(b')') + 2:][:1] == b'R':
            count += 1
    return max(1, count)


def _runnable_others():
    """Other processes' threads runnable right now (/proc/loadavg, less this process's own
    runnable threads), or the 1-minute load."""
    try:
        with open('/proc/loadavg') as handle:
            fields = handle.read().split()
        running = int(fields[3].split('/')[0])
        return max(0.0, min(float(fields[0]), running - _own_runnable()))
    except (OSError, ValueError, IndexError):
        try:
            return os.getloadavg()[0]
        except (AttributeError, OSError):
            return 0.0


_now = time.monotonic
_cpu = time.process_time
try:
    _CLOCK_TICKS = os.sysconf('SC_CLK_TCK')
except (AttributeError, ValueError, OSError):
    _CLOCK_TICKS = 100


class Governor(object):
    """The thread count policy of this process (one instance, ``GOVERNOR``).

    ``mode`` is 'auto' (adapts to load), 'fixed' (MXMOD_NUM_THREADS or set_num_threads) or 'env'
    (the BLAS variables decide; mxmod changes nothing)."""

    def __init__(self, environ=None):
        environ = os.environ if environ is None else environ
        self.cores = available_cores()
        self.siblings = 0.0         # cores other processes of the same job are expected to use
        self.threads = None
        self.controller = None
        self.next_look = 0.0
        self.last = None
        self.last_tick = None       # (wall clock, process CPU time) of the last forward pass
        self.recheck = None         # when to read the run queue again after a resume
        # the compiled kernels ran on several threads since the last look (ops/kpool.py): the
        # BLAS libraries then get one thread, see kernels_threaded
        self.kernels_used = False
        self.blas_single = False
        wanted = environ.get('MXMOD_NUM_THREADS', 'auto').strip().lower()
        if wanted not in ('', 'auto'):
            self.mode = 'fixed'
            self.apply(_positive(wanted, 'MXMOD_NUM_THREADS'))
        elif any(environ.get(name) for name in ENV_VARS):
            self.mode = 'env'
        else:
            self.mode = 'auto'
            self.apply(self.choose(_runnable_others()))
            self.last = self._sample()
            self.next_look = _now() + INTERVAL

    def choose(self, others):
        """Threads for ``others`` cores' worth of load from other processes."""
        others = max(0.0, others - self.siblings)
        return int(min(self.cores, max(1, math.floor(self.cores - others + SLACK))))

    @staticmethod
    def _sample():
        busy = _machine_busy()
        return None if busy is None else (_now(), busy, _cpu())

    def resume(self):
        """This process waited since its last forward pass: start a new window now and choose
        from the run queue meanwhile (mode 'auto')."""
        self.last = self._sample()
        self.next_look = _now() + FIRST_LOOK
        wanted = self.choose(_runnable_others())
        if wanted != self.threads:
            self.apply(wanted)
        # below every core: the run queue is read again RECHECK seconds later (a process that
        # was finishing when this one resumed, such as the worker that ran just before it, is
        # gone by then), so a short epoch does not run at one thread until the first look
        self.recheck = _now() + RECHECK if self.threads < self.cores else None

    def rechecked(self):
        """The run queue read again after a resume: more threads if cores came free."""
        self.recheck = None
        wanted = self.choose(_runnable_others())
        if wanted > self.threads:
            self.apply(wanted)

    def look(self):
        """Measure the other processes' load since the last look and adjust (mode 'auto')."""
        self.release_blas()
        now = self._sample()
        last, self.last = self.last, now
        self.next_look = _now() + INTERVAL
        if now is None or last is None or now[0] - last[0] < 0.5 * FIRST_LOOK:
            return
        elapsed = now[0] - last[0]
        if (now[2] - last[2]) / elapsed < BUSY:
            # mostly idle since the last look: measure afresh while computing
            self.next_look = _now() + FIRST_LOOK
            wanted = self.choose(_runnable_others())
        else:
            others = ((now[1] - last[1]) - (now[2] - last[2])) / elapsed
            if others > SLACK:
                # a neighbour that ran in this window but is not runnable now (its run ended
                # within the window) leaves its core free: the run queue says so at once
                others = min(others, _runnable_others())
            wanted = self.choose(others)
        if wanted != self.threads:
            self.apply(wanted)
        if self.threads < self.cores:
            # below every core, look again soon: cores that came free (a neighbour's run ended)
            # are taken back within FIRST_LOOK seconds instead of INTERVAL
            self.next_look = min(self.next_look, _now() + FIRST_LOOK)

    def release_blas(self):
        """Give the BLAS libraries their threads back when no kernel ran on several threads
        since the previous call (each call starts a new period)."""
        if self.blas_single and not self.kernels_used:
            self.blas_single = False        # no threaded kernels lately: BLAS threads again
            self.apply(self.threads)
        self.kernels_used = False

    def apply(self, threads):
        """Limit every BLAS/OpenMP library loaded in this process to ``threads`` threads."""
        from threadpoolctl import ThreadpoolController  # pylint: disable=import-outside-toplevel
        # a library loaded since the last change (scipy's own BLAS, say) is found by a new scan
        self.controller = ThreadpoolController()
        for lib in self.controller.lib_controllers:
            if lib.user_api in ('blas', 'openmp'):
                lib.set_num_threads(1 if self.blas_single else threads)
        self.threads = threads


def _positive(text, name):
    try:
        value = int(text)
    except (TypeError, ValueError):
        value = 0
    if value < 1:
        raise ValueError('%s must be a positive integer or "auto", got %r' % (name, text))
    return value


GOVERNOR = Governor()


def tick():
    """Called by the executor once per forward pass: every INTERVAL seconds in 'auto' mode,
    re-measure the machine's load and adjust the thread count; after a pause in which this
    process waited, start measuring afresh. Costs two clock reads otherwise."""
    gov = GOVERNOR
    if gov.mode != 'auto':
        if gov.blas_single:
            # a fixed count: no looks at the machine, but the BLAS libraries still get their
            # threads back once the kernels ran a whole INTERVAL on one thread
            now = _now()
            if now >= gov.next_look:
                gov.next_look = now + INTERVAL
                gov.release_blas()
        return
    now, cpu = _now(), _cpu()
    last, gov.last_tick = gov.last_tick, (now, cpu)
    if last is not None and now - last[0] > GAP and cpu - last[1] < BUSY * (now - last[0]):
        gov.resume()
    elif now >= gov.next_look:
        gov.look()
    elif gov.recheck is not None and now >= gov.recheck:
        gov.rechecked()


def kernels_threaded():
    """Called by the compiled kernels (ops/kpool.py) when they run on several threads: while
    they do (until a look at the machine finds they did not since the previous one), the BLAS
    libraries get one thread. OpenBLAS's idle threads spin for a long while after each product;
    on the cores the kernels' threads need, they halved a LeNet's speed (both kinds of threads
    taking turns on two cores). Returns the thread count the kernels may use (mode 'env': 1,
    the libraries' threads being the user's)."""
    gov = GOVERNOR
    if gov.mode == 'env':
        return 1
    gov.kernels_used = True
    if not gov.blas_single:
        gov.blas_single = True
        gov.apply(gov.threads)
    return gov.threads


def blas_loaded():
    """Called when a BLAS library is loaded after import (ops/blas.py loads Intel MKL at the
    first large product): it gets the thread count chosen for the others (mode 'env': nothing,
    the library reads the variables itself)."""
    gov = GOVERNOR
    if gov.mode != 'env' and gov.threads is not None:
        gov.apply(gov.threads)


def get_num_threads():
    """The thread count mxmod set for the BLAS libraries (None in mode 'env': their own)."""
    return GOVERNOR.threads


def set_num_threads(threads=None):
    """Use ``threads`` BLAS threads from now on (no more adapting to load); ``None`` returns to
    the automatic choice.

    Parameters
    ----------
    threads : int or None
    """
    gov = GOVERNOR
    if threads is None:
        gov.mode = 'auto'
        gov.last = gov._sample()
        gov.apply(gov.choose(_runnable_others()))
        gov.next_look = _now() + INTERVAL
        return
    gov.mode = 'fixed'
    gov.apply(_positive(threads, 'threads'))


def share_cores(local_ranks, rank=None):
    """Give this process its share of the machine when ``local_ranks`` processes of one job run on
    it (MPI ranks launched on one host): at most ``cores // local_ranks`` threads, and the other
    ranks' load is not counted as a reason to use fewer. Returns the new thread limit.

    Parameters
    ----------
    local_ranks : int
        Processes of the job on this machine.
    rank : int, optional
        Unused today; kept so that a later change can pin each rank to its own cores.
    """
    del rank
    gov = GOVERNOR
    local_ranks = _positive(local_ranks, 'local_ranks')
    total = available_cores()
    gov.cores = max(1, total // local_ranks)
    gov.siblings = float(total - gov.cores)
    if gov.mode == 'auto':
        gov.apply(gov.choose(_runnable_others()))
    elif gov.mode == 'fixed' and gov.threads > gov.cores:
        gov.apply(gov.cores)
    return gov.threads
