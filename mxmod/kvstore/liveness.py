"""Noticing that a peer process of the MPI job died (killed by a signal, crashed) while this
rank waits for it.

A rank that dies this way sends no goodbye (see :mod:`peer_watch`), and MPI itself never tells
the others: a rank waiting for its reply or its part of a collective waits forever unless the
launcher kills the job. ``mpiexec`` normally does, but not every launcher does it every time (a
launcher run with ``-disable-auto-cleanup``, a dead launcher proxy, ranks started by hand or by a
batch system step). So every rank tells the others who it is (host, process id and start time)
when its kvstore world is set up, and a rank that has been waiting for :data:`FIRST_CHECK`
seconds looks every :data:`CHECK_EVERY` seconds whether the peers on its own host still run: a
process that is gone, a zombie, or a process id now held by another process counts as dead, and
the wait raises an MXNetError naming the dead rank. Peers on other hosts are left to the
launcher."""
import os
import socket

__all__ = ['TAG_ALIVE', 'FIRST_CHECK', 'CHECK_EVERY', 'identity', 'is_dead', 'describe']

TAG_ALIVE = 27103
# seconds a wait lasts before the first look at the peers' processes (a launcher that ends the
# job when a rank dies has done so by then: its report, not this one, then explains the end),
# and seconds between two looks after that
FIRST_CHECK = 1.0
CHECK_EVERY = 0.25
HOST = socket.gethostname()


def _stat(pid):
    """The fields of /proc/<pid>/stat after the command name (state first), or None when the
    process does not exist; raises OSError where /proc cannot be read."""
    try:
        with open('/proc/%d/stat' % pid, 'rb') as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    return data[data.rindex(b')') + 2:].split()


def _start_time(pid):
    try:
        fields = _stat(pid)
    except (OSError, ValueError):
        return None
    return int(fields[19]) if fields is not None and len(fields) > 19 else None


def identity():
    """(host, process id, start time or None) of this process."""
    return (HOST, os.getpid(), _start_time(os.getpid()))


def is_dead(pid, start):
    """Whether process ``pid`` (started at ``start``, in clock ticks since boot; None: unknown)
    has ended: gone, a zombie, or its id reused by a process started later."""
    try:
        fields = _stat(pid)
    except (OSError, ValueError):
        fields = False
    if fields is False:             # no /proc: ask the kernel whether the id exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False
        return False
    if fields is None or fields[0] in (b'Z', b'X', b'x'):
        return True
    return start is not None and len(fields) > 19 and int(fields[19]) != start


def describe(pid):
    """How a dead peer is named in errors."""
    return 'died (its process %d on %s ended without exiting normally: killed by a signal or ' \
           'crashed)' % (pid, HOST)
