"""``mx.nd.contrib.foreach``, ``while_loop`` and ``cond``: the loops and the branch run in
Python on NDArrays, each step's operators recorded by autograd like any other call (MXNet's
imperative versions). The nesting helpers (``flatten``, ``regroup``) serve the symbolic
versions too."""
from ..base import MXNetError, MXNetValueError, as_list
from .ndarray import NDArray, concat, stack, zeros

__all__ = ['foreach', 'while_loop', 'cond']


class ControlFlowError(MXNetError, AssertionError):
    """Inputs or results of a loop body or branch of the wrong kind (MXNet asserts these)."""


def flatten(args, what, kind):
    """``(flat list, format)`` of a ``kind`` (NDArray or Symbol) or nested lists of them, in
    MXNet's format: 0 for one value (a Symbol of n > 1 outputs: n), a list of formats for a
    list."""
    if isinstance(args, kind):
        count = len(args.list_outputs()) if hasattr(args, 'list_outputs') else 0
        return [args], count if count > 1 else 0
    if not isinstance(args, (list, tuple)):
        raise ControlFlowError('%s must be (nested) list of %s, but got %r of type %s'
                               % (what, kind.__name__, args, type(args).__name__))
    flat, fmts = [], []
    for item in args:
        sub, fmt = flatten(item, what, kind)
        flat.extend(sub)
        fmts.append(fmt)
    return flat, fmts


def regroup(args, fmt):
    """Undo :func:`flatten`: ``(nested values, the values left over)``."""
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        return args[:fmt], args[fmt:]
    out = []
    for item in fmt:
        res, args = regroup(args, item)
        out.append(res)
    return out, args


def check_all(items, kind, message):
    """Raise ``message`` unless every item is a ``kind``."""
    if not all(isinstance(i, kind) for i in items):
        raise ControlFlowError(message)


def as_python(value, kind, what):
    """``value`` (a number or a one-element array) as a Python ``kind`` (int or bool)."""
    if hasattr(value, 'asscalar'):
        value = value.asscalar()
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise MXNetValueError('Cannot convert %s to python %s' % (what, kind.__name__)) from None


def foreach(body, data, init_states):
    """Run ``body(data[i], states) -> (outputs, states)`` for each i along axis 0 of ``data``.

    Parameters
    ----------
    body : callable
    data : NDArray or nested list of NDArrays
    init_states : NDArray or nested list of NDArrays

    Returns
    -------
    (outputs, states)
        The steps' outputs stacked along a new axis 0, and the final states.
    """
    flat, _ = flatten(data, 'foreach input', NDArray)
    check_all(flat, NDArray, 'data should be an NDArray or a nested list of NDArrays')
    flat, _ = flatten(init_states, 'foreach states', NDArray)
    check_all(flat, NDArray, 'init_states should be an NDArray or a nested list of NDArrays')
    single = isinstance(data, NDArray)
    length = data.shape[0] if single else data[0].shape[0]
    if length == 0:
        raise MXNetValueError('foreach: the data have no step along axis 0')
    states, steps, out_fmt = init_states, [], None
    for i in range(length):
        outs, states = body(data[i] if single else [d[i] for d in data], states)
        outs, out_fmt = flatten(outs, 'foreach output', NDArray)
        steps.append(outs)
    stacked = [stack(*items) for items in zip(*steps)]
    return regroup(stacked, out_fmt)[0], states


def _step(func, loop_vars):
    """One call of a while_loop body: ``(flat step outputs, format, new loop variables)``."""
    step_output, new_vars = func(*loop_vars)
    step_output = [] if step_output is None else step_output
    new_vars = [] if new_vars is None else new_vars
    step_output = list(step_output) if isinstance(step_output, tuple) else step_output
    new_vars = as_list(list(new_vars) if isinstance(new_vars, tuple) else new_vars)
    if len(loop_vars) != len(new_vars):
        raise MXNetValueError('The length of loop_vars should be consistent during the loop')
    step_output, out_fmt = flatten(step_output, 'while output', NDArray)
    return step_output, out_fmt, new_vars


def while_loop(cond, func, loop_vars, max_iterations=None):
    """Run ``func(*loop_vars) -> (step_output, new_loop_vars)`` while ``cond(*loop_vars)`` is
    true, at most ``max_iterations`` times.

    Parameters
    ----------
    cond, func : callable
    loop_vars : NDArray or list of NDArrays
    max_iterations : int

    Returns
    -------
    (outputs, loop_vars)
        The steps' outputs stacked along axis 0 and padded to ``max_iterations`` rows (the
        padding is zeros), and the final loop variables.
    """
    if max_iterations is None:
        raise MXNetValueError('max_iterations should be specified')
    max_iterations = as_python(max_iterations, int, 'max_iteration')
    if len(loop_vars) == 0:
        raise MXNetValueError('loop_vars should contain at least one element')
    single = isinstance(loop_vars, NDArray)
    loop_vars = as_list(loop_vars)
    outputs, out_fmt = [], None
    while len(outputs) < max_iterations and \
            as_python(cond(*loop_vars), bool, 'Return value of cond'):
        step_output, out_fmt, loop_vars = _step(func, loop_vars)
        if outputs and len(step_output) != len(outputs[0]):
            raise MXNetValueError('Number of elements in step_output should be the same in '
                                  'each step')
        outputs.append(step_output)
    stacked = []
    for k, items in enumerate(zip(*outputs), 1):
        items = [x.expand_dims(0) for x in items]
        if len(outputs) != max_iterations:
            items.append(zeros((max_iterations - len(outputs),) + items[0].shape[1:],
                               ctx=items[0].context, dtype=items[0].dtype))
        try:
            stacked.append(concat(*items, dim=0))
        except MXNetError:
            raise MXNetValueError('\n'.join(
                ['Shapes of %d-th elements in step_outputs are inconsistent, which are:' % k] +
                ['  Step %d, shape is %s' % (i, x.shape) for i, x in enumerate(items)])) from None
    if out_fmt is not None:
        stacked = regroup(stacked, out_fmt)[0]
    return stacked, loop_vars[0] if single else loop_vars


def cond(pred, then_func, else_func):
    """``then_func()`` if the one-element ``pred`` is true, else ``else_func()``."""
    return then_func() if as_python(pred, bool, 'pred') else else_func()
