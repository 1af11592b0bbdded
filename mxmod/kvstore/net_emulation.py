"""A slower network, emulated: a measuring aid for one machine, off by default.

``MXMOD_NET_EMULATION="bandwidth=10Gbit/s,latency=50us"`` makes the MPI stores hold every message
for the time a link of that bandwidth and latency would take to carry it, by sleeping (which
releases the GIL, so computation overlapped with communication goes on meanwhile). The real
transfer on the loopback still happens and is usually far faster, so a step then costs what it
would cost on that link. Units: ``bit/s``, ``kbit/s``, ``Mbit/s``, ``Gbit/s`` (also ``B/s``,
``kB/s``, ``MB/s``, ``GB/s`` for bytes); ``s``, ``ms``, ``us``, ``ns``.

Each process has a full-duplex link (its network interface): what it sends queues on the outgoing
side one message after another, each then waiting the latency; what a parameter server receives
queues on its incoming side (many workers pushing to one server share it). Collectives are charged as their usual algorithms send: a ring
allreduce of ``n`` bytes over ``p`` ranks sends ``2 (p-1)/p n`` bytes in ``2 (p-1)`` messages, an
allgather ``(p-1) n`` bytes in ``p-1`` messages, a broadcast ``n`` bytes in ``ceil(log2 p)`` steps,
a barrier ``2 ceil(log2 p)`` empty messages."""
import math
import os
import re
import threading
import time

from ..base import MXNetError

__all__ = ['ENV_NET_EMULATION', 'Link', 'parse', 'link', 'charge_collective', 'charge_message',
           'wrap', 'reset', 'now', 'parse_rate', 'parse_time']

ENV_NET_EMULATION = 'MXMOD_NET_EMULATION'

_RATE_UNITS = {'bit/s': 1 / 8., 'kbit/s': 1e3 / 8, 'mbit/s': 1e6 / 8, 'gbit/s': 1e9 / 8,
               'tbit/s': 1e12 / 8, 'b/s': 1., 'kb/s': 1e3, 'mb/s': 1e6, 'gb/s': 1e9}
_TIME_UNITS = {'s': 1., 'ms': 1e-3, 'us': 1e-6, 'ns': 1e-9}
_NUMBER = r'\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*'


class Link(object):
    """One process's emulated network link.

    Parameters
    ----------
    bandwidth : float
        Bytes per second.
    latency : float
        Seconds per message.
    """

    def __init__(self, bandwidth, latency):
        self.bandwidth = float(bandwidth)
        self.latency = float(latency)
        self._free_at = 0.0
        self._lock = threading.Lock()
        self.held_seconds = 0.0

    def __repr__(self):
        return 'Link(%.4g Gbit/s, %.4g us)' % (self.bandwidth * 8 / 1e9, self.latency * 1e6)

    def transfer_time(self, nbytes, messages=1):
        """Seconds the link needs for ``nbytes`` in ``messages`` messages, when idle."""
        return nbytes / self.bandwidth + messages * self.latency

    def hold(self, nbytes, messages=1, started=None):
        """Sleep until ``nbytes`` (in ``messages`` messages) would have crossed the link.

        Messages of concurrent threads queue on the link; the sleep releases the GIL.

        Parameters
        ----------
        nbytes : float
        messages : int
        started : float, optional
            ``time.perf_counter()`` when the real transfer began (its own time then counts
            toward the emulated one instead of adding to it).
        """
        now = time.perf_counter() if started is None else started
        with self._lock:
            start = max(now, self._free_at)
            self._free_at = start + nbytes / self.bandwidth
            until = self._free_at + messages * self.latency
        wait = until - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        self.held_seconds += max(0.0, wait)


def parse(spec):
    """``'bandwidth=10Gbit/s,latency=50us'`` -> :class:`Link` (latency defaults to 0).

    Parameters
    ----------
    spec : str
    """
    fields = {}
    for part in (p for p in spec.split(',') if p.strip()):
        name, sep, value = part.partition('=')
        name = name.strip().lower()
        if not sep or name not in ('bandwidth', 'latency'):
            raise MXNetError('%s=%r: expected bandwidth=<rate>[,latency=<time>], e.g. '
                             '"bandwidth=10Gbit/s,latency=50us"; cannot read %r'
                             % (ENV_NET_EMULATION, spec, part.strip()))
        fields[name] = value.strip()
    if 'bandwidth' not in fields:
        raise MXNetError('%s=%r names no bandwidth (e.g. bandwidth=10Gbit/s)'
                         % (ENV_NET_EMULATION, spec))
    bandwidth = _quantity(fields['bandwidth'], _RATE_UNITS, 'bandwidth')
    latency = _quantity(fields.get('latency', '0s'), _TIME_UNITS, 'latency')
    if bandwidth <= 0 or latency < 0:
        raise MXNetError('%s=%r: the bandwidth must be > 0 and the latency >= 0'
                         % (ENV_NET_EMULATION, spec))
    return Link(bandwidth, latency)


