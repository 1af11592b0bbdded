"""mxmod.threads: the BLAS thread count chosen at import and adapted to the machine's load."""
import os
import subprocess
import sys

import pytest
from threadpoolctl import threadpool_info

from mxmod import threads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _blas_threads():
    return {lib['num_threads'] for lib in threadpool_info() if lib['user_api'] == 'blas'}


@pytest.fixture
def governor(monkeypatch):
    """A fresh auto-mode governor over 4 cores whose machine samples the test controls; the
    module's governor and the real BLAS thread count are restored afterwards."""
    saved = threads.GOVERNOR
    before = _blas_threads()
    monkeypatch.setattr(threads, 'available_cores', lambda: 4)
    clock = {'now': 100.0, 'busy': 0.0, 'cpu': 0.0, 'runnable': 0.0}
    # the others' threads runnable now: as many as the cores they kept busy lately
    monkeypatch.setattr(threads, '_runnable_others', lambda: clock['runnable'])
    monkeypatch.setattr(threads, '_machine_busy', lambda: clock['busy'])
    monkeypatch.setattr(threads, '_now', lambda: clock['now'])
    monkeypatch.setattr(threads, '_cpu', lambda: clock['cpu'])
    gov = threads.GOVERNOR = threads.Governor(environ={})
    gov.clock = clock
    yield gov
    threads.GOVERNOR = saved
    saved.apply(saved.threads or max(before))


def _advance(gov, seconds, ours, others):
    """Let ``seconds`` pass with this process using ``ours`` cores and others ``others``."""
    gov.clock['now'] += seconds
    gov.clock['cpu'] += ours * seconds
    gov.clock['busy'] += (ours + others) * seconds
    gov.clock['runnable'] = others


def test_auto_uses_idle_cores_and_backs_off_under_load(governor):
    assert governor.mode == 'auto' and governor.threads == 4
    assert _blas_threads() == {4}
    _advance(governor, 1.5, ours=3.4, others=0.6)     # one neighbour wakes up: 3 threads
    threads.tick()
    assert governor.threads == 3 and _blas_threads() == {3}
    _advance(governor, 1.5, ours=1.0, others=3.0)     # a busy machine: one thread
    threads.tick()
    assert governor.threads == 1
    _advance(governor, 0.2, ours=1.0, others=0.0)     # too soon to look again
    threads.tick()
    assert governor.threads == 1
    _advance(governor, 1.5, ours=1.0, others=0.1)     # idle again: every core
    threads.tick()
    assert governor.threads == 4 and _blas_threads() == {4}


def test_freed_cores_are_taken_back_within_a_short_window(governor):
    """Below every core the governor looks again after FIRST_LOOK seconds, not INTERVAL: a
    neighbour's run that ends (a benchmark's other worker finishing its warm-up) gives its
    cores back to the kernels' threads within a fraction of a second."""
    _advance(governor, 1.5, ours=1.0, others=3.0)     # a busy machine: one thread
    threads.tick()
    assert governor.threads == 1
    assert governor.next_look == pytest.approx(governor.clock['now'] + threads.FIRST_LOOK)
    _advance(governor, threads.FIRST_LOOK, ours=1.0, others=3.0)     # still busy
    threads.tick()
    assert governor.threads == 1
    _advance(governor, threads.FIRST_LOOK, ours=1.0, others=0.0)     # the neighbour stopped
    threads.tick()
    assert governor.threads == 4
    assert governor.next_look == pytest.approx(governor.clock['now'] + threads.INTERVAL)


def test_a_neighbour_that_stopped_within_the_window_counts_by_the_run_queue(governor):
    _advance(governor, 1.5, ours=1.0, others=3.0)     # busy, and runnable now: one thread
    threads.tick()
    assert governor.threads == 1
    _advance(governor, threads.FIRST_LOOK, ours=1.0, others=1.5)     # half the window ...
    governor.clock['runnable'] = 0.0                  # ... and gone now: every core
    threads.tick()
    assert governor.threads == 4
    _advance(governor, 1.5, ours=2.0, others=2.0)     # busy while we compute: back off
    threads.tick()
    assert governor.threads == 2


