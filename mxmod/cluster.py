"""Where the ranks of a job run: host lists and hostfiles, Slurm allocations, the MPI library's
launcher flavour, and the checks that every host is reachable and runs the same software.

Used by ``python -m mxmod.launch`` (see :mod:`mxmod.launch`). Hosts are given as
``-H host1:4,host2:4`` or as a hostfile with one ``host[:slots]`` a line (``#`` starts a comment;
``host slots=4`` as Open MPI writes it is read too). Under Slurm (``SLURM_JOB_ID`` set, no hosts
given) the allocation is used as it is: the MPI library's launcher starts the ranks through Slurm."""
import json
import os
import re
import socket
import subprocess
import sys

from .base import MXNetError

__all__ = ['parse_hosts', 'read_hostfile', 'resolve_hosts', 'total_slots', 'is_local_host',
           'mpi_flavor', 'placement_args', 'env_args', 'software_versions', 'preflight',
           'check_rank_software', 'ENV_VERSIONS', 'FORWARDED_ENV_PREFIXES', 'local_rank_count',
           'share_cores']

ENV_VERSIONS = 'MXMOD_LAUNCH_VERSIONS'
# environment variables every rank must see as the launcher saw them
FORWARDED_ENV_PREFIXES = ('MXNET_', 'MXMOD_', 'OMP_', 'OPENBLAS_', 'MKL_', 'PYTHONPATH')
# ranks on this host, as MPI launchers announce them
_LOCAL_SIZE_VARS = ('MPI_LOCALNRANKS', 'OMPI_COMM_WORLD_LOCAL_SIZE', 'MV2_COMM_WORLD_LOCAL_SIZE',
                    'PMI_LOCAL_SIZE')
_HOST_RE = re.compile(r'^[A-Za-z0-9_.\-\[\]:%]+$')
_SNIPPET = ('import json, sys, mxmod, mpi4py; mpi4py.rc.initialize = False; '
            'from mpi4py import MPI; '
            'print(json.dumps({"mxmod": mxmod.__version__, "python": "%d.%d" % sys.version_info[:2], '
            '"mpi4py": mpi4py.__version__, '
            '"mpi": MPI.Get_library_version().splitlines()[0].strip()}))')


def _parse_entry(text, where):
    """``'host'``, ``'host:4'`` or ``'host slots=4'`` -> (host, slots or None)."""
    text = text.strip()
    match = re.match(r'^(\S+)\s+slots\s*=\s*(\S+)\s*$', text)
    if match:
        host, slots = match.group(1), match.group(2)
    elif ':' in text and not text.startswith('['):
        host, _, slots = text.rpartition(':')
    else:
        host, slots = text, None
    if not host or not _HOST_RE.match(host):
        raise MXNetError('%s: %r is not a host name (expected host or host:slots)' % (where, text))
    if slots is None:
        return host, None
    try:
        count = int(slots)
    except ValueError:
        count = 0
    if count < 1:
        raise MXNetError('%s: the slot count of %r must be a positive integer, got %r'
                         % (where, host, slots))
    return host, count


def parse_hosts(spec):
    """``'host1:4,host2:4'`` -> ``[('host1', 4), ('host2', 4)]`` (slots default to 1).

    Parameters
    ----------
    spec : str

    Returns
    -------
    list of (str, int)
    """
    entries = [e for e in spec.split(',') if e.strip()]
    if not entries:
        raise MXNetError('-H: no host in %r (expected host1:4,host2:4)' % spec)
    return [(h, n or 1) for h, n in (_parse_entry(e, '-H') for e in entries)]


def read_hostfile(path):
    """Hosts of a hostfile: one ``host[:slots]`` (or ``host slots=N``) a line, ``#`` comments.

    Parameters
    ----------
    path : str

    Returns
    -------
    list of (str, int)
    """
    try:
        with open(path) as handle:
            lines = handle.read().splitlines()
    except OSError as err:
        raise MXNetError('cannot read the hostfile %r: %s' % (path, err.strerror or err)) from None
    hosts = []
    for number, line in enumerate(lines, 1):
        line = line.split('#', 1)[0].strip()
        if line:
            host, slots = _parse_entry(line, 'hostfile %s line %d' % (path, number))
            hosts.append((host, slots or 1))
    if not hosts:
        raise MXNetError('the hostfile %r names no host' % path)
    return hosts


def resolve_hosts(hosts=None, hostfile=None):
    """The host list from ``-H`` (a list spec, or a file path as MXNet's launch.py took) and/or
    ``--hostfile``; None when neither is given."""
    if hosts and hostfile:
        raise MXNetError('give either -H or --hostfile, not both')
    if hosts:
        if os.path.isfile(hosts):
            return read_hostfile(hosts)
        return parse_hosts(hosts)
    if hostfile:
        return read_hostfile(hostfile)
    return None


def total_slots(hosts):
    """Sum of the slots of ``hosts``."""
    return sum(slots for _, slots in hosts)


def _own_names():
    names = {'localhost', 'localhost.localdomain', 'ip6-localhost', '::1'}
    for name in (socket.gethostname(), socket.getfqdn()):
        names.add(name)
        names.add(name.split('.')[0])
    try:
        names.update(socket.gethostbyname_ex(socket.gethostname())[2])
    except OSError:
        pass
    return names


def is_local_host(host):
    """True when ``host`` names this machine (no ssh needed to start ranks there)."""
    return host in _own_names() or host.startswith('127.')


