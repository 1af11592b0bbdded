"""Messages between a worker's store and the parameter-server ranks: which server holds a dense
key, waiting for requests while noticing a server that has exited, and request/reply calls."""
import zlib

from ..base import MXNetError
from ..profiler.hooks import traced
from . import mpi_comm
from .mpi_comm import TAG_REPLY, TAG_REQUEST

__all__ = ['ServerLink']


class ServerLink(object):
    """Mixin for stores that talk to server ranks; needs ``_world``, ``_watch``, ``_peer``,
    ``_sid`` and ``type``."""

    def _server_of(self, key):
        return self._world.server_ranks[zlib.crc32(repr(key).encode('utf-8'))
                                        % self._world.num_servers]

    def _wait_servers(self, test, servers, what, workers=()):
        """Poll ``test`` until it is True; raise when one of ``servers`` (or of ``workers``,
        whose part the wait also needs) has exited meanwhile."""
        def blame():
            for peer in list(servers) + list(workers):
                if peer in self._watch.gone:
                    return ('kvstore %s: %s %s while %s waits for it (%s)'
                            % (self.type, self._watch.role(peer), self._watch.left(peer),
                               self._watch.role(self._watch.rank), what))
            return None
        self._watch.wait(test, blame)

    @traced('KVStore', 'MPI_Waitall (servers)')
    def _wait_requests(self, requests, servers, what, workers=()):
        Testall = mpi_comm.mpi().Request.Testall  # pylint: disable=invalid-name
        self._wait_servers(lambda: Testall(requests), servers, what, workers)

    @traced('KVStore', 'MPI_Recv (server reply)')
    def _receive(self, server, what):
        """The next pickled reply of ``server``."""
        self._wait_servers(lambda: self._peer.Iprobe(source=server, tag=TAG_REPLY), [server],
                           what)
        return self._peer.recv(source=server, tag=TAG_REPLY)

    def _ask(self, server, op, key=None, extra=None):
        """Send a request that the server answers with a pickled reply; return the reply."""
        self._peer.send((op, self._sid, key, extra), dest=server, tag=TAG_REQUEST)
        reply = self._receive(server, 'its reply to %r' % op)
        if isinstance(reply, tuple) and reply and reply[0] == 'error':
            raise MXNetError('kvstore server (MPI rank %d): %s' % (server, reply[1]))
        return reply

    def _ask_all(self, op, extra=None):
        return [self._ask(server, op, None, extra) for server in self._world.server_ranks]