def test_a_window_spent_waiting_is_not_measured(governor, monkeypatch):
    """Between epochs, or while the other workers of an interleaved benchmark run, this process
    waits; the cores the others use then are free again when it computes. Such a window is not
    counted: the run queue decides, and a short window measured while computing follows."""
    runnable = {'others': 3.0}
    monkeypatch.setattr(threads, '_runnable_others', lambda: runnable['others'])
    _advance(governor, 1.5, ours=1.0, others=3.0)     # a busy machine: one thread
    threads.tick()
    assert governor.threads == 1
    _advance(governor, 2.0, ours=0.1, others=3.0)     # we waited while the others computed
    runnable['others'] = 0.0
    threads.tick()                                    # ... and now they wait: the run queue
    assert governor.threads == 4 and _blas_threads() == {4}
    assert governor.next_look == pytest.approx(governor.clock['now'] + threads.FIRST_LOOK)
    _advance(governor, threads.FIRST_LOOK, ours=3.9, others=0.1)
    threads.tick()                                    # measured while computing: still idle
    assert governor.threads == 4
    assert governor.next_look == pytest.approx(governor.clock['now'] + threads.INTERVAL)
    _advance(governor, 2.0, ours=0.2, others=2.0)     # waiting again, a neighbour still runs
    runnable['others'] = 2.0
    threads.tick()
    assert governor.threads == 2
    _advance(governor, threads.FIRST_LOOK, ours=2.0, others=2.0)
    threads.tick()
    assert governor.threads == 2


def test_neighbours_running_only_while_we_wait_leave_us_the_cores(governor):
    """An interleaved benchmark: short epochs (ticks every 10 ms) alternate with pauses in which
    other workers keep three cores busy. Their load is not ours to avoid; a neighbour busy while
    we compute is."""
    def epoch(others_meanwhile):
        for _ in range(30):
            _advance(governor, 0.01, ours=1.0, others=others_meanwhile)
            threads.tick()
    for _ in range(6):
        epoch(0.0)
        _advance(governor, 0.2, ours=0.0, others=3.0)
    epoch(0.0)
    assert governor.threads == 4
    for _ in range(6):
        epoch(3.0)
        _advance(governor, 0.5, ours=0.0, others=3.0)
    assert governor.threads == 1


def test_choose_counts_a_core_free_below_the_slack(governor):
    assert [governor.choose(x) for x in (0.0, 0.29, 0.31, 1.0, 2.5, 9.0)] == [4, 4, 3, 3, 1, 1]


def test_share_cores_gives_each_local_rank_its_part(governor):
    assert threads.share_cores(2) == 2
    # the other rank's two busy cores are expected, not a reason to back off
    _advance(governor, 1.5, ours=2.0, others=2.0)
    threads.tick()
    assert governor.threads == 2
    assert threads.share_cores(8) == 1
    with pytest.raises(ValueError, match='local_ranks'):
        threads.share_cores(0)


def test_set_num_threads_fixes_the_count(governor):
    threads.set_num_threads(2)
    assert governor.mode == 'fixed' and threads.get_num_threads() == 2
    _advance(governor, 5, ours=1.0, others=0.0)
    threads.tick()
    assert threads.get_num_threads() == 2 and _blas_threads() == {2}
    threads.set_num_threads(None)
    assert governor.mode == 'auto' and governor.threads == 4
    with pytest.raises(ValueError, match='positive'):
        threads.set_num_threads(0)


def test_environment_decides_the_mode():
    assert threads.Governor(environ={'OPENBLAS_NUM_THREADS': '1'}).mode == 'env'
    with pytest.raises(ValueError, match='MXMOD_NUM_THREADS'):
        threads.Governor(environ={'MXMOD_NUM_THREADS': 'many'})