def mpi_flavor(mpiexec):
    """``'mpich'`` (Hydra: MPICH, Intel MPI, MVAPICH), ``'openmpi'``, or ``'unknown'``."""
    try:
        out = subprocess.run([mpiexec, '--version'], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 'unknown'
    if 'HYDRA' in out or 'Intel(R) MPI' in out:
        return 'mpich'
    if 'Open MPI' in out or 'OpenRTE' in out or 'Open RTE' in out:
        return 'openmpi'
    return 'unknown'


def placement_args(flavor, hosts):
    """mpiexec options placing ranks on ``hosts`` (None: the launcher's default or Slurm's)."""
    if not hosts:
        if os.environ.get('SLURM_JOB_ID') and flavor == 'mpich':
            return ['-launcher', 'slurm', '-rmk', 'slurm']
        return []
    spec = ','.join('%s:%d' % (h, n) for h, n in hosts)
    if flavor == 'openmpi':
        return ['--host', spec]
    return ['-hosts', spec]


def env_args(flavor, env):
    """mpiexec options that carry the mxmod/MXNet/thread variables of ``env`` to every rank."""
    names = sorted(k for k in env if k.startswith(FORWARDED_ENV_PREFIXES))
    if flavor == 'openmpi':
        out = []
        for name in names:
            out += ['-x', name]
        return out
    if flavor == 'mpich':
        return ['-genvall']       # Hydra's proxies then hand every rank the whole environment
    return []


def software_versions(python=None, host=None, timeout=30):
    """What a rank runs: mxmod, Python, mpi4py and MPI library versions, as a dict.

    Parameters
    ----------
    python : str, optional
        Interpreter to ask (default this one, in this process).
    host : str, optional
        Ask on this host through ssh.
    timeout : float
    """
    if python is None and host is None:
        from . import __version__  # pylint: disable=import-outside-toplevel
        return {'mxmod': __version__, 'python': '%d.%d' % sys.version_info[:2],
                'mpi4py': _package_version('mpi4py'), 'mpi': _mpi_library_line()}
    cmd = [python or sys.executable, '-c', _SNIPPET]
    if host is not None:
        remote = 'cd %s 2>/dev/null; %s -c %s' % (_quote(os.getcwd()), _quote(cmd[0]),
                                                  _quote(_SNIPPET))
        cmd = ['ssh', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=%d' % max(1, int(timeout)),
               host, remote]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 5)
    if proc.returncode != 0:
        raise OSError((proc.stderr or proc.stdout).strip().splitlines()[-1:] or ['no output'])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


def _package_version(name):
    try:
        module = __import__(name)
    except ImportError:
        return None
    return getattr(module, '__version__', None)


def _mpi_library_line():
    mpi4py = sys.modules.get('mpi4py.MPI')
    if mpi4py is None:
        return None
    return mpi4py.Get_library_version().splitlines()[0].strip()


def preflight(hosts, timeout=30):
    """Check that every remote host answers over ssh and runs the same software as this one.

    Returns the local versions (to export to the ranks). Raises an MXNetError naming every host
    that cannot be reached or differs.
    """
    try:
        mine = software_versions(python=sys.executable)
    except (OSError, ValueError, subprocess.SubprocessError) as err:
        raise MXNetError('cannot run %s here to read the mxmod/MPI versions: %s'
                         % (sys.executable, err)) from None
    problems = []
    for host in sorted({h for h, _ in hosts if not is_local_host(h)}):
        try:
            theirs = software_versions(python=sys.executable, host=host, timeout=timeout)
        except (OSError, ValueError, subprocess.SubprocessError) as err:
            problems.append('%s: cannot be reached or cannot run %s over ssh (%s)'
                            % (host, sys.executable, _first(err)))
            continue
        diff = ['%s %s there, %s here' % (k, theirs.get(k), v) for k, v in sorted(mine.items())
                if theirs.get(k) != v]
        if diff:
            problems.append('%s runs other software: %s' % (host, '; '.join(diff)))
    if problems:
        raise MXNetError('mxmod.launch: %d host(s) are not ready for this job:\n  %s\n(every host '
                         'needs passwordless ssh and the same Python environment at the same path; '
                         '--no-check skips this check)' % (len(problems), '\n  '.join(problems)))
    return mine


def _first(err):
    text = str(err.args[0] if err.args else err)
    if isinstance(err.args[0] if err.args else None, list):
        text = ' '.join(err.args[0])
    return text.strip()[:300]


def check_rank_software(rank):
    """In a rank: raise when this host runs other software than the launcher announced."""
    expected = os.environ.get(ENV_VERSIONS)
    if not expected:
        return
    expected = json.loads(expected)
    mine = software_versions()
    diff = ['%s %s here, %s on the launching host' % (k, mine.get(k), v)
            for k, v in sorted(expected.items()) if mine.get(k) not in (None, v)]
    if diff:
        raise MXNetError('rank %d on host %s runs other software than the launching host: %s'
                         % (rank, socket.gethostname(), '; '.join(diff)))


def local_rank_count():
    """How many ranks of this job run on this host (1 when the launcher does not say)."""
    for var in _LOCAL_SIZE_VARS:
        value = os.environ.get(var, '')
        if value.isdigit() and int(value) > 0:
            return int(value)
    return 1


def share_cores(local=None):
    """Give this rank its share of the host's cores (see :func:`mxmod.threads.share_cores`): at
    most ``cores // local ranks`` BLAS/OpenMP threads, unless the user set a thread variable.
    Returns the thread count now used (None when the libraries follow the user's variables).

    Parameters
    ----------
    local : int, optional
        Ranks on this host (default :func:`local_rank_count`).
    """
    from . import threads  # pylint: disable=import-outside-toplevel
    return threads.share_cores(local or local_rank_count())
