"""``mx.profiler``: where the time of a training job goes, with MXNet 1.9.1's API.

    mx.profiler.set_config(profile_all=True, filename='profile.json', aggregate_stats=True)
    mx.profiler.set_state('run')
    mod.fit(...)
    mx.profiler.set_state('stop')
    mx.profiler.dump()                 # Chrome trace-event JSON: open it in Perfetto
    print(mx.profiler.dumps())         # per-operator table, MXNet's layout

Recorded events: every operator's forward and backward run by an executor (``profile_symbolic``)
or called as ``mx.nd.<op>`` (``profile_imperative``), on its device's track; Custom operators'
Python bodies; kvstore calls with their MPI / NCCL collectives, data loading (``DataIter`` batches),
optimizer updates and the Module's per-batch steps (``profile_api``); device memory held by arrays
(``profile_memory``); and the user's Domain/Task/Frame/Event/Counter/Marker objects. One trace
process is one rank of the job, one thread one device or Python thread (see :mod:`.trace`).

When the profiler is off, instrumented code pays one attribute check (``PROFILER.<kind>``)."""
import atexit
import os
import threading
import warnings

from ..base import MXNetError
from . import hooks  # noqa: F401
from .aggregate import SORT_KEYS
from .objects import Domain, Task, Frame, Event, Counter, Marker, scope  # noqa: F401
from .state import PROFILER, take_events, new_aggregate, env_flag
from .trace import TraceFile, merge  # noqa: F401

__all__ = ['set_config', 'set_state', 'pause', 'resume', 'dump', 'dumps', 'dump_profile',
           'profiler_set_config', 'profiler_set_state', 'set_kvstore_handle', 'Domain', 'Task',
           'Frame', 'Event', 'Counter', 'Marker', 'scope', 'merge']

_MODES = ('symbolic', 'imperative', 'memory', 'api')
_PROCESSES = ('worker', 'server')
_CONFIG = {'filename': 'profile.json', 'continuous_dump': True, 'dump_period': 1.0}
_OUTPUT = {'file': None, 'enabled': False, 'timer': None}
_KVSTORE = {'handle': None}


def _as_bool(key, value):
    text = str(value).strip().lower()
    if text in ('true', '1'):
        return True
    if text in ('false', '0'):
        return False
    raise MXNetError('profiler.set_config: %s must be a boolean, got %r' % (key, value))


def _parse_config(kwargs):
    known = {'profile_all', 'filename', 'continuous_dump', 'dump_period', 'aggregate_stats',
             'profile_process'} | {'profile_' + m for m in _MODES}
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise MXNetError('profiler.set_config: cannot find argument(s) %s; possible arguments: '
                         '%s' % (unknown, sorted(known)))
    every = _as_bool('profile_all', kwargs.get('profile_all', False))
    mode = {m: every or _as_bool('profile_' + m, kwargs.get('profile_' + m, True))
            for m in _MODES}
    period = float(kwargs.get('dump_period', 1.0))
    continuous = _as_bool('continuous_dump', kwargs.get('continuous_dump', True))
    if continuous and period <= 0:
        raise MXNetError('profiler.set_config: dump_period must be > 0, got %r' % period)
    return mode, str(kwargs.get('filename', 'profile.json')), continuous, period, \
        _as_bool('aggregate_stats', kwargs.get('aggregate_stats', False))


def _check_process(profile_process):
    if profile_process not in _PROCESSES:
        raise MXNetError('profiler: profile_process must be one of %s, got %r'
                         % (_PROCESSES, profile_process))
    if profile_process == 'server':
        raise MXNetError("profiler: profile_process='server' profiles MXNet's ps-lite server "
                         "processes; mxmod's dist_async servers are MPI ranks of the job: profile "
                         "them with set_config/set_state in the server's own process "
                         "(MXNET_PROFILER_AUTOSTART=1 in its environment)")


