"""Which rank of an ``mxmod.launch`` job died: the launcher's half of naming a rank that was
killed by a signal or crashed.

Such a rank cannot say anything, and the MPI launcher that then ends the job names at best a
process id (MPICH's hydra even names the job's first process, whichever died). So the launcher
listens on a Unix socket in a private folder (``MXMOD_LAUNCH_RANKS``) and every rank on its host
connects when it starts, sending its rank, role and process id, and keeps the connection open
for its whole life; at exit it sends ``exit`` (or ``fail`` when it exits on an uncaught
exception, whose traceback names the error). A connection that closes without either is a rank
that died, and the first such death, unless a rank failed before it, is what the launcher names
when the job fails: ``server rank 2 (process 7666 on host) died: ...``. (Ranks on other hosts
cannot reach the socket; there the MPI launcher's own report is all there is.)"""
import atexit
import os
import selectors
import socket
import sys
import threading
import time

__all__ = ['ENV_RANKS', 'record_rank', 'RankWatch']

ENV_RANKS = 'MXMOD_LAUNCH_RANKS'
_LINK = []          # this rank's connection to the launcher, kept open for the process's life


def record_rank(rank, role):
    """Connect this process to the launcher's rank watch as ``role`` rank ``rank`` (when the
    launcher runs one on this host); says goodbye at exit."""
    path = os.environ.get(ENV_RANKS)
    if not path or _LINK or not os.path.exists(path):
        return
    link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        link.connect(path)
        link.sendall(('%d %s %d %s\n' % (rank, role, os.getpid(), socket.gethostname()))
                     .encode())
    except OSError:
        link.close()
        return
    _LINK.append(link)
    atexit.register(_goodbye)


def _goodbye():
    failed = any(getattr(sys, name, None) is not None for name in ('last_value', 'last_exc'))
    try:
        _LINK[0].sendall(b'fail\n' if failed else b'exit\n')
    except OSError:
        pass


class RankWatch(object):
    """The launcher's side: a listening socket whose connections are the job's ranks, watched
    by a thread until :meth:`close`.

    Attributes
    ----------
    path : str
        The socket's path (``MXMOD_LAUNCH_RANKS`` for the ranks).
    """

    def __init__(self, folder):
        self.path = os.path.join(folder, 'ranks')
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(1024)
        self.events = []         # ('died' or 'fail', rank, role, pid, host), in order
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.listener, selectors.EVENT_READ, None)
        self._stop_r, self._stop_w = socket.socketpair()
        self._selector.register(self._stop_r, selectors.EVENT_READ, 'stop')
        self.thread = threading.Thread(target=self._watch, name='mxmod-rank-watch', daemon=True)
        self.thread.start()

    def _watch(self):
        while True:
            for key, _ in self._selector.select():
                if key.data == 'stop':
                    return
                if key.data is None:
                    conn, _ = self.listener.accept()
                    self._selector.register(conn, selectors.EVENT_READ, {'buf': b''})
                else:
                    self._read(key.fileobj, key.data)

    def _read(self, conn, state):
        try:
            chunk = conn.recv(4096)
        except OSError:
            chunk = b''
        state['buf'] += chunk
        lines = state['buf'].split(b'\n')
        for line in lines[:-1]:
            words = line.decode('utf-8', 'replace').split()
            if len(words) == 4 and 'rank' not in state:
                state['rank'], state['role'], state['pid'], state['host'] = \
                    int(words[0]), words[1], int(words[2]), words[3]
            elif words in (['exit'], ['fail']):
                state['end'] = words[0]
                if words[0] == 'fail' and 'rank' in state:
                    self.events.append(self._event('fail', state))
        state['buf'] = lines[-1]
        if not chunk:
            self._selector.unregister(conn)
            conn.close()
            if 'rank' in state and 'end' not in state:
                self.events.append(self._event('died', state))

    @staticmethod
    def _event(kind, state):
        return (kind, state['rank'], state['role'], state['pid'], state['host'])

    def first_death(self):
        """The rank that died first, as a sentence, when no rank failed before it (an uncaught
        exception aborts the job, and the ranks it takes down die after it); else None."""
        for kind, rank, role, pid, host in list(self.events):
            if kind == 'fail':
                return None
            return ('%s rank %d (process %d on %s) died: it ended without exiting normally '
                    '(killed by a signal, crashed, or aborted), and the MPI job was ended'
                    % (role, rank, pid, host))
        return None

    def close(self, timeout=2.0):
        """Stop watching (after the connections that are still closing have been read, for up
        to ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while len(self._selector.get_map()) > 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        self._stop_w.send(b'x')
        self.thread.join(timeout=timeout)
        self.listener.close()
        self._stop_r.close()
        self._stop_w.close()
