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
would itself be a collective that a finished rank never joins).

A rank that dies (SIGKILL, a crash) says no goodbye; the launcher normally ends the job then, and
where it does not, a long wait notices a dead peer on the same host (:mod:`liveness`) and raises
naming it, as for a peer that exited."""
import atexit
import sys
import time

import numpy as np

from ..base import MXNetError
from . import liveness
from .watched_comm import WatchedComm  # noqa: F401  (its home was this module)

__all__ = ['PeerWatch', 'WatchedComm', 'TAG_GOODBYE', 'TAG_HELLO']

TAG_GOODBYE = 27101
TAG_HELLO = 27102
# key of a goodbye sent by a process that exits on an uncaught exception
FAILED = 'failed'
# key of the goodbye recorded for a peer whose process died (its process id)
KILLED = 'killed'
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
# how long a failing process waits, its traceback written, before mpi4py aborts the job: the
# launcher forwards the traceback meanwhile (an abort can end the job before it has)
_FAILED_FLUSH_SECONDS = 0.3


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
        self.local = {}          # rank -> (process id, start time) of the peers on this host
        self._hellos = []
        self._status = MPI.Status()
        self._said = False
        self._next_check = 0.0

    def role(self, rank):
        """``'worker rank 1'`` or ``'server rank 2'``."""
        return '%s rank %d' % ('worker' if rank < self.num_workers else 'server', rank)

    def left(self, rank):
        """How ``rank`` ended: ``'exited'``, ``'failed (uncaught exception)'`` or ``'died
        (...)'``."""
        if self.killed(rank):
            return liveness.describe(self.gone[rank][KILLED])
        return 'failed (uncaught exception)' if self.gone[rank].get(FAILED) else 'exited'

    def killed(self, rank):
        """Whether ``rank``'s process died without a goodbye."""
        return KILLED in self.gone.get(rank, ())

    def announce(self):
        """Tell every other rank this process's host, id and start time (once, at setup)."""
        me = liveness.identity()
        self._hellos = [self.comm.isend(me, dest=peer, tag=liveness.TAG_ALIVE)
                        for peer in range(self.comm.Get_size()) if peer != self.rank]

    def check_alive(self):
        """Record the peers on this host whose process died as gone (marked killed); return
        True when one was found."""
        found = False
        for rank, (pid, start) in list(self.local.items()):
            if rank not in self.gone and liveness.is_dead(pid, start):
                self.gone[rank] = {KILLED: pid}
                found = True
        return found

    def _due_check(self, began):
        """check_alive() once a wait that began at ``began`` (time.perf_counter) has lasted
        liveness.FIRST_CHECK seconds (a launcher that ends the job on a death has done so by
        then), then every liveness.CHECK_EVERY seconds."""
        moment = time.perf_counter()
        if moment - began < liveness.FIRST_CHECK or moment < self._next_check:
            return False
        self._next_check = moment + liveness.CHECK_EVERY
        return self.check_alive()

    def count(self, channel):
        """Operations this process completed on ``channel``."""
        return self.completed.get(channel, 0)

    def done(self, channel):
        """Record one more completed operation on ``channel``."""
        self.completed[channel] = self.completed.get(channel, 0) + 1

    def look(self):
        """Receive every goodbye that has arrived; return True when there was one."""
        comm, status, found = self.comm, self._status, False
        while comm.Iprobe(source=self.MPI.ANY_SOURCE, tag=liveness.TAG_ALIVE, status=status):
            source = status.Get_source()
            host, pid, start = comm.recv(source=source, tag=liveness.TAG_ALIVE)
            if host == liveness.HOST:
                self.local[source] = (pid, start)
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
            if self.look() or self.gone or (polls >= _POLLS_BEFORE_YIELD
                                            and self._due_check(began)):
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
            if self.killed(late[0]):
                return ('kvstore: %s %s while %s creates kvstore #%d (%s)'
                        % (self.role(late[0]), self.left(late[0]), self.role(self.rank), index,
                           what))
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
        pause, began = 0.0, time.perf_counter()
        while not self._sent(requests, peers) or (len(self.gone) < len(peers) and not failed):
            if failed and time.monotonic() > deadline:
                break
            self.look()
            self._due_check(began)
            time.sleep(pause)
            pause = min(_GOODBYE_PAUSE, pause + 1e-5)
        if failed:
            sys.stderr.flush()
            time.sleep(_FAILED_FLUSH_SECONDS)
            return
        failed_peers = [r for r, counts in self.gone.items()
                        if counts.get(FAILED) or KILLED in counts]
        if failed_peers and not failed:
            # the job failed: make sure it ends non-zero even when this rank's clean finalize
            # would otherwise race with the failed rank's abort
            sys.stderr.write('mxmod: %s; ending the MPI job\n'
                             % ', '.join('%s %s' % (self.role(r), self.left(r))
                                         for r in sorted(failed_peers)))
            sys.stderr.flush()
            MPI.COMM_WORLD.Abort(1)

    def _sent(self, requests, peers):
        """Whether the goodbyes to every peer still alive have left."""
        return all(request.Test() for request, peer in zip(requests, peers)
                   if not self.killed(peer))

    def register(self):
        """Say goodbye at normal interpreter exit (atexit handlers run before mpi4py finalizes
        MPI) or when the program finalizes MPI itself (an attribute of ``COMM_SELF`` is deleted
        first thing in MPI_Finalize)."""
        atexit.register(self.say_goodbye)
        keyval = self.MPI.Comm.Create_keyval(delete_fn=self._on_finalize)
        self.MPI.COMM_SELF.Set_attr(keyval, True)
        self.announce()

    def _on_finalize(self, comm, keyval, value):  # pylint: disable=unused-argument
        self.say_goodbye()
