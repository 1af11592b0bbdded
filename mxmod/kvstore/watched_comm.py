"""A worker communicator whose store calls notice a finished (or dead) peer instead of hanging
(see :mod:`peer_watch` for the goodbyes and the liveness checks behind it)."""
from ..profiler.hooks import traced
from .net_emulation import charge_collective, now, payload_bytes, pickled_bytes

__all__ = ['WatchedComm']


class WatchedComm(object):
    """A worker communicator whose store calls notice a finished peer instead of hanging.

    A store starts each of its collective calls with :meth:`begin`. The first collective that
    follows runs as its non-blocking form completed by :meth:`PeerWatch.wait`, and is the
    operation counted for goodbyes; it is an allreduce, allgather or barrier (a broadcast is
    preceded by a watched barrier), whose completion proves that every worker joined this call.
    Every worker then makes the call's remaining collectives, so those run as the plain
    blocking MPI calls at full speed. Methods have mpi4py's signatures.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The workers' communicator (its rank ``i`` is world rank ``i``).
    watch : PeerWatch
    channel : int
        This communicator's number, the same on every worker.
    label : str
        The store type, for messages.
    """

    def __init__(self, comm, watch, channel, label):
        self.comm = comm
        self.watch = watch
        self.channel = channel
        self.label = label
        self.what = None
        self.armed = False
        self.peers = [r for r in range(comm.Get_size()) if r != comm.Get_rank()]

    def Get_rank(self):  # pylint: disable=invalid-name
        """This worker's rank."""
        return self.comm.Get_rank()

    def Get_size(self):  # pylint: disable=invalid-name
        """Number of workers."""
        return self.comm.Get_size()

    def begin(self, what):
        """Start the store call ``what`` (e.g. ``'pushpull'``): watch its first collective."""
        self.what = what
        self.armed = True

    def _blame(self):
        index = self.watch.count(self.channel) + 1
        late = self.watch.finished_before(self.peers, self.channel, index)
        if late is None:
            return None
        if self.watch.killed(late[0]):
            return ('kvstore %s: %s %s while %s waits for it in %s (call #%d)'
                    % (self.label, self.watch.role(late[0]), self.watch.left(late[0]),
                       self.watch.role(self.watch.rank), self.what, index))
        return ('kvstore %s: %s %s after %d collective call%s on this store, while %s waits '
                'in %s (call #%d), which it will never join; every worker must make the same '
                'kvstore calls (init, push, pushpull, barrier) in the same order, e.g. run the '
                'same number of batches'
                % (self.label, self.watch.role(late[0]), self.watch.left(late[0]), late[1],
                   '' if late[1] == 1 else 's', self.watch.role(self.watch.rank), self.what,
                   index))

    def _watched(self, request):
        self.armed = False
        self.watch.wait(request.Test, self._blame)
        self.watch.done(self.channel)

    @traced('KVStore', 'MPI_Allreduce')
    def Allreduce(self, sendbuf, recvbuf, op):  # pylint: disable=invalid-name
        """``MPI_Allreduce`` (``sendbuf`` may be ``MPI.IN_PLACE``)."""
        started = now()
        if self.armed:
            self._watched(self.comm.Iallreduce(sendbuf, recvbuf, op=op))
        else:
            self.comm.Allreduce(sendbuf, recvbuf, op=op)
        charge_collective('allreduce', payload_bytes(recvbuf), self.comm.Get_size(), started)

    @traced('KVStore', 'MPI_Allgather')
    def Allgather(self, sendbuf, recvbuf):  # pylint: disable=invalid-name
        """``MPI_Allgather`` of equal-sized buffers."""
        started = now()
        if self.armed:
            self._watched(self.comm.Iallgather(sendbuf, recvbuf))
        else:
            self.comm.Allgather(sendbuf, recvbuf)
        charge_collective('allgather', payload_bytes(sendbuf), self.comm.Get_size(), started)

    @traced('KVStore', 'MPI_Allgatherv')
    def Allgatherv(self, sendbuf, recvbuf):  # pylint: disable=invalid-name
        """``MPI_Allgatherv``: every worker's variable-length buffer; ``recvbuf`` is
        ``[array, (counts, displacements)]``."""
        started = now()
        if self.armed:
            self._watched(self.comm.Iallgatherv(sendbuf, recvbuf))
        else:
            self.comm.Allgatherv(sendbuf, recvbuf)
        charge_collective('allgather', payload_bytes(sendbuf), self.comm.Get_size(), started)

    @traced('KVStore', 'MPI_Alltoallv')
    def Alltoallv(self, sendbuf, recvbuf, piece_bytes):  # pylint: disable=invalid-name
        """``MPI_Alltoallv`` (``[array, (counts, displacements), datatype]`` buffers); the link
        is charged as an allgather of ``piece_bytes`` per rank (each rank sends one piece to
        every other)."""
        started = now()
        if self.armed:
            self._watched(self.comm.Ialltoallv(sendbuf, recvbuf))
        else:
            self.comm.Alltoallv(sendbuf, recvbuf)
        charge_collective('allgather', piece_bytes, self.comm.Get_size(), started)

    def Allgatherv_in_place(self, recvbuf, piece_bytes):  # pylint: disable=invalid-name
        """``MPI_Allgatherv`` with ``MPI.IN_PLACE`` (each rank's piece already lies at its
        displacement of ``recvbuf``); charged as an allgather of ``piece_bytes`` per rank."""
        started = now()
        in_place = self.watch.MPI.IN_PLACE
        if self.armed:
            self._watched(self.comm.Iallgatherv(in_place, recvbuf))
        else:
            self.comm.Allgatherv(in_place, recvbuf)
        charge_collective('allgather', piece_bytes, self.comm.Get_size(), started)

    @traced('KVStore', 'MPI_Barrier')
    def Barrier(self):  # pylint: disable=invalid-name
        """``MPI_Barrier``."""
        started = now()
        if self.armed:
            self._watched(self.comm.Ibarrier())
        else:
            self.comm.Barrier()
        charge_collective('barrier', 0, self.comm.Get_size(), started)

    @traced('KVStore', 'MPI_Bcast')
    def Bcast(self, buf, root=0):  # pylint: disable=invalid-name
        """``MPI_Bcast`` from ``root`` (its completion at the root proves nothing about the
        others, so a watched barrier goes first when it opens a call)."""
        if self.armed:
            self.Barrier()
        started = now()
        self.comm.Bcast(buf, root=root)
        charge_collective('bcast', payload_bytes(buf), self.comm.Get_size(), started)

    @traced('KVStore', 'MPI_Allgather (objects)')
    def allgather(self, obj):
        """Pickled allgather (a watched barrier first when it opens a call)."""
        if self.armed:
            self.Barrier()
        started = now()
        everyone = self.comm.allgather(obj)
        if started is not None:
            charge_collective('allgather', pickled_bytes(obj), self.comm.Get_size(), started)
        return everyone

    def barrier(self, what='barrier'):
        """A whole store call that is one watched barrier."""
        self.begin(what)
        self.Barrier()
