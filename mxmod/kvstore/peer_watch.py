"""Noticing that a peer rank finished while this rank waits for it.

A rank that raises or is killed already ends the whole MPI job (``python -m mpi4py`` aborts it).
A rank whose program simply *ends* (fewer batches, ``sys.exit(0)``) would instead leave the other
ranks blocked forever in a collective it never joins. So:

- every process says goodbye when it exits normally (an ``atexit`` handler, which runs before
  mpi4py finalizes MPI): a small message to every other rank carrying how many watched
  operations it completed on each channel (each kvstore's worker communicator is a channel whose
  operations are the store's collective calls; ``'stores'`` counts the kvstores it created).
  It then waits for every other rank's goodbye, as MPI_Finalize would anyway;
- the first collective of every store call (the one whose completion shows that every worker
  joined the call) is a non-blocking MPI call completed by a polling loop that also picks up
  goodbyes. All workers make a channel's calls in the same order, so a peer whose goodbye shows
  fewer completed calls than the one now waited for will never join it: the waiting rank raises
  an MXNetError naming both (under mpi4py this ends the job with that message). A peer that
  already passed the call is waited for as usual: it will complete.

The goodbyes travel on ``COMM_WORLD`` under a tag of their own (creating a private communicator
would itself be a collective that a finished rank never joins)."""
import atexit
import os
import sys
import time

import numpy as np

from ..base import MXNetError
from ..profiler.hooks import traced
from .net_emulation import charge_collective, now, payload_bytes, pickled_bytes

__all__ = ['PeerWatch', 'WatchedComm', 'TAG_GOODBYE', 'TAG_HELLO']

TAG_GOODBYE = 27101
TAG_HELLO = 27102
# key of a goodbye sent by a process that exits on an uncaught exception
FAILED = 'failed'
# polls of the pending request between two looks for goodbyes (a look is one MPI_Iprobe)
_POLLS_PER_LOOK = 32
# after this many polls a waiting rank lets other processes run between looks (as MPI libraries
# do in their own blocking waits)
_POLLS_BEFORE_YIELD = 64
# pause between looks once a wait has lasted (a sleep gives the core and the GIL to the
# process's other threads, e.g. backward while the communication thread waits for a peer): a
# share of the time waited so far, between these bounds, so that a transfer under way is polled
# often and a peer still computing is not answered by a wake-up every few microseconds (each one
# preempting computation on a shared core)
_IDLE_PAUSE = 20e-6
_IDLE_PAUSE_MAX = 1e-3
_IDLE_PAUSE_SHARE = 0.05
# longest sleep between two polls of an exiting rank waiting for the other ranks' goodbyes
_GOODBYE_PAUSE = 1e-3
# how long a failing process lets its goodbyes leave
_FAILED_SEND_SECONDS = 1.0


def _exiting_on_error():
    """True when the interpreter is exiting because of an uncaught exception (under
    ``python -m mpi4py`` the job is then aborted)."""
    return any(getattr(sys, name, None) is not None for name in ('last_value', 'last_exc'))


