"""What instrumented layers call while the profiler runs (they check a flag of ``PROFILER``
first, so none of this runs when it is off).

- :func:`run_op`: one operator call on a device, timed on that device's track (a GPU is
  synchronized before and after, so the time is the kernel's and not the launch's).
- :func:`custom_op`: the Python body of a Custom operator (``'<op_type>::pure_python'``), inside
  which imperative operators are named ``'<op_type>::<op>'`` in ``'Custom Operator'``, as MXNet
  names them.
- :func:`span`: a host-side stretch (data loading, kvstore call, MPI collective, optimizer
  update) on the calling thread's track.
- :func:`track_memory`: device memory held by arrays, as ``'Memory: cpu/0'`` counters."""
import contextlib
import functools
import threading
import weakref

from .objects import current_scope
from .state import (PROFILER, now_us, record_duration, record_counter, device_track,
                    thread_track)

__all__ = ['run_op', 'custom_op', 'span', 'traced', 'track_memory', 'track_bound_arrays',
           'device_name']

_LOCAL = threading.local()
OPERATOR, CUSTOM = 'operator', 'Custom Operator'


def _synchronize(ctx):
    from ..context import cupy_module  # pylint: disable=import-outside-toplevel
    with cupy_module().cuda.Device(ctx.device_id):
        cupy_module().cuda.get_current_stream().synchronize()


def _event_args(node_name):
    args = {'node': node_name} if node_name else {}
    where = current_scope()
    if where is not None:
        args['scope'] = where
    return args or None


def run_op(op_name, ctx, function, *args, node=None):
    """Call ``function(*args)`` (an operator's forward or backward on ``ctx``) and record it as
    ``op_name``; returns its result."""
    gpu = ctx.device_typeid == 2
    if gpu:
        _synchronize(ctx)
    start = now_us()
    result = function(*args)
    if gpu:
        _synchronize(ctx)
    end = now_us()
    owner = getattr(_LOCAL, 'custom', None)
    if owner is None:
        record_duration(OPERATOR, op_name, device_track(ctx), start, end - start,
                        _event_args(node))
    else:
        record_duration(CUSTOM, '%s::%s' % (owner, op_name), device_track(ctx), start,
                        end - start, _event_args(node))
    if PROFILER.memory:
        track_memory(result, ctx)
    return result


@contextlib.contextmanager
def custom_op(op_type, ctx, backward=False):
    """Time the Python body of Custom operator ``op_type`` on ``ctx``; operators it runs inside
    are attributed to it."""
    if not (PROFILER.symbolic or PROFILER.imperative):
        yield
        return
    owner = ('_backward_' if backward else '') + op_type
    outer = getattr(_LOCAL, 'custom', None)
    _LOCAL.custom = owner
    start = now_us()
    try:
        yield
    finally:
        end = now_us()
        _LOCAL.custom = outer
        record_duration(CUSTOM, owner + '::pure_python', device_track(ctx), start, end - start,
                        _event_args(None))


@contextlib.contextmanager
def span(category, name, args=None):
    """Record the block as ``name`` in ``category`` on the calling thread's track."""
    start = now_us()
    try:
        yield
    finally:
        record_duration(category, name, thread_track(), start, now_us() - start, args)


def traced(category, name=None, outermost=False):
    """Decorator: calls of the function are recorded (while ``PROFILER.api`` is on) as ``name``
    (a string, or a function of the first argument giving one; default: ``<Class>.<method>`` of
    the instance) in ``category``.

    With ``outermost``, a call made inside another recorded call of the same category on the
    same thread (a store method calling its parent's) is not recorded again."""
    def wrap(function):
        @functools.wraps(function)
        def call(*args, **kwargs):
            if not PROFILER.api:
                return function(*args, **kwargs)
            if outermost and category in _open_categories():
                return function(*args, **kwargs)
            if name is None:
                label = '%s.%s' % (type(args[0]).__name__, function.__name__)
            else:
                label = name(args[0]) if callable(name) else name
            opened = _open_categories()
            opened.append(category)
            try:
                with span(category, label):
                    return function(*args, **kwargs)
            finally:
                opened.pop()
        return call
    return wrap


def _open_categories():
    opened = getattr(_LOCAL, 'open', None)
    if opened is None:
        opened = _LOCAL.open = []
    return opened


# ---- memory ---------------------------------------------------------------------------------
_LIVE = {}            # id(array) -> (device name, bytes)
_TOTALS = {}          # device name -> bytes held by the tracked arrays


def device_name(ctx):
    """``'cpu/0'``, ``'gpu/1'``: how memory counters name a device."""
    return '%s/%d' % (ctx.device_type, ctx.device_id)


def track_memory(arrays, ctx):
    """Count the memory of ``arrays`` (one array or a list; views and arrays already counted are
    skipped) on ``ctx`` until each is freed, recording the device's new total."""
    if not isinstance(arrays, (list, tuple)):
        arrays = [arrays]
    device = device_name(ctx)
    changed = False
    for arr in arrays:
        key = id(arr)
        if arr is None or key in _LIVE or getattr(arr, 'base', None) is not None:
            continue
        size = int(getattr(arr, 'nbytes', 0))
        try:
            weakref.finalize(arr, _release, key, device, size)
        except TypeError:
            continue        # cannot tell when it is freed: not counted
        _LIVE[key] = (device, size)
        _TOTALS[device] = _TOTALS.get(device, 0) + size
        changed = True
    if changed:
        _report(device)


def track_bound_arrays(executor):
    """Count the argument, gradient and auxiliary arrays of a bound executor."""
    for group in (executor.arg_arrays, executor._grad_list, executor.aux_arrays):
        for arr in group:
            if arr is not None:
                track_memory(arr._data, arr.context)  # pylint: disable=protected-access


def _release(key, device, size):
    if _LIVE.pop(key, None) is None:
        return
    _TOTALS[device] = _TOTALS.get(device, 0) - size
    if PROFILER.memory:
        _report(device)


def _report(device):
    record_counter('Device Storage', 'Memory: ' + device, _TOTALS[device], tid=thread_track())
