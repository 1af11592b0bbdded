"""A rank killed by a signal (SIGKILL: no goodbye, no traceback) in a dist_async job: every rank
ends within seconds, the job exits non-zero, and the output names the dead rank; both when the
MPI launcher ends the job itself (mxmod.launch names the rank it lost) and when it leaves the
other ranks running (``mpiexec -disable-auto-cleanup``: the ranks waiting for the dead one notice
it on their own). The liveness rule itself is checked on real child processes, without MPI."""
import os
import signal
import subprocess
import sys
import time

import pytest

from mxmod.base import MXNetError
from mxmod.kvstore import liveness
from mxmod.kvstore.peer_watch import PeerWatch

from .dist_scripts.runner import MPIEXEC, require_mpi, script
from .test_dist_early_exit import _channel, _FakeComm, _FakeMPI

# seconds from the kill to the end of the whole job
END_WITHIN = 10


def _children():
    """{pid: parent pid} of every process (Linux /proc)."""
    parents = {}
    for name in os.listdir('/proc'):
        if name.isdigit():
            try:
                with open('/proc/%s/stat' % name, 'rb') as handle:
                    data = handle.read()
                parents[int(name)] = int(data[data.rindex(b')') + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    return parents


def _descendants(root):
    parents = _children()
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        kids = [child for child, parent in parents.items() if parent == pid]
        found += kids
        todo += kids
    return found


def _cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as handle:
            return handle.read().split(b'\0')
    except OSError:
        return []


def _server_rank(root):
    """The process id of the job's server rank (a python running mxmod.launch --server)."""
    for pid in _descendants(root):
        words = _cmdline(pid)
        if b'--server' in words and b'mpi4py' in words and b'python' in os.path.basename(
                words[0]):
            return pid
    return None


def _kill_server(cmd, tmp_path, env=None):
    """Run ``cmd`` (the dead_peer.py job), kill its server rank once both workers have talked
    to it; return (exit status, stderr, seconds from the kill to the job's end, ranks left)."""
    full = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1', **(env or {}))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=full, start_new_session=True)
    try:
        deadline = time.time() + 90
        while not all(os.path.exists(tmp_path / ('ready-%d' % r)) for r in (0, 1)):
            assert proc.poll() is None and time.time() < deadline, proc.communicate()
            time.sleep(0.05)
        server = _server_rank(proc.pid)
        assert server is not None, [_cmdline(p) for p in _descendants(proc.pid)]
        ranks = [p for p in _descendants(proc.pid) if b'mxmod.launch' in _cmdline(p)]
        os.kill(server, signal.SIGKILL)
        killed = time.time()
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            pytest.fail('the job still ran 60 s after its server was killed:\n%s' % err[-3000:])
        seconds = time.time() - killed
        time.sleep(0.2)
        left = [p for p in ranks if os.path.exists('/proc/%d' % p)
                and not liveness.is_dead(p, None)]
        return proc.returncode, err, seconds, left
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='finds ranks through /proc')
def test_killed_server_ends_a_launched_job_naming_it(tmp_path):
    require_mpi()
    cmd = [sys.executable, '-m', 'mxmod.launch', '-n', '2', '-s', '1', 'python',
           script('dead_peer.py'), str(tmp_path)]
    code, err, seconds, left = _kill_server(cmd, tmp_path)
    assert code != 0 and seconds < END_WITHIN and not left, (code, seconds, left, err[-3000:])
    assert 'server rank 2' in err and 'died' in err, err[-3000:]
    assert 'ran 60 s without noticing' not in err


def _hydra():
    try:
        out = subprocess.run([MPIEXEC, '--version'], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return 'HYDRA' in out.stdout


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='finds ranks through /proc')
def test_killed_server_does_not_hang_a_job_whose_launcher_does_not_end_it(tmp_path):
    """hydra with -disable-auto-cleanup does not end the job when a rank dies; MPICH then either
    ends it itself (its transport notices the dead peer) or leaves the workers waiting for their
    server forever (the reported hang). Either way the job must end within seconds, and when
    the workers are the ones that notice, they name the dead rank. (The rule they follow is
    checked deterministically without MPI below.)"""
    require_mpi()
    if not _hydra():
        pytest.skip('needs MPICH hydra (-disable-auto-cleanup)')
    worker = [sys.executable, '-m', 'mpi4py', '-m', 'mxmod.launch', '--worker',
              script('dead_peer.py'), str(tmp_path)]
    server = [sys.executable, '-m', 'mpi4py', '-m', 'mxmod.launch', '--server']
    cmd = [MPIEXEC, '-disable-auto-cleanup', '-n', '2'] + worker + [':', '-n', '1'] + server
    code, err, seconds, left = _kill_server(cmd, tmp_path, {'MXMOD_NUM_SERVERS': '1',
                                                            'MXMOD_WORLD_SIZE': '3'})
    assert code != 0 and seconds < END_WITHIN and not left, (code, seconds, left, err[-3000:])
    assert 'ran 60 s without noticing' not in err
    if 'MXNetError' in err:
        assert 'kvstore dist_async: server rank 2 died (its process' in err, err[-3000:]


# ---- the liveness rule, without MPI ---------------------------------------------------------
def _child():
    proc = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
    time.sleep(0.2)
    return proc


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='reads /proc')
def test_is_dead_for_running_zombie_reaped_and_reused_processes():
    proc = _child()
    start = liveness._start_time(proc.pid)  # pylint: disable=protected-access
    assert start is not None
    assert not liveness.is_dead(proc.pid, start) and not liveness.is_dead(proc.pid, None)
    assert liveness.is_dead(proc.pid, start + 1)       # the id now held by another process
    proc.kill()
    time.sleep(0.2)                                     # killed, not yet reaped: a zombie
    assert liveness.is_dead(proc.pid, start)
    proc.wait()
    assert liveness.is_dead(proc.pid, start)
    assert not liveness.is_dead(os.getpid(), liveness.identity()[2])


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='reads /proc')
def test_a_dead_peer_on_this_host_is_blamed_by_name():
    proc = _child()
    watch, coll = _channel()
    watch.local[2] = (proc.pid, liveness._start_time(proc.pid))  # pylint: disable=protected-access
    polls = iter([False] * 200 + [True])
    watch.wait(lambda: next(polls), coll._blame)  # pylint: disable=protected-access
    assert watch.gone == {}                              # alive: waited for as usual
    proc.kill()
    proc.wait()
    began = time.monotonic()
    with pytest.raises(MXNetError, match=r'kvstore dist_sync: worker rank 2 died \(its process '
                       r'%d on .*killed by a signal or crashed\) while worker rank 0 waits for '
                       r'it in pushpull \(call #5\)' % proc.pid):
        watch.wait(lambda: False, coll._blame)  # pylint: disable=protected-access
    assert time.monotonic() - began < liveness.FIRST_CHECK + 2 * liveness.CHECK_EVERY + 1


def test_server_link_and_server_name_a_dead_peer():
    """The server's blame (a worker died without its stop) and the left() wording."""
    watch = PeerWatch(_FakeMPI, _FakeComm(2, 3), num_workers=2)
    watch.gone[1] = {'killed': 4242}
    assert watch.killed(1) and not watch.killed(0)
    assert watch.left(1).startswith('died (its process 4242 on %s' % liveness.HOST)
