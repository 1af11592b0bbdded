"""MPI plumbing shared by the distributed stores and the server: the lazy mpi4py import, who in the
MPI world is a worker and who is a server, and the checks that catch a foreign ``mpiexec``.

The world is laid out as ``[worker 0 .. worker W-1, server 0 .. server S-1]``; ``S`` comes from
the environment variable ``MXMOD_NUM_SERVERS`` (set by ``python -m mxmod.launch -s S``, default 0).
Nothing here runs at import time: mpi4py is imported (and MPI initialized) on first use."""
import atexit
import os

from ..base import MXNetError
from .peer_watch import PeerWatch, WatchedComm

__all__ = ['mpi', 'World', 'world', 'ENV_SERVERS', 'ENV_WORLD_SIZE', 'notify_servers_done']

ENV_SERVERS = 'MXMOD_NUM_SERVERS'
ENV_WORLD_SIZE = 'MXMOD_WORLD_SIZE'
# world sizes announced by the launchers of MPICH (hydra), Open MPI and PMIx-based launchers
_LAUNCHER_SIZE_VARS = ('PMI_SIZE', 'OMPI_COMM_WORLD_SIZE', 'PMIX_SIZE')

# message tags between workers and servers
TAG_REQUEST = 11
TAG_DATA = 12
TAG_REPLY = 13
TAG_ACK = 14             # a server has applied a synchronous round (a fixed-size header)
TAG_ACK_ROWS = 15        # ... and the rows whose version grew by more than the workers' count
TAG_TABLES = 1000        # + n: replies to reads of the n-th sharded table of a store

_MPI = None
_WORLD = None
_STOP_SENT = False


def mpi():
    """Import mpi4py's ``MPI`` module (initializing MPI) or raise an MXNetError saying how to get it."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI  # pylint: disable=import-outside-toplevel
        except ImportError as err:
            raise MXNetError('distributed kvstores (dist_sync, dist_device_sync, dist_async) need '
                             'mpi4py and an MPI library: pip install mpi4py mpich (%s)' % err) from err
        _MPI = MPI
    return _MPI


def _env_int(name, default):
    raw = os.environ.get(name)
    if raw in (None, ''):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise MXNetError('environment variable %s must be an integer, got %r' % (name, raw)) from None
    if value < 0:
        raise MXNetError('environment variable %s must be >= 0, got %d' % (name, value))
    return value


class World(object):
    """The MPI world seen by this process: its rank, the worker ranks and the server ranks."""

    def __init__(self):
        MPI = mpi()
        self.comm = MPI.COMM_WORLD
        self.size = self.comm.Get_size()
        self.rank = self.comm.Get_rank()
        check_world_size(self.size)
        self.num_servers = _env_int(ENV_SERVERS, 0)
        self.num_workers = self.size - self.num_servers
        if self.num_workers < 1:
            raise MXNetError('%s=%d leaves no worker in an MPI world of %d process(es)'
                             % (ENV_SERVERS, self.num_servers, self.size))
        self.server_ranks = list(range(self.num_workers, self.size))
        self.is_server = self.rank >= self.num_workers
        self.watch = PeerWatch(MPI, self.comm, self.num_workers)
        self._groups = 0

    def worker_comm(self, what='a kvstore'):
        """A new communicator over the worker ranks only (collective over the workers)."""
        if self.is_server:
            raise MXNetError('MPI rank %d is a server rank (%s=%d): it runs the serve loop and '
                             'cannot create a worker kvstore' % (self.rank, ENV_SERVERS,
                                                                 self.num_servers))
        MPI = mpi()
        # a finished worker would never join Create_group: meet every worker first
        self.watch.handshake([r for r in range(self.num_workers) if r != self.rank], what)
        group = self.comm.Get_group().Incl(list(range(self.num_workers)))
        self._groups += 1
        comm = self.comm.Create_group(group, tag=100 + self._groups % 1000)
        group.Free()
        if comm == MPI.COMM_NULL:
            raise MXNetError('could not create the worker communicator on rank %d' % self.rank)
        self.watch.done('stores')
        return comm

    def worker_channel(self, label):
        """A new :class:`WatchedComm` over the worker ranks for a store of type ``label``."""
        comm = self.worker_comm(label)
        return WatchedComm(comm, self.watch, self._groups, label)


def check_world_size(size):
    """Raise when the launcher announced another world size than the one MPI reports.

    A ``mpiexec`` from another MPI library starts N independent one-process jobs with this
    library; every process then believes it is alone. ``python -m mxmod.launch`` also exports the
    size it started (``MXMOD_WORLD_SIZE``).
    """
    expected = os.environ.get(ENV_WORLD_SIZE)
    if expected not in (None, '') and int(expected) != size:
        raise MXNetError('mxmod.launch started %s processes but this one sees an MPI world of %d: '
                         'the mpiexec used does not belong to the MPI library mpi4py loaded; use '
                         'the mpiexec beside the Python interpreter' % (expected, size))
    for var in _LAUNCHER_SIZE_VARS:
        announced = os.environ.get(var)
        if announced not in (None, '') and announced.isdigit() and int(announced) != size:
            raise MXNetError('the launcher announced %s=%s but this process sees an MPI world of '
                             '%d: the mpiexec used belongs to another MPI library than the one '
                             'mpi4py loaded; run the mpiexec beside the Python interpreter (or '
                             'python -m mxmod.launch)' % (var, announced, size))


def world():
    """The process-wide :class:`World` (created, and MPI initialized, on first call)."""
    global _WORLD
    if _WORLD is None:
        _WORLD = World()
        _WORLD.watch.register()
        if not _WORLD.is_server and _WORLD.num_servers:
            atexit.register(notify_servers_done)
    return _WORLD


def notify_servers_done():
    """Tell every server that this worker has finished (once; servers exit after all workers)."""
    global _STOP_SENT
    if _STOP_SENT or _MPI is None or _MPI.Is_finalized():
        return
    wld = world()
    if wld.is_server or not wld.num_servers:
        return
    _STOP_SENT = True
    for server in wld.server_ranks:
        wld.comm.send(('stop', None, None, None), dest=server, tag=TAG_REQUEST)
