"""Chrome trace-event JSON files (Perfetto, chrome://tracing) written by the profiler.

One process of the trace is one rank of the job (pid = rank, named ``rank R (host, pid P)``);
its threads are the devices (``cpu(0)``, ``gpu(1)``: operators) and the Python threads (data
loading, kvstore calls and MPI collectives, optimizer updates, user objects). In a job of several
processes each rank writes its own file (``profile.json`` becomes ``profile.rank1.json``, or name
the place with ``{rank}`` in the filename); :func:`merge` joins them into one trace, also as
``python -m mxmod.profiler merge OUT IN...``.

A continuous dump appends to the file and closes the JSON at the last dump, as MXNet does."""
import json
import os
import stat
import socket
import sys

from .state import track_names

__all__ = ['TraceFile', 'process_rank', 'rank_filename', 'merge']

_RANK_VARIABLES = (('MXMOD_RANK', 'MXMOD_WORLD_SIZE'), ('PMI_RANK', 'PMI_SIZE'),
                   ('OMPI_COMM_WORLD_RANK', 'OMPI_COMM_WORLD_SIZE'))


def process_rank():
    """(rank, number of processes) of this process in its MPI job; (0, 1) outside one."""
    for rank_var, size_var in _RANK_VARIABLES:
        if rank_var in os.environ:
            return int(os.environ[rank_var]), int(os.environ.get(size_var, '0') or 0) or 2
    mpi = sys.modules.get('mpi4py.MPI')
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        return mpi.COMM_WORLD.Get_rank(), mpi.COMM_WORLD.Get_size()
    return 0, 1


def rank_filename(filename, rank, size):
    """The file a rank writes: ``filename`` with ``{rank}`` replaced, or in a job of several
    processes with ``.rank<R>`` before the extension."""
    if '{rank}' in filename:
        return filename.replace('{rank}', str(rank))
    if size <= 1:
        return filename
    root, ext = os.path.splitext(filename)
    return '%s.rank%d%s' % (root, rank, ext or '')


class TraceFile(object):
    """The trace file of one profiler configuration, written in one or several dumps."""

    def __init__(self, filename):
        self.rank, size = process_rank()
        self.path = rank_filename(filename, self.rank, size)
        self.open = False          # a dump has started the JSON and not closed it
        self._named = set()
        self._names = {}

    def remove(self):
        """Delete a file left by an earlier run (MXNet starts every configuration afresh). Only a
        regular file: a device such as /dev/null, a pipe or a symbolic link is left in place (the
        first dump opens it for writing, as MXNet does)."""
        try:
            mode = os.lstat(self.path).st_mode if self.path else None
        except OSError:
            return
        if mode is not None and stat.S_ISREG(mode):
            os.unlink(self.path)

    def write(self, events, finished):
        """Write ``events`` (from :func:`state.take_events`); ``finished`` closes the JSON."""
        pieces = []
        if not self.open:
            self._named = set()
            pieces.append(self._process_metadata())
        tracks = track_names()
        for event in events:
            tid = event[3]
            if tid not in self._named:
                self._named.add(tid)
                pieces.append(self._thread_metadata(tid, tracks.get(tid, 'thread %d' % tid)))
            pieces.append(self._event(event))
        try:
            out = open(self.path, 'a' if self.open else 'w')
        except OSError as err:
            from ..atomic_io import SaveError  # pylint: disable=import-outside-toplevel
            raise SaveError('profiler: cannot write the trace file %r (set_config(filename=...)):'
                            ' %s' % (self.path, err.strerror or err)) from None
        with out:
            if not self.open:
                out.write('{\n    "traceEvents": [\n        ')
                out.write(',\n        '.join(pieces))
            elif pieces:
                out.write(',\n        ' + ',\n        '.join(pieces))
            if finished:
                out.write('\n    ],\n    "displayTimeUnit": "ms"\n}\n')
        self.open = not finished

    def _process_metadata(self):
        label = 'rank %d (%s, pid %d)' % (self.rank, socket.gethostname(), os.getpid())
        return ',\n        '.join([
            _metadata('process_name', self.rank, None, {'name': label}),
            _metadata('process_sort_index', self.rank, None, {'sort_index': self.rank})])

    def _thread_metadata(self, tid, name):
        return ',\n        '.join([
            _metadata('thread_name', self.rank, tid, {'name': name}),
            _metadata('thread_sort_index', self.rank, tid, {'sort_index': tid})])

    def _quoted(self, text):
        quoted = self._names.get(text)
        if quoted is None:
            quoted = self._names[text] = json.dumps(text)
        return quoted

    def _event(self, event):
        phase, category, name, tid, ts_us, value, args = event
        head = '{"name": %s, "cat": %s, "ph": "%s", "ts": %.3f, "pid": %d, "tid": %d' % (
            self._quoted(name), self._quoted(category), phase, ts_us, self.rank, tid)
        if phase == 'X':
            tail = ', "dur": %.3f' % value
            if args:
                tail += ', "args": ' + json.dumps(args)
        elif phase == 'C':
            tail = ', "args": {%s: %s}' % (self._quoted(name), json.dumps(value))
        else:
            tail = ', "s": "%s"' % value
        return head + tail + '}'


def _metadata(kind, pid, tid, args):
    event = {'name': kind, 'ph': 'M', 'pid': pid, 'args': args}
    if tid is not None:
        event['tid'] = tid
    return json.dumps(event)


def load(path):
    """The events of a trace file written by the profiler (or any Chrome trace JSON file)."""
    with open(path) as src:
        data = json.load(src)
    return data['traceEvents'] if isinstance(data, dict) else data


def merge(output, inputs):
    """Join the per-rank trace files ``inputs`` into one trace ``output`` (each rank stays its
    own process).

    Parameters
    ----------
    output : str
    inputs : list of str

    Returns
    -------
    int
        The number of events written.
    """
    events = []
    for path in inputs:
        events.extend(load(path))
    with open(output, 'w') as out:
        json.dump({'traceEvents': events, 'displayTimeUnit': 'ms'}, out)
    return len(events)