class PeerWatch(object):
    """This process's goodbye bookkeeping: operations completed per channel, goodbyes received.

    Parameters
    ----------
    MPI : module
        mpi4py's ``MPI``.
    comm : mpi4py.MPI.Comm
        ``COMM_WORLD``.
    num_workers : int
        Ranks below this are workers, the others servers (used in messages).
    """

    def __init__(self, MPI, comm, num_workers):
        self.MPI = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self.num_workers = num_workers
        self.completed = {}
        self.gone = {}
        self._status = MPI.Status()
        self._said = False

    def role(self, rank):
        """``'worker rank 1'`` or ``'server rank 2'``."""
        return '%s rank %d' % ('worker' if rank < self.num_workers else 'server', rank)

    def left(self, rank):
        """How ``rank`` ended: ``'exited'`` or ``'failed (uncaught exception)'``."""
        return 'failed (uncaught exception)' if self.gone[rank].get(FAILED) else 'exited'

    def count(self, channel):
        """Operations this process completed on ``channel``."""
        return self.completed.get(channel, 0)

    def done(self, channel):
        """Record one more completed operation on ``channel``."""
        self.completed[channel] = self.completed.get(channel, 0) + 1

    def look(self):
        """Receive every goodbye that has arrived; return True when there was one."""
        comm, status, found = self.comm, self._status, False
        while comm.Iprobe(source=self.MPI.ANY_SOURCE, tag=TAG_GOODBYE, status=status):
            source = status.Get_source()
            self.gone[source] = comm.recv(source=source, tag=TAG_GOODBYE)
            found = True
        return found

    def finished_before(self, peers, channel, index):
        """The first of ``peers`` that said goodbye after fewer than ``index`` operations on
        ``channel``, as (rank, its count); None when there is none."""
        for peer in peers:
            counts = self.gone.get(peer)
            if counts is not None and counts.get(channel, 0) < index:
                return peer, counts.get(channel, 0)
        return None

    def wait(self, test, blame):
        """Poll ``test()`` until it returns True; raise MXNetError(``blame()``) when ``blame``
        returns a message (a peer said goodbye and can no longer complete the wait).

        MPI progresses only inside MPI calls, so the loop keeps calling ``test`` (as a blocking
        MPI call spins inside the library); after a while it yields the CPU at each look.
        """
        if test():
            return
        polls, began = 0, time.perf_counter()
        while not test():
            polls += 1
            if polls % _POLLS_PER_LOOK:
                continue
            if self.look() or self.gone:
                message = blame()
                if message is not None and not test():
                    raise MXNetError(message)
            if polls >= _POLLS_BEFORE_YIELD:
                waited = time.perf_counter() - began
                time.sleep(min(_IDLE_PAUSE_MAX, max(_IDLE_PAUSE, _IDLE_PAUSE_SHARE * waited)))

    def handshake(self, peers, what):
        """Exchange a hello with every rank of ``peers`` (channel ``'stores'``) before a blocking
        collective that creates a communicator, so that a finished peer is noticed."""
        index = self.count('stores') + 1
        mine = np.array([index], dtype=np.int64)
        theirs = [np.zeros(1, dtype=np.int64) for _ in peers]
        requests = [self.comm.Isend(mine, dest=peer, tag=TAG_HELLO) for peer in peers]
        requests += [self.comm.Irecv(buf, source=peer, tag=TAG_HELLO)
                     for buf, peer in zip(theirs, peers)]

        def blame():
            late = self.finished_before(peers, 'stores', index)
            if late is None:
                return None
            return ('kvstore: %s %s after creating %d kvstore(s), while %s creates kvstore #%d '
                    '(%s); every worker must create the same kvstores in the same order'
                    % (self.role(late[0]), self.left(late[0]), late[1], self.role(self.rank),
                       index, what))
        self.wait(lambda: self.MPI.Request.Testall(requests), blame)
        for peer, buf in zip(peers, theirs):
            if int(buf[0]) != index:
                raise MXNetError('kvstore: %s creates its kvstore #%d while %s creates #%d'
                                 % (self.role(peer), int(buf[0]), self.role(self.rank), index))

    def say_goodbye(self):
        """Tell every other rank how far this process got, then wait for every rank's goodbye
        (``atexit``, or when MPI is finalized explicitly; once).

        Waiting costs nothing new (MPI_Finalize waits for every rank as well) and is needed: a
        message that reaches a rank while it finalizes can get the job killed (MPICH). A process
        exiting on an uncaught exception marks its goodbye as failed and does not wait (mpi4py
        aborts the job next; under a plain ``python`` the other ranks must not wait for it).
        """
        MPI = self.MPI
        if self._said or MPI.Is_finalized():
            return
        self._said = True
        counts = dict(self.completed)
        failed = _exiting_on_error()
        if failed:
            counts[FAILED] = True
        peers = [peer for peer in range(self.comm.Get_size()) if peer != self.rank]
        requests = [self.comm.isend(counts, dest=peer, tag=TAG_GOODBYE) for peer in peers]
        deadline = time.monotonic() + _FAILED_SEND_SECONDS
        pause = 0.0
        while not MPI.Request.Testall(requests) or (len(self.gone) < len(peers) and not failed):
            if failed and time.monotonic() > deadline:
                return
            self.look()
            time.sleep(pause)
            pause = min(_GOODBYE_PAUSE, pause + 1e-5)
        failed_peers = [r for r, counts in self.gone.items() if counts.get(FAILED)]
        if failed_peers and not failed:
            # the job failed: make sure it ends non-zero even when this rank's clean finalize
            # would otherwise race with the failed rank's abort
            sys.stderr.write('mxmod: %s failed; ending the MPI job\n'
                             % ', '.join(self.role(r) for r in sorted(failed_peers)))
            sys.stderr.flush()
            MPI.COMM_WORLD.Abort(1)

    def register(self):
        """Say goodbye at normal interpreter exit (atexit handlers run before mpi4py finalizes
        MPI) or when the program finalizes MPI itself (an attribute of ``COMM_SELF`` is deleted
        first thing in MPI_Finalize)."""
        atexit.register(self.say_goodbye)
        keyval = self.MPI.Comm.Create_keyval(delete_fn=self._on_finalize)
        self.MPI.COMM_SELF.Set_attr(keyval, True)

    def _on_finalize(self, comm, keyval, value):  # pylint: disable=unused-argument
        self.say_goodbye()


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
