"""Imperative operator calls: ``mx.nd.<Op>(*inputs, out=None, **params)`` for every registered op."""
import numpy as np

from ..base import MXNetError, DeferredOpError
from ..context import Context, as_context, current_context, device_scope, xp_of
from ..ops.base import OPS, OpContext
from ..ops.sparse_registry import rule_of, run_forward
from ..sparse_storage import SparseStorage
from ..profiler.hooks import run_op
from ..profiler.state import PROFILER
from . import tape
from .ndarray import NDArray, from_xp, defer_error, pending_error

_INSTANCE_CACHE = {}


def _op_instance(cls, params):
    key = (cls, tuple(sorted((k, repr(v)) for k, v in params.items())))
    inst = _INSTANCE_CACHE.get(key)
    if inst is None:
        inst = cls(params)
        if len(_INSTANCE_CACHE) < 4096:
            _INSTANCE_CACHE[key] = inst
    return inst


def invoke(op_name, args, kwargs):
    """Run operator ``op_name`` imperatively on NDArrays and return an NDArray or a list."""
    cls = OPS[op_name]
    out = kwargs.pop('out', None)
    kwargs.pop('name', None)
    is_train = kwargs.pop('is_train', None)
    if is_train is None:
        is_train = tape.is_training()
    ctx_arg = kwargs.pop('ctx', None)
    if ctx_arg is not None and not isinstance(ctx_arg, Context):
        ctx_arg = as_context(ctx_arg, '%s: ctx' % op_name)
    arrays, extra = _split_positional(cls, args, kwargs)
    params = dict(extra)
    named = {}
    for key, val in kwargs.items():
        if isinstance(val, NDArray):
            named[key] = val
        elif key in ('num_args',) or val is not None or key in cls.params:
            params[key] = val
    if 'num_args' in cls.params and 'num_args' not in params:
        params['num_args'] = len(arrays) + len(named)
    op = _op_instance(cls, {k: v for k, v in params.items() if v is not None or k in cls.params})
    names = op.list_arguments() + op.list_auxiliary_states()
    if named:
        by_name = dict(zip(names, arrays))
        by_name.update(named)
        missing = [n for n in names if n not in by_name]
        if missing:
            raise MXNetError('%s: missing input(s) %s' % (op_name, missing))
        arrays = [by_name[n] for n in names]
    if len(arrays) != len(names):
        raise MXNetError('%s expects %d inputs %s, got %d' % (op_name, len(names), names, len(arrays)))
    return run_instance(op, arrays, out=out, is_train=is_train, ctx=ctx_arg)


def run_instance(op, arrays, out=None, is_train=None, ctx=None):
    """Run operator instance ``op`` imperatively on NDArrays (arguments then auxiliary states),
    recording it for autograd; returns the visible outputs (an NDArray or a list)."""
    if is_train is None:
        is_train = tape.is_training()
    cls = type(op)
    _check_types(op, arrays)
    _check_shapes(op, arrays)
    ctx = arrays[0].context if arrays else ctx or current_context()
    octx = OpContext(xp_of(ctx), ctx, is_train=is_train)
    if out is not None and getattr(cls, 'accumulates_into_out', False):
        octx.out = [o._data for o in (out if isinstance(out, (list, tuple)) else [out])]
    nargs = len(op.list_arguments())
    data = [a._data for a in arrays]
    forward = op.forward
    if rule_of(op) is not None or any(isinstance(d, SparseStorage) for d in data):
        forward = lambda octx, ins, aux: run_forward(op, octx, ins, aux)  # noqa: E731
    if out is not None:
        tape.check_writable(out if isinstance(out, (list, tuple)) else [out])
    pending = pending_error(arrays)
    try:
        with device_scope(ctx):
            if PROFILER.imperative:
                results = run_op(op.op_name, ctx, forward, octx, data[:nargs], data[nargs:])
            else:
                results = forward(octx, data[:nargs], data[nargs:])
    except DeferredOpError as err:
        # reported when a result is read, as MXNet's asynchronous engine does
        delivered = _deliver(_placeholders(op, arrays, ctx), out, ctx)
        defer_error(delivered if isinstance(delivered, (list, tuple)) else [delivered], err)
        return delivered
    except MXNetError:
        raise
    except (ValueError, IndexError, TypeError, KeyError, ZeroDivisionError, OverflowError,
            MemoryError) as err:
        raise _diagnosis(op, arrays, err) from None
    delivered = _deliver(results[:op.num_visible_outputs()], out, ctx)
    if pending is not None:     # computed from a value that carries an error: so does this
        defer_error(delivered if isinstance(delivered, (list, tuple)) else [delivered], pending)
    if tape.is_recording():
        outs = delivered if isinstance(delivered, (list, tuple)) else [delivered]
        tape.record_op(op, octx, arrays[:nargs], arrays[nargs:], results, list(outs))
    return delivered


