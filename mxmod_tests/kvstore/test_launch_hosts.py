"""``mxmod.launch`` on hosts: -H lists, hostfiles, Slurm, the flags each MPI flavour needs, the
reachability/version checks, and real jobs placed with ``-H localhost:2`` and a hostfile that
names this machine twice."""
import json
import os
import sys

import pytest

from mxmod import cluster
from mxmod.base import MXNetError
from mxmod.launch import build_command

from .dist_scripts.runner import launch_ok, require_mpi, run, script


def test_parse_hosts_and_hostfile(tmp_path):
    assert cluster.parse_hosts('a:4,b:2,c') == [('a', 4), ('b', 2), ('c', 1)]
    path = tmp_path / 'hosts'
    path.write_text('# cluster\nnode1:4\nnode2 slots=2  # Open MPI style\n\nnode3\n')
    assert cluster.read_hostfile(str(path)) == [('node1', 4), ('node2', 2), ('node3', 1)]
    # -H with a file path reads it, as MXNet's tools/launch.py took -H hostfile
    assert cluster.resolve_hosts(str(path), None) == cluster.read_hostfile(str(path))
    assert cluster.resolve_hosts(None, None) is None
    assert cluster.total_slots([('a', 4), ('b', 2)]) == 6


@pytest.mark.parametrize('spec,message', [
    ('a:0', "slot count of 'a' must be a positive integer"),
    ('a:x', "slot count of 'a'"),
    (',', 'no host'),
    ('a b:2', 'is not a host name'),
])
def test_bad_host_specs_name_the_entry(spec, message):
    with pytest.raises(MXNetError, match=message):
        cluster.parse_hosts(spec)


def test_bad_hostfiles(tmp_path):
    with pytest.raises(MXNetError, match="cannot read the hostfile '.*missing'"):
        cluster.read_hostfile(str(tmp_path / 'missing'))
    empty = tmp_path / 'empty'
    empty.write_text('# nothing\n')
    with pytest.raises(MXNetError, match='names no host'):
        cluster.read_hostfile(str(empty))
    bad = tmp_path / 'bad'
    bad.write_text('ok:1\nnode:-3\n')
    with pytest.raises(MXNetError, match='line 2'):
        cluster.read_hostfile(str(bad))
    with pytest.raises(MXNetError, match='not both'):
        cluster.resolve_hosts('a', str(bad))


def test_commands_per_mpi_flavour(monkeypatch):
    monkeypatch.delenv('SLURM_JOB_ID', raising=False)
    monkeypatch.setenv('MXNET_ENGINE_TYPE', 'x')
    hosts = [('h1', 2), ('h2', 2)]
    cmd, _ = build_command(3, 1, ['python', 't.py'], mpiexec='MPX', hosts=hosts, flavor='mpich')
    assert cmd[:6] == ['MPX', '-hosts', 'h1:2,h2:2', '-genvall', '-n', '3']
    cmd, _ = build_command(4, 0, ['python', 't.py'], mpiexec='MPX', hosts=hosts, flavor='openmpi')
    assert cmd[:3] == ['MPX', '--host', 'h1:2,h2:2']
    assert cmd[cmd.index('MXNET_ENGINE_TYPE') - 1] == '-x'
    assert 'MXMOD_NUM_SERVERS' in cmd and 'PATH' not in cmd
    # no hosts and no Slurm: the command of a one-machine job is unchanged
    cmd, _ = build_command(2, 0, ['hostname'], mpiexec='MPX')
    assert cmd == ['MPX', '-n', '2', 'hostname']


def test_slurm_allocation_is_used_as_it_is(monkeypatch):
    monkeypatch.setenv('SLURM_JOB_ID', '1234')
    cmd, _ = build_command(2, 0, ['hostname'], mpiexec='MPX', flavor='mpich')
    assert cmd[:5] == ['MPX', '-launcher', 'slurm', '-rmk', 'slurm']
    assert '-genvall' in cmd


def test_local_host_names():
    import socket
    assert cluster.is_local_host('localhost') and cluster.is_local_host('127.0.0.1')
    assert cluster.is_local_host(socket.gethostname())
    assert not cluster.is_local_host('no-such-host.invalid')


def test_unreachable_host_is_named_before_the_job_starts():
    require_mpi()
    code, _, err, seconds = run([sys.executable, '-m', 'mxmod.launch', '-H',
                                 'localhost:1,no-such-host.invalid:1', 'python', script('logs.py')],
                                timeout=60)
    assert code != 0 and seconds < 45
    assert 'no-such-host.invalid: cannot be reached' in err
    assert 'size 2' not in err


