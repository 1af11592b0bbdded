"""Start a distributed job: ``python -m mxmod.launch -n 2 [-s 1] [-H host1:2,host2:2 | --hostfile F]
python train.py ARGS...``.

Runs ``N`` workers (and ``S`` parameter-server ranks for ``dist_async``) with the ``mpiexec`` that
sits beside this Python interpreter (the one belonging to the MPI library mpi4py loads). Every
Python rank runs under ``python -m mpi4py``, so an uncaught exception in any rank aborts the whole
job instead of leaving the others blocked; a rank killed by a signal makes ``mpiexec`` end the
others, and the launcher names it (:mod:`mxmod.launch_ranks`). Each worker checks that it sees the world size that was asked for (a foreign ``mpiexec``
silently starts N one-process jobs instead), and only rank 0 prints INFO logs and progress bars.

Ranks go to the hosts of ``-H``/``--hostfile`` (started through the MPI library's own launcher,
ssh by default, after checking that every remote host answers and runs the same mxmod, Python and
MPI), or, inside a Slurm allocation, where Slurm puts them. Ranks on one host split its cores:
each gets ``cores // ranks on the host`` BLAS/OpenMP threads unless the user set a thread variable
(``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``), so the default never
oversubscribes. The MXNet/mxmod and thread variables of
the launching shell reach every rank. ``MXMOD_LAUNCH_HOSTS`` / ``MXMOD_LAUNCH_HOSTFILE`` give
defaults for ``-H`` / ``--hostfile``.

``mpiexec -n 2 python -m mpi4py train.py`` works too (no server ranks, logs on every rank)."""
import argparse
import json
import logging
import os
import re
import subprocess
import sys
import tempfile

from . import cluster
from . import launch_ranks
from .base import MXNetError

__all__ = ['main', 'build_command', 'find_mpiexec']

_PYTHON_NAME = re.compile(r'^python[0-9.]*$')
# interpreter options that take a separate argument
_PYTHON_OPTS_WITH_ARG = ('-W', '-X', '-Q')


def find_mpiexec():
    """The ``mpiexec`` beside ``sys.executable``; an MXNetError says how to install it when absent."""
    path = os.path.join(os.path.dirname(sys.executable), 'mpiexec')
    if not os.path.exists(path):
        raise MXNetError('mxmod.launch needs the mpiexec of the MPI library mpi4py uses, beside '
                         'the interpreter (%s): pip install mpi4py mpich' % path)
    return path


def _split_python(command):
    """``['python', '-u', 'train.py', 'a']`` -> (interpreter options, program spec)."""
    options, rest = [], list(command[1:])
    while rest and rest[0].startswith('-') and rest[0] not in ('-m', '-c', '-'):
        opt = rest.pop(0)
        options.append(opt)
        if opt in _PYTHON_OPTS_WITH_ARG and rest:
            options.append(rest.pop(0))
    if not rest:
        raise ValueError('the command %r names no script, -m module or -c code to run' % command)
    return options, rest


def _is_python(program):
    return (program == sys.executable
            or _PYTHON_NAME.match(os.path.basename(program)) is not None)


def build_command(num_workers, num_servers, command, mpiexec=None, hosts=None, flavor=None):
    """The ``mpiexec`` command line and environment for a job.

    Parameters
    ----------
    num_workers : int
    num_servers : int
    command : list of str
        The worker command, e.g. ``['python', 'train.py', '--epochs', '2']``. A Python command is
        run with this interpreter under ``-m mpi4py``; anything else is run as given.
    mpiexec : str, optional
        Defaults to :func:`find_mpiexec`.
    hosts : list of (str, int), optional
        Hosts and slots to place the ranks on (see :mod:`mxmod.cluster`).
    flavor : str, optional
        The MPI launcher's flavour ('mpich', 'openmpi'); detected from ``mpiexec`` when needed.

    Returns
    -------
    (list of str, dict)
    """
    if num_workers < 1 or num_servers < 0:
        raise ValueError('need -n >= 1 and -s >= 0, got -n %d -s %d' % (num_workers, num_servers))
    if not command:
        raise ValueError('no command to run (usage: python -m mxmod.launch -n 2 python train.py)')
    exe = sys.executable
    if _is_python(command[0]):
        options, program = _split_python(command)
        worker = [exe] + options + ['-m', 'mpi4py', '-m', 'mxmod.launch', '--worker'] + program
    else:
        worker = list(command)
    mpiexec = mpiexec or find_mpiexec()
    env = dict(os.environ)
    env['MXMOD_NUM_SERVERS'] = str(num_servers)
    env['MXMOD_WORLD_SIZE'] = str(num_workers + num_servers)
    placed = []
    if hosts or os.environ.get('SLURM_JOB_ID'):
        flavor = flavor or cluster.mpi_flavor(mpiexec)
        placed = cluster.placement_args(flavor, hosts) + cluster.env_args(flavor, env)
    cmd = [mpiexec] + placed + ['-n', str(num_workers)] + worker
    if num_servers:
        cmd += [':', '-n', str(num_servers), exe, '-m', 'mpi4py', '-m', 'mxmod.launch',
                '--server']
    return cmd, env


