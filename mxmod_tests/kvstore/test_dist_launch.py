"""``python -m mxmod.launch``: the command it builds, the world-size check, logs on rank 0 only,
and fault handling (a rank that raises or is killed ends the job quickly with an error)."""
import sys

import pytest

from mxmod.base import MXNetError
from mxmod.kvstore import mpi_comm
from mxmod.launch import build_command

from .dist_scripts.runner import MPIEXEC, launch, require_mpi, run, script


def test_build_command_python_script():
    cmd, env = build_command(2, 0, ['python', '-u', 'train.py', '--lr', '0.1'], mpiexec='MPX')
    assert cmd == ['MPX', '-n', '2', sys.executable, '-u', '-m', 'mpi4py', '-m', 'mxmod.launch',
                   '--worker', 'train.py', '--lr', '0.1']
    assert env['MXMOD_NUM_SERVERS'] == '0' and env['MXMOD_WORLD_SIZE'] == '2'


def test_build_command_servers_module_and_other_programs():
    cmd, env = build_command(3, 1, ['python3', '-m', 'pkg.train', 'x'], mpiexec='MPX')
    assert cmd[:3] == ['MPX', '-n', '3']
    assert cmd[cmd.index('--worker') + 1:cmd.index(':')] == ['-m', 'pkg.train', 'x']
    assert cmd[cmd.index(':'):] == [':', '-n', '1', sys.executable, '-m', 'mpi4py', '-m',
                                    'mxmod.launch', '--server']
    assert env['MXMOD_NUM_SERVERS'] == '1' and env['MXMOD_WORLD_SIZE'] == '4'
    cmd, _ = build_command(2, 0, ['hostname'], mpiexec='MPX')
    assert cmd == ['MPX', '-n', '2', 'hostname']
    with pytest.raises(ValueError, match='no command'):
        build_command(2, 0, [], mpiexec='MPX')
    with pytest.raises(ValueError, match='-n >= 1'):
        build_command(0, 0, ['python', 'x.py'], mpiexec='MPX')


@pytest.mark.parametrize('var', ['PMI_SIZE', 'OMPI_COMM_WORLD_SIZE', 'MXMOD_WORLD_SIZE'])
def test_foreign_launcher_world_size_is_an_error(monkeypatch, var):
    monkeypatch.setenv(var, '2')
    with pytest.raises(MXNetError, match='MPI world of 1'):
        mpi_comm.check_world_size(1)
    mpi_comm.check_world_size(2)


def test_worker_checks_world_size():
    """N one-rank jobs (what a foreign mpiexec starts) are refused, not run alone."""
    require_mpi()
    cmd = [MPIEXEC, '-n', '2', sys.executable, '-m', 'mpi4py', '-m', 'mxmod.launch', '--worker',
           script('logs.py')]
    code, _, err, _ = run(cmd, timeout=60, env={'MXMOD_WORLD_SIZE': '3'})
    assert code != 0 and 'MPI world of 2' in err


def test_logs_on_rank_zero_only():
    require_mpi()
    code, out, err, _ = launch('logs.py')
    assert code == 0, err
    assert 'info from rank 0' in err and 'info from rank 1' not in err
    assert 'warning from rank 1' in err  # warnings still reach the user
    assert out.count('size 2') == 2


@pytest.mark.parametrize('mode,servers', [('raise', 0), ('kill', 0), ('async_raise', 1),
                                          ('hybrid_raise', 1)])
def test_failing_rank_ends_the_job(mode, servers):
    require_mpi()
    code, _, err, seconds = launch('fault.py', [mode], servers=servers, timeout=60)
    assert code != 0
    assert seconds < 30
    if mode == 'kill':
        assert 'failed with exit status 9' in err
        assert 'mxmod.launch: worker rank 1 (process ' in err and ') died:' in err, err[-2000:]
    else:
        assert 'boom from rank 1' in err
        assert ') died:' not in err        # the ranks the abort takes down are not blamed
    assert 'got past a collective' not in err and 'never joined' not in err


def test_direct_mpiexec_with_mpi4py():
    require_mpi()
    code, out, err, _ = run([MPIEXEC, '-n', '2', sys.executable, '-m', 'mpi4py',
                             script('sync_api.py'), 'dist_sync'])
    assert code == 0, err
    assert 'OK dist_sync 0' in out and 'OK dist_sync 1' in out


def test_dist_async_without_servers_says_how_to_launch():
    require_mpi()
    code, _, err, _ = launch('fault.py', ['async_raise'], servers=0)
    assert code != 0 and '-s 1' in err