def set_config(**kwargs):
    """Configure the profiler (keyword arguments only).

    Parameters
    ----------
    filename : str, default 'profile.json'
        The trace file (Chrome trace-event JSON). In a job of several processes each rank writes
        its own (``.rank<R>`` before the extension, or where ``{rank}`` says).
    profile_all : bool, default False
        Every kind of event below.
    profile_symbolic, profile_imperative, profile_memory, profile_api : bool, default True
        Operators run by executors; operators called as ``mx.nd.<op>``; device memory; host-side
        calls (kvstore and collectives, data loading, optimizer updates, Module steps).
    continuous_dump : bool, default True
        Append the events to the file every ``dump_period`` seconds while running.
    dump_period : float, default 1.0
    aggregate_stats : bool, default False
        Keep the per-name statistics that :func:`dumps` prints.
    profile_process : {'worker'}, default 'worker'
    """
    _check_process(kwargs.pop('profile_process', 'worker'))
    mode, filename, continuous, period, aggregate = _parse_config(kwargs)
    with PROFILER.lock:
        _stop_timer()
        PROFILER.mode = mode
        PROFILER.refresh()
        _CONFIG.update(filename=filename, continuous_dump=continuous, dump_period=period)
        trace = _OUTPUT['file'] = TraceFile(filename)
        trace.remove()
        if aggregate:
            PROFILER.aggregate = PROFILER.aggregate or new_aggregate()
        else:
            PROFILER.aggregate = None
        if continuous and _OUTPUT['enabled']:
            _start_timer()


def set_state(state='stop', profile_process='worker'):
    """Start (``'run'``) or stop (``'stop'``) recording."""
    _check_process(profile_process)
    if state not in ('run', 'stop'):
        raise MXNetError("profiler.set_state: state must be 'run' or 'stop', got %r" % (state,))
    with PROFILER.lock:
        PROFILER.running = state == 'run'
        PROFILER.paused = False
        PROFILER.refresh()
        if PROFILER.running:
            if _OUTPUT['file'] is None:
                _OUTPUT['file'] = TraceFile(_CONFIG['filename'])
            _OUTPUT['enabled'] = True
            if _CONFIG['continuous_dump']:
                _start_timer()


def pause(profile_process='worker'):
    """Stop recording until :func:`resume`."""
    _check_process(profile_process)
    with PROFILER.lock:
        PROFILER.paused = True
        PROFILER.refresh()


def resume(profile_process='worker'):
    """Record again after :func:`pause`."""
    _check_process(profile_process)
    with PROFILER.lock:
        PROFILER.paused = False
        PROFILER.refresh()


def dump(finished=True, profile_process='worker'):
    """Write the events recorded so far to the trace file.

    Parameters
    ----------
    finished : bool, default True
        Close the file (its JSON complete); later events need ``set_state('run')`` again.
        With ``continuous_dump`` and ``finished=False`` the events are appended and the file
        stays open for more.
    """
    _check_process(profile_process)
    with PROFILER.lock:
        if not _OUTPUT['enabled']:
            raise MXNetError("profiler.dump: the profiler hasn't been run; call "
                             "profiler.set_config(...) and profiler.set_state('run') first")
        _write(bool(finished))


def _write(finished):
    continuous = _CONFIG['continuous_dump']
    last = finished or not continuous
    if finished:
        _stop_timer()
    _OUTPUT['file'].write(take_events(), last)
    _OUTPUT['enabled'] = continuous and not last


def dumps(reset=False, format='table', sort_by='total', ascending=False):  # pylint: disable=redefined-builtin
    """The aggregate statistics (``aggregate_stats=True``) as text.

    Parameters
    ----------
    reset : bool, default False
        Clear the statistics afterwards.
    format : {'table', 'json'}, default 'table'
    sort_by : {'total', 'avg', 'min', 'max', 'count'}, default 'total'
    ascending : bool, default False

    Returns
    -------
    str
        MXNet's table or JSON layout; empty when statistics are not kept.
    """
    if format not in ('table', 'json'):
        raise ValueError("profiler.dumps: format must be 'table' or 'json', got %r" % (format,))
    if sort_by not in SORT_KEYS:
        raise ValueError('profiler.dumps: sort_by must be one of %s, got %r' % (SORT_KEYS, sort_by))
    for name, value in (('ascending', ascending), ('reset', reset)):
        if value not in (True, False):
            raise ValueError('profiler.dumps: %s must be True or False, got %r' % (name, value))
    stats = PROFILER.aggregate
    if stats is None:
        return ''
    text = stats.table(sort_by, ascending) if format == 'table' else stats.json(sort_by, ascending)
    if reset:
        stats.clear()
    return text