def run_worker(program):
    """Body of one worker rank (``python -m mpi4py -m mxmod.launch --worker SCRIPT ARGS``).

    Checks the world size, silences INFO logs and progress bars on ranks other than 0, runs the
    program as ``__main__``, then tells the servers (if any) that this worker is done.
    """
    from mpi4py.run import run_command_line  # pylint: disable=import-outside-toplevel
    from .kvstore import mpi_comm  # pylint: disable=import-outside-toplevel
    wld = mpi_comm.world()
    cluster.check_rank_software(wld.rank)
    cluster.share_cores()
    os.environ['MXMOD_RANK'] = str(wld.rank)
    launch_ranks.record_rank(wld.rank, 'worker')
    if wld.rank != 0:
        logging.disable(logging.INFO)
        os.environ['MXMOD_PROGRESS_BAR'] = '0'
    try:
        run_command_line(list(program))
    except SystemExit as exc:
        if exc.code in (None, 0):
            mpi_comm.notify_servers_done()
        raise
    mpi_comm.notify_servers_done()


def run_server():
    """Body of one server rank (``python -m mpi4py -m mxmod.launch --server``)."""
    from .kvstore import mpi_comm, server  # pylint: disable=import-outside-toplevel
    cluster.check_rank_software(mpi_comm.world().rank)
    cluster.share_cores()
    launch_ranks.record_rank(mpi_comm.world().rank, 'server')
    server.main()


def _parser():
    parser = argparse.ArgumentParser(
        prog='python -m mxmod.launch',
        description='Run a data-parallel mxmod job under MPI (workers, and servers for '
                    'dist_async).')
    parser.add_argument('-n', '--num-workers', type=int, default=None,
                        help='number of worker processes (default: the slots of the hosts less '
                             'the servers, or the tasks of the Slurm allocation)')
    parser.add_argument('-s', '--num-servers', type=int, default=0,
                        help='number of parameter-server processes (for dist_async)')
    parser.add_argument('-H', '--hosts', default=os.environ.get('MXMOD_LAUNCH_HOSTS') or None,
                        help='hosts to run on, host1:4,host2:4 (slots default to 1), or a '
                             'hostfile path as MXNet\'s launch.py took')
    parser.add_argument('--hostfile', default=os.environ.get('MXMOD_LAUNCH_HOSTFILE') or None,
                        help='file with one host[:slots] a line')
    parser.add_argument('--no-check', action='store_true',
                        help='do not check over ssh that remote hosts answer and run the same '
                             'mxmod / Python / MPI versions')
    parser.add_argument('--mpiexec', default=None,
                        help='mpiexec to use (default: the one beside this interpreter)')
    parser.add_argument('command', nargs=argparse.REMAINDER,
                        help='the worker command, e.g. python train.py ARGS')
    return parser


def main(argv=None):
    """Command-line entry point; returns the job's exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == '--worker':
        run_worker(argv[1:])
        return 0
    if argv and argv[0] == '--server':
        run_server()
        return 0
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        hosts = cluster.resolve_hosts(args.hosts, args.hostfile)
        workers = _num_workers(args, hosts)
        cmd, env = build_command(workers, args.num_servers, args.command, args.mpiexec, hosts)
        if hosts and any(not cluster.is_local_host(h) for h, _ in hosts):
            if not args.no_check:
                env[cluster.ENV_VERSIONS] = json.dumps(cluster.preflight(hosts))
    except (ValueError, MXNetError) as err:
        parser.error(str(err))
    args.num_workers = workers
    with tempfile.TemporaryDirectory(prefix='mxmod-launch-') as folder:
        watch = launch_ranks.RankWatch(folder)
        env[launch_ranks.ENV_RANKS] = watch.path
        try:
            proc = subprocess.Popen(cmd, env=env)  # pylint: disable=consider-using-with
        except OSError as err:
            watch.close()
            parser.error('cannot run %s: %s' % (cmd[0], err))
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            proc.terminate()
            code = proc.wait()
        watch.close()
        if code != 0:
            _report_failure(args, code, watch.first_death())
    return code


def _report_failure(args, code, dead):
    """The launcher's last words on a failed job, naming the rank that died first (``dead``, a
    sentence, or None)."""
    if dead:
        sys.stderr.write('mxmod.launch: %s\n' % dead)
    sys.stderr.write('mxmod.launch: the MPI job (%d worker(s), %d server(s)) failed with exit '
                     'status %d (an uncaught exception in a rank gives 1, a rank killed by '
                     'signal N gives N or 128+N); see the messages above\n'
                     % (args.num_workers, args.num_servers, code))


def _num_workers(args, hosts):
    """-n, or what the hosts' slots (or the Slurm allocation) leave after the servers."""
    if args.num_workers is not None:
        return args.num_workers
    if hosts:
        total = cluster.total_slots(hosts)
    elif os.environ.get('SLURM_NTASKS'):
        total = int(os.environ['SLURM_NTASKS'])
    else:
        raise ValueError('give the number of workers with -n (or hosts with -H / --hostfile, or '
                         'run inside a Slurm allocation)')
    if total - args.num_servers < 1:
        raise ValueError('%d slot(s) leave no worker after %d server(s)' % (total, args.num_servers))
    return total - args.num_servers


if __name__ == '__main__':
    sys.exit(main())