def _placeholders(op, arrays, ctx):
    """Zero arrays of the shapes and dtypes of the visible outputs (for a failed call)."""
    nargs = len(op.list_arguments())
    nout = len(op.list_outputs())
    shapes = [tuple(a.shape) for a in arrays]
    _, out_shapes = op.infer_shape(shapes[:nargs] + shapes[nargs:], [None] * nout)
    dtypes = [np.dtype(a.dtype).name for a in arrays]
    _, out_types = op.infer_type(dtypes, [None] * nout)
    xp = xp_of(ctx)
    with device_scope(ctx):
        return [xp.zeros(s or (), dtype=t or (dtypes[0] if dtypes else 'float32'))
                for s, t in zip(out_shapes[:op.num_visible_outputs()],
                                out_types[:op.num_visible_outputs()])]


def _check_shapes(op, arrays):
    """Refuse input shapes the operator's shape inference does not accept, as MXNet infers
    shapes of imperative calls too (a FullyConnected weight that disagrees with num_hidden, a
    kernel larger than its input, elemwise_add of two shapes); each operator instance remembers
    the input shapes it has accepted, so repeated calls cost a set lookup."""
    if not arrays:
        return
    shapes = tuple([a._data.shape for a in arrays])
    seen = op.__dict__.get('_accepted_shapes')
    if seen is None:
        seen = op.__dict__['_accepted_shapes'] = set()
    elif shapes in seen:
        return
    if any(0 in shape or not shape for shape in shapes):
        return      # 0 is an unknown dimension to shape inference: zero-size arrays pass
    try:
        op.infer_shape([tuple(shape) for shape in shapes], [None] * len(op.list_outputs()))
    except MXNetError as err:
        raise MXNetError('%s; input shapes %s' % (err, [tuple(x) for x in shapes])) from None
    except Exception:  # pylint: disable=broad-except
        return      # an inference that cannot judge these inputs: the computation decides
    if len(seen) < 256:
        seen.add(shapes)


def _diagnosis(op, arrays, err):
    """An MXNetError for an operator whose computation failed inside numpy: what shape
    inference says is wrong with the inputs (as MXNet reports it), else the inputs and the
    failure."""
    shapes = [tuple(a.shape) for a in arrays]
    try:
        op.infer_shape(list(shapes), [None] * len(op.list_outputs()))
    except MXNetError as found:
        return MXNetError('%s; input shapes %s' % (found, shapes))
    except Exception:  # pylint: disable=broad-except
        pass
    if isinstance(err, MemoryError):
        return MXNetError('%s: out of memory computing on inputs of shapes %s'
                          % (op.op_name, shapes))
    return MXNetError('%s cannot compute on inputs of shapes %s and dtypes %s: %s: %s'
                      % (op.op_name, shapes, [np.dtype(a.dtype).name for a in arrays],
                         type(err).__name__, err))


def _check_types(op, arrays):
    """Refuse input dtypes the operator's type inference does not accept (as MXNet infers types
    of imperative calls too): ``float32 + float64`` is an error, not a promotion."""
    if len(arrays) < 2:
        return
    given = [np.dtype(a._data.dtype).name for a in arrays]
    if len(set(given)) == 1:
        return
    nargs = len(op.list_arguments())
    inferred, _ = op.infer_type(given[:nargs] + given[nargs:], [None] * len(op.list_outputs()))
    for i, (want, got) in enumerate(zip(inferred, given)):
        if want is not None and np.dtype(want).name != got:
            raise MXNetError('Incompatible attr in node %s at %d-th input: expected %s, got %s'
                             % (op.op_name, i, np.dtype(want).name, got))


def _split_positional(cls, args, kwargs):
    """Leading NDArray arguments are inputs; later positional values bind to the operator's
    parameters in declaration order, as MXNet's generated functions do."""
    arrays = []
    k = 0
    while k < len(args) and (isinstance(args[k], NDArray) or args[k] is None):
        if args[k] is not None:
            arrays.append(args[k])
        k += 1
    rest = args[k:]
    if not rest:
        return arrays, {}
    names = [n for n in cls.params if n not in kwargs]
    if len(rest) > len(names):
        raise MXNetError('%s: too many positional arguments %r; parameters are %s'
                         % (cls.op_name, rest, list(cls.params)))
    return arrays, dict(zip(names, rest))


def _deliver(results, out, ctx):
    if out is not None:
        outs = out if isinstance(out, (list, tuple)) else [out]
        for dst, val in zip(outs, results):
            dst._set(val)
        return out
    wrapped = [from_xp(r, ctx) for r in results]
    return wrapped[0] if len(wrapped) == 1 else wrapped


def make_function(op_name):
    """Build the Python function ``mx.nd.<op_name>``."""
    def fn(*args, **kwargs):
        return invoke(op_name, args, kwargs)
    fn.__name__ = op_name
    fn.__doc__ = 'Imperative call of operator %s (see mx.sym.%s for parameters).' % (op_name, op_name)
    return fn