def set_kvstore_handle(handle):
    """Remember the kvstore whose processes ``profile_process`` refers to (MXNet's API)."""
    _KVSTORE['handle'] = handle


# ---- periodic dumps ---------------------------------------------------------------------------
def _start_timer():
    if _OUTPUT['timer'] is not None:
        return
    stop = threading.Event()

    def loop():
        while not stop.wait(_CONFIG['dump_period']):
            with PROFILER.lock:
                if not _OUTPUT['enabled'] or _OUTPUT['timer'] is not stop:
                    return
                if PROFILER.events or _OUTPUT['file'].open:
                    _write(False)

    _OUTPUT['timer'] = stop
    threading.Thread(target=loop, name='mxmod-profiler-dump', daemon=True).start()


def _stop_timer():
    timer, _OUTPUT['timer'] = _OUTPUT['timer'], None
    if timer is not None:
        timer.set()


# ---- deprecated names ---------------------------------------------------------------------
def profiler_set_config(mode='symbolic', filename='profile.json'):
    """Deprecated: ``set_config(profile_<mode>=True, filename=filename)``."""
    warnings.warn('profiler.profiler_set_config() is deprecated. Please use '
                  'profiler.set_config() instead', stacklevel=2)
    if mode not in ('symbolic', 'all'):
        raise MXNetError("profiler_set_config: mode must be 'symbolic' or 'all', got %r" % mode)
    set_config(**{'profile_' + mode: True, 'filename': filename})


def profiler_set_state(state='stop'):
    """Deprecated: :func:`set_state`."""
    warnings.warn('profiler.profiler_set_state() is deprecated. Please use '
                  'profiler.set_state() instead', stacklevel=2)
    set_state(state)


def dump_profile():
    """Deprecated: ``dump(True)``."""
    warnings.warn('profiler.dump_profile() is deprecated. Please use profiler.dump() instead',
                  stacklevel=2)
    dump(True)


_MODE_BITS = (('symbolic', 1), ('imperative', 2), ('api', 4), ('memory', 8))


def _autostart():
    """MXNET_PROFILER_AUTOSTART=1: profile the whole process from import to exit, as MXNet does.

    MXNET_PROFILER_MODE is MXNet's bit mask (1 symbolic, 2 imperative, 4 api, 8 memory; default
    13; 'all' is 15); the trace goes to profile.json (per rank in a job), written at exit."""
    setting = os.environ.get('MXNET_PROFILER_MODE', '13').strip().lower()
    try:
        mask = 15 if setting == 'all' else int(setting)
    except ValueError:
        raise MXNetError('MXNET_PROFILER_MODE must be a bit mask (1 symbolic, 2 imperative, 4 api, '
                         '8 memory) or "all", got %r' % setting) from None
    set_config(continuous_dump=False,
               **{'profile_' + kind: bool(mask & bit) for kind, bit in _MODE_BITS})
    set_state('run')

    def finish():
        # a process that recorded nothing (mxmod.launch's own, say) leaves no file
        if _OUTPUT['enabled'] and (PROFILER.events or _OUTPUT['file'].open):
            set_state('stop')
            dump(True)
        _OUTPUT['enabled'] = False
    atexit.register(finish)


def _dump_at_exit():
    """Write what was recorded since the last final dump when the process ends, as MXNet's
    profiler does on destruction: a program that runs the profiler and never calls
    :func:`dump` still leaves its trace file (example/profiler/profiler_ndarray.py)."""
    with PROFILER.lock:
        if _OUTPUT['enabled'] and _OUTPUT['file'] is not None:
            _write(True)


atexit.register(_dump_at_exit)      # registered first, so it runs after the autostart's finish
if env_flag('MXNET_PROFILER_AUTOSTART'):
    _autostart()
