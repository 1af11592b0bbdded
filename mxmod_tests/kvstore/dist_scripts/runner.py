"""Run a script of this folder as an MPI job in a subprocess, with a timeout that kills the job.

Tests skip when mpi4py or the ``mpiexec`` beside the interpreter is missing."""
import os
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = os.path.join(os.path.dirname(sys.executable), 'mpiexec')


def require_mpi():
    """Skip the calling test unless mpi4py and the mpiexec beside sys.executable exist."""
    pytest.importorskip('mpi4py')
    if not os.path.exists(MPIEXEC):
        pytest.skip('no mpiexec beside %s (pip install mpich)' % sys.executable)


def script(name):
    """Absolute path of a script in this folder."""
    return os.path.join(HERE, name)


def run(cmd, timeout=60, env=None):
    """Run ``cmd`` in its own process group; return (returncode, stdout, stderr, seconds).

    On timeout the whole group is killed and the test fails (a hang is a defect).
    """
    full_env = dict(os.environ)
    full_env.update({'OMP_NUM_THREADS': '1', 'OPENBLAS_NUM_THREADS': '1'})
    full_env.update(env or {})
    tic = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=full_env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail('MPI job %s hung for %ds\nstdout:\n%s\nstderr:\n%s' % (cmd, timeout, out, err))
    return proc.returncode, out, err, time.time() - tic


def launch(name, args=(), workers=2, servers=0, timeout=60, env=None):
    """``python -m mxmod.launch -n workers -s servers python <script> args``."""
    cmd = [sys.executable, '-m', 'mxmod.launch', '-n', str(workers), '-s', str(servers),
           'python', script(name)] + [str(a) for a in args]
    return run(cmd, timeout=timeout, env=env)


def launch_ok(name, args=(), workers=2, servers=0, timeout=60, env=None):
    """Like :func:`launch` but fail the test unless the job exits with status 0."""
    code, out, err, _ = launch(name, args, workers, servers, timeout, env)
    if code != 0:
        pytest.fail('MPI job %s %s exited with %d\nstdout:\n%s\nstderr:\n%s'
                    % (name, list(args), code, out, err[-4000:]))
    return out, err