def parse_rate(text):
    """``'10Gbit/s'`` -> bytes per second."""
    return _quantity(text, _RATE_UNITS, 'bandwidth')


def parse_time(text):
    """``'50us'`` -> seconds."""
    return _quantity(text, _TIME_UNITS, 'latency')


def _quantity(text, units, what):
    match = re.match('^' + _NUMBER + r'([A-Za-z/]+)\s*$', text)
    unit = match and match.group(2).lower()
    if not match or unit not in units:
        raise MXNetError('%s: cannot read the %s %r; use a number and one of %s'
                         % (ENV_NET_EMULATION, what, text,
                            ', '.join(sorted(set(u for u in units)))))
    return float(match.group(1)) * units[unit]


_LINKS = None


def link(direction='out'):
    """The process's outgoing (or ``'in'``coming) :class:`Link` from ``MXMOD_NET_EMULATION``, or
    None when not emulating."""
    global _LINKS
    if _LINKS is None:
        spec = os.environ.get(ENV_NET_EMULATION, '').strip()
        if spec:
            out = parse(spec)
            _LINKS = {'out': out, 'in': Link(out.bandwidth, out.latency)}
        else:
            _LINKS = {}
    return _LINKS.get(direction)


def reset():
    """Forget the links read from the environment (tests)."""
    global _LINKS
    _LINKS = None


def _steps(size):
    return int(math.ceil(math.log2(size))) if size > 1 else 0


def collective_cost(kind, nbytes, size):
    """(bytes sent, messages) by one rank in a collective of ``size`` ranks.

    Parameters
    ----------
    kind : str
        'allreduce', 'allgather' (``nbytes`` is one rank's share), 'bcast', 'barrier'.
    nbytes : int
    size : int
    """
    if size <= 1:
        return 0, 0
    if kind == 'allreduce':
        return 2.0 * (size - 1) / size * nbytes, 2 * (size - 1)
    if kind == 'allgather':
        return float(size - 1) * nbytes, size - 1
    if kind == 'bcast':
        return float(nbytes), _steps(size)
    if kind == 'barrier':
        return 0.0, 2 * _steps(size)
    raise ValueError('unknown collective %r' % kind)


def charge_collective(kind, nbytes, size, started=None):
    """Hold for a collective's share of the link (no-op when not emulating); ``started`` is when
    the real collective began."""
    emulated = link()
    if emulated is not None:
        sent, messages = collective_cost(kind, nbytes, size)
        if messages:
            emulated.hold(sent, messages, started)


def now():
    """A start time for :func:`charge_collective` (0 when not emulating: no clock read)."""
    return time.perf_counter() if link() is not None else None


def charge_message(nbytes, direction='out'):
    """Hold for one point-to-point message of ``nbytes`` leaving (``'out'``) or reaching
    (``'in'``) this process (no-op when not emulating)."""
    emulated = link(direction)
    if emulated is not None:
        emulated.hold(nbytes, 1)


def payload_bytes(buf):
    """Bytes of an mpi4py buffer argument (an array, or ``[array, datatype]``)."""
    if isinstance(buf, (list, tuple)) and buf:
        buf = buf[0]
    return int(getattr(buf, 'nbytes', 0) or 0)


def pickled_bytes(obj):
    import pickle  # pylint: disable=import-outside-toplevel
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


class EmulatedComm(object):
    """An mpi4py communicator whose point-to-point messages are held on the emulated links.

    Sends are charged to this process's outgoing link when posted; blocking receives to its
    incoming link when they complete. Everything else is the wrapped communicator's.
    """

    def __init__(self, comm):
        self._comm = comm

    def __getattr__(self, name):
        return getattr(self._comm, name)

    def send(self, obj, *args, **kwargs):  # pylint: disable=missing-function-docstring
        charge_message(pickled_bytes(obj))
        return self._comm.send(obj, *args, **kwargs)

    def isend(self, obj, *args, **kwargs):  # pylint: disable=missing-function-docstring
        charge_message(pickled_bytes(obj))
        return self._comm.isend(obj, *args, **kwargs)

    def Send(self, buf, *args, **kwargs):  # pylint: disable=missing-function-docstring,invalid-name
        charge_message(payload_bytes(buf))
        return self._comm.Send(buf, *args, **kwargs)

    def Isend(self, buf, *args, **kwargs):  # pylint: disable=missing-function-docstring,invalid-name
        charge_message(payload_bytes(buf))
        return self._comm.Isend(buf, *args, **kwargs)

    def recv(self, *args, **kwargs):  # pylint: disable=missing-function-docstring
        obj = self._comm.recv(*args, **kwargs)
        charge_message(pickled_bytes(obj), 'in')
        return obj

    def Recv(self, buf, *args, **kwargs):  # pylint: disable=missing-function-docstring,invalid-name
        result = self._comm.Recv(buf, *args, **kwargs)
        charge_message(payload_bytes(buf), 'in')
        return result


def wrap(comm):
    """``comm`` itself, or an :class:`EmulatedComm` around it when emulating a network."""
    return EmulatedComm(comm) if link() is not None else comm