def test_rank_with_other_software_is_refused():
    require_mpi()
    versions = cluster.software_versions(python=sys.executable)
    assert versions['mxmod'] and versions['mpi'] and versions['python']
    versions['mxmod'] = '0.0.1'
    code, out, err, _ = run([sys.executable, '-m', 'mxmod.launch', '-n', '2', 'python',
                             script('logs.py')], timeout=60,
                            env={cluster.ENV_VERSIONS: json.dumps(versions)})
    assert code != 0
    assert 'runs other software than the launching host: mxmod' in err
    assert 'size 2' not in out


def test_slots_give_the_number_of_workers(tmp_path):
    require_mpi()
    hostfile = tmp_path / 'hosts'
    hostfile.write_text('localhost\nlocalhost\n')
    code, out, err, _ = run([sys.executable, '-m', 'mxmod.launch', '--hostfile', str(hostfile),
                             'python', script('logs.py')], timeout=60)
    assert code == 0, err
    assert out.count('size 2') == 2


@pytest.mark.parametrize('how', ['list', 'hostfile'])
def test_dist_scripts_unchanged_on_hosts(tmp_path, how):
    """The dist tests' scripts, launched exactly as test_dist does, with hosts from the
    environment: -H localhost:2, or a hostfile naming this machine twice."""
    require_mpi()
    if how == 'list':
        env = {'MXMOD_LAUNCH_HOSTS': 'localhost:2'}
    else:
        hostfile = tmp_path / 'hosts'
        hostfile.write_text('localhost\n%s\n' % os.uname()[1])
        env = {'MXMOD_LAUNCH_HOSTFILE': str(hostfile)}
    out, _ = launch_ok('sync_api.py', ['dist_sync'], env=env)
    assert 'OK dist_sync 0' in out and 'OK dist_sync 1' in out
    out, _ = launch_ok('async_api.py', servers=2, env=env)
    assert 'OK dist_async 0' in out and 'OK dist_async 1' in out


@pytest.mark.slow
@pytest.mark.parametrize('how', ['list', 'hostfile'])
def test_whole_dist_suite_on_hosts(tmp_path, how):
    """test_dist.py and test_dist_launch.py, unchanged, with every job placed on hosts."""
    import subprocess
    require_mpi()
    env = dict(os.environ)
    if how == 'list':
        env['MXMOD_LAUNCH_HOSTS'] = 'localhost:2'
    else:
        hostfile = tmp_path / 'hosts'
        hostfile.write_text('localhost\nlocalhost\n')
        env['MXMOD_LAUNCH_HOSTFILE'] = str(hostfile)
    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           os.path.join(here, 'test_dist.py'), os.path.join(here, 'test_dist_launch.py')],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:]


def _threads(out):
    # ranks share stdout: read the records wherever the lines of two ranks meet
    import re
    return sorted(int(n) for _, n in re.findall(r'threads (\d+) (\d+)', out))


def test_ranks_split_the_cores_unless_the_user_chose():
    """Ranks get at most cores // local ranks threads (fewer when other processes keep cores
    busy); MXMOD_NUM_THREADS=N is capped to the share; a BLAS variable set by the user wins."""
    require_mpi()
    pytest.importorskip('threadpoolctl')
    from mxmod.threads import ENV_VARS, available_cores
    cores = available_cores()
    clear = {var: '' for var in ENV_VARS + ('MXMOD_NUM_THREADS',)}
    for workers in (1, 2):
        code, out, err, _ = run([sys.executable, '-m', 'mxmod.launch', '-n', str(workers),
                                 'python', script('threads.py')], timeout=60, env=clear)
        assert code == 0, err
        counts = _threads(out)
        assert len(counts) == workers and all(1 <= n <= max(1, cores // workers) for n in counts)
        code, out, err, _ = run([sys.executable, '-m', 'mxmod.launch', '-n', str(workers),
                                 'python', script('threads.py')], timeout=60,
                                env=dict(clear, MXMOD_NUM_THREADS=str(cores)))
        assert code == 0, err
        assert _threads(out) == [max(1, cores // workers)] * workers
    code, out, err, _ = run([sys.executable, '-m', 'mxmod.launch', '-n', '2', 'python',
                             script('threads.py')], timeout=60,
                            env=dict(clear, OPENBLAS_NUM_THREADS=str(cores)))
    assert code == 0, err
    assert _threads(out) == [cores, cores]