def _imported_threads(env):
    code = 'import mxmod, threadpoolctl; print(mxmod.threads.GOVERNOR.mode, ' \
           '[i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"])'
    env = dict({k: v for k, v in os.environ.items() if 'NUM_THREADS' not in k}, PYTHONPATH=ROOT,
               **env)
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    return out.stdout.split(None, 1)


def test_import_applies_mxmod_num_threads_and_respects_blas_variables():
    assert _imported_threads({'MXMOD_NUM_THREADS': '3'}) == ['fixed', '[3]\n']
    assert _imported_threads({'OPENBLAS_NUM_THREADS': '2'}) == ['env', '[2]\n']
    mode, counts = _imported_threads({})
    assert mode == 'auto' and 1 <= eval(counts)[0] <= threads.available_cores()


def test_blas_steps_aside_while_kernels_run_on_threads(governor):
    """Compiled kernels on several threads (ops/kpool.py): the BLAS libraries get one thread
    until a look at the machine finds no threaded kernel since the previous look."""
    assert threads.kernels_threaded() == 4
    assert governor.threads == 4 and _blas_threads() == {1}
    _advance(governor, 1.5, ours=4.0, others=0.0)
    threads.tick()                                    # kernels ran in this window: still one
    assert _blas_threads() == {1}
    _advance(governor, 1.5, ours=4.0, others=0.0)
    threads.tick()                                    # none since: every core for BLAS
    assert governor.threads == 4 and _blas_threads() == {4}
    env = threads.Governor(environ={'OMP_NUM_THREADS': '2'})
    saved, threads.GOVERNOR = threads.GOVERNOR, env
    try:
        assert threads.kernels_threaded() == 1 and _blas_threads() == {4}
    finally:
        threads.GOVERNOR = saved


def test_own_runnable_threads_are_not_counted_as_other_processes_load():
    """A thread of this process that spins (as BLAS workers do after a product) is this
    process's own: _runnable_others does not count it as a neighbour's load."""
    import threading
    import time
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            pass
    worker = threading.Thread(target=spin)
    worker.start()
    try:
        time.sleep(0.05)
        assert max(threads._own_runnable() for _ in range(20)) >= 2
    finally:
        stop.set()
        worker.join()
    assert threads._own_runnable() >= 1


def test_fixed_count_gives_blas_its_threads_back_after_kernels_stop(governor):
    """With a fixed thread count the governor never looks at the machine, yet the BLAS
    libraries get their threads back once the kernels ran a whole INTERVAL on one thread."""
    threads.set_num_threads(2)
    threads.kernels_threaded()
    assert _blas_threads() == {1}
    for _ in range(2):
        governor.clock['now'] += threads.INTERVAL + 0.1
        threads.tick()
    assert governor.blas_single is False and _blas_threads() == {2}


def test_run_queue_read_again_soon_after_a_resume(governor, monkeypatch):
    """A process that was finishing when this one resumed (the worker that ran just before it)
    makes the resume choose fewer threads; RECHECK seconds later the run queue is read again and
    the freed cores are taken, without waiting for the first look. A neighbour still running
    keeps the count down."""
    runnable = {'others': 0.0}
    monkeypatch.setattr(threads, '_runnable_others', lambda: runnable['others'])
    _advance(governor, 1.5, ours=1.0, others=0.0)
    threads.tick()
    assert governor.threads == 4
    for still_running, expect in ((0.0, 4), (3.0, 1)):
        _advance(governor, 2.0, ours=0.1, others=0.0)     # waited
        runnable['others'] = 3.0                        # the other worker is just finishing
        threads.tick()
        assert governor.threads == 1 and governor.recheck is not None
        runnable['others'] = still_running
        governor.clock['now'] += threads.RECHECK / 2
        threads.tick()
        assert governor.threads == 1                    # not yet
        governor.clock['now'] += threads.RECHECK
        threads.tick()
        assert governor.threads == expect and governor.recheck is None
