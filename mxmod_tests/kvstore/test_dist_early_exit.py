"""A rank that ends *normally* while another waits for it in a kvstore call: the waiting rank
raises an MXNetError naming both within seconds, so the job exits non-zero with the message on
stderr; a job whose ranks all end normally (at different times) still exits 0 silently. Each job
runs in a subprocess with a timeout (a hang fails the test), and the bookkeeping rules (when a
finished peer is blamed) are checked without MPI."""
import sys

import pytest

from mxmod.base import MXNetError
from mxmod.kvstore.peer_watch import PeerWatch, WatchedComm

from .dist_scripts.runner import MPIEXEC, launch, require_mpi, run, script

# seconds a failing job may take, start-up included (it hangs forever without the goodbyes)
FAIL_WITHIN = 10


def _failed_with(result, *texts):
    code, _, err, seconds = result
    assert code != 0, err
    assert seconds < FAIL_WITHIN, (seconds, err)
    for text in texts:
        assert text in err, (text, err[-3000:])
    assert 'got past' not in err and 'never created' not in err


def test_pushpull_direct_mpiexec():
    """Rank 1 runs 3 batches, rank 0 five: rank 0 waits in its 4th pushpull (rank 1 made 4
    collective calls: init and three pushpulls)."""
    require_mpi()
    cmd = [MPIEXEC, '-n', '2', sys.executable, '-m', 'mpi4py', script('early_exit.py'),
           'pushpull']
    _failed_with(run(cmd, timeout=60),
                 'MXNetError: kvstore dist_sync: worker rank 1 exited after 4 collective calls '
                 'on this store, while worker rank 0 waits in pushpull (call #5)')


def test_barrier_launch():
    require_mpi()
    _failed_with(launch('early_exit.py', ['barrier'], timeout=60),
                 'worker rank 1 exited after 1 collective call on',
                 'worker rank 0 waits in barrier (call #2)', 'mxmod.launch: the MPI job')


def test_store_creation_launch():
    require_mpi()
    _failed_with(launch('early_exit.py', ['create'], timeout=60),
                 'worker rank 1 exited after creating 0 kvstore(s), while worker rank 0 creates '
                 'kvstore #1 (dist_sync)')


def test_dist_async_worker_exit_during_barrier():
    require_mpi()
    _failed_with(launch('early_exit.py', ['async_barrier'], servers=1, timeout=60),
                 'kvstore dist_async: worker rank 1 exited after 2 collective calls',
                 'worker rank 0 waits in barrier (call #3)')


def test_dist_async_server_notices_worker_without_stop():
    require_mpi()
    _failed_with(launch('early_exit.py', ['async_nostop'], servers=1, timeout=60),
                 'kvstore server (server rank 2): worker rank 1 exited without telling the server')


@pytest.mark.parametrize('servers', [0, 1])
def test_all_normal_job_is_silent(servers):
    """Ranks leave at different times (one right after its last collective, one 0.5 s later):
    exit status 0 and nothing on stderr."""
    require_mpi()
    code, out, err, _ = launch('early_exit.py', ['async_normal' if servers else 'normal'],
                               servers=servers, timeout=60)
    assert code == 0, err
    assert err.strip() == '', err
    assert out.strip() == '', out


# ---- the blame rule, without MPI ---------------------------------------------------------
class _FakeMPI(object):
    ANY_SOURCE = -1

    class Status(object):
        pass


class _FakeComm(object):
    def __init__(self, rank, size):
        self.rank, self.size = rank, size

    def Get_rank(self):  # pylint: disable=invalid-name
        return self.rank

    def Get_size(self):  # pylint: disable=invalid-name
        return self.size

    def Iprobe(self, **_):  # pylint: disable=invalid-name
        return False


def _channel(rank=0, size=3, done=4):
    watch = PeerWatch(_FakeMPI, _FakeComm(rank, size), num_workers=size)
    for _ in range(done):
        watch.done(1)
    coll = WatchedComm(_FakeComm(rank, size), watch, 1, 'dist_sync')
    coll.what = 'pushpull'
    return watch, coll


def test_peer_that_passed_the_operation_is_waited_for():
    """Rank 0 waits in call #5: a peer that completed 5 calls (or more) will complete it too."""
    watch, coll = _channel()
    watch.gone[1] = {1: 5}
    watch.gone[2] = {1: 7, 'stores': 1}
    assert coll._blame() is None  # pylint: disable=protected-access
    polls = iter([False] * 100 + [True])
    watch.wait(lambda: next(polls), coll._blame)  # pylint: disable=protected-access


def test_peer_that_stopped_short_is_blamed():
    watch, coll = _channel()
    watch.gone[2] = {1: 4}
    message = coll._blame()  # pylint: disable=protected-access
    assert message.startswith('kvstore dist_sync: worker rank 2 exited after 4 collective '
                              'calls on this store, while worker rank 0 waits in pushpull '
                              '(call #5)'), message
    with pytest.raises(MXNetError, match='worker rank 2 exited after 4'):
        watch.wait(lambda: False, coll._blame)  # pylint: disable=protected-access
    # a peer exiting on an uncaught exception says so
    watch.gone[2] = {1: 4, 'failed': True}
    failed = coll._blame()  # pylint: disable=protected-access
    assert 'worker rank 2 failed (uncaught exception) after 4 collective calls' in failed
    # a peer that never used this channel counts 0 operations on it
    watch.gone[2] = {'stores': 1}
    assert 'exited after 0 collective calls' in coll._blame()  # pylint: disable=protected-access
    # a request that completes while the goodbye is looked at wins over the goodbye
    blamed = []

    def blame():
        blamed.append(True)
        return coll._blame()  # pylint: disable=protected-access
    watch.wait(lambda: bool(blamed), blame)
    assert blamed
