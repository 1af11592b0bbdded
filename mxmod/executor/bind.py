"""Binding: from a Symbol and shapes/arrays to an Executor (bind, simple_bind, reshape)."""
import contextlib
import gc

import numpy as np

from ..base import MXNetError
from ..context import Context
from ..ndarray.ndarray import NDArray, from_xp, zeros as nd_zeros
from ..ops.base import unknown
from ..symbol.infer import seed_shapes, seed_types, solve
from ..sparse_storage import STYPES
from . import inference_cache, storage
from .cse import eliminate_common_expr, enabled as cse_enabled
from .executor import Executor
from .plan import Plan

_REQS = ('write', 'add', 'null', 'inplace')


def _grad_reqs(grad_req, names):
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(names)
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(names):
            raise MXNetError('grad_req list has %d entries, the symbol has %d arguments %s'
                             % (len(grad_req), len(names), names))
        reqs = list(grad_req)
    elif isinstance(grad_req, dict):
        reqs = [grad_req.get(n, 'null') for n in names]
    else:
        raise TypeError('grad_req must be a str, list or dict, got %s' % type(grad_req).__name__)
    for r in reqs:
        if r not in _REQS:
            raise MXNetError('invalid grad_req %r; expected one of write, add, null' % r)
    return ['write' if r == 'inplace' else r for r in reqs]


@contextlib.contextmanager
def paused_gc():
    """Python's cyclic garbage collector off for the duration (binding makes tens of thousands
    of long-lived objects; collecting while they are made costs a large part of the bind and
    finds nothing). Nested uses leave it to the outermost to switch it back on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def optimized_plan(sym):
    """The graph to execute (common subexpressions merged unless disabled) and its Plan."""
    if cse_enabled():
        opt = eliminate_common_expr(sym)
        if opt is not sym:
            # the merged graph has the same variables, read the same way
            args, auxs = sym._arg_nodes()
            opt_plan = Plan(opt, aux_ids={id(n) for n in auxs})
            if (opt_plan.arg_names, opt_plan.aux_names) == ([n.name for n in args],
                                                            [n.name for n in auxs]):
                return opt, opt_plan
    return sym, Plan(sym)


def _slot_info(plan, shape_known, type_known):
    """Inferred shape and dtype of every slot of ``plan`` (None where unknown), and the
    inference graph (for :func:`default_float32`)."""
    graph = plan.inference_graph()
    shapes = solve(graph, seed_shapes(graph, shape_known), 'shape')
    return shapes, solve(graph, seed_types(graph, type_known), 'type'), graph


def default_float32(plan, graph, slot_types):
    """Give the variables of no inferred dtype float32 and go on inferring from there (what
    inferring again from all the variables' dtypes gives, at the cost of the operators that
    read those variables)."""
    untyped = [slot for slot in plan.arg_slots + plan.aux_slots if slot_types[slot] is None]
    if untyped:
        for slot in untyped:
            slot_types[slot] = 'float32'
        solve(graph, slot_types, 'type', changed_entries=untyped)
    return slot_types


def _simple_bind_slots(sym, plan, shapes, type_dict):
    """Shape and dtype of every slot for simple_bind: inferred from the given shapes and dtypes
    (every variable must get a shape; those of no dtype are float32), or, while a
    BucketingModule binds, what it inferred for a graph of the same structure and inputs."""
    cache = inference_cache.current()
    token = None
    if cache is not None:
        found, token = cache.lookup(sym, shapes, type_dict, cse_enabled(), plan.slots)
        if found is not None:
            return found
    slot_shapes, slot_types, graph = _slot_info(plan, shapes, type_dict)
    missing = [n for n, s in zip(plan.arg_names + plan.aux_names, _var_shapes(plan, slot_shapes))
               if unknown(s)]
    if missing:
        raise MXNetError('simple_bind: cannot infer the shapes of %s from the given shapes %s; '
                         'give them as keyword arguments' % (missing, shapes))
    default_float32(plan, graph, slot_types)
    if cache is not None:
        cache.store(token, slot_shapes, slot_types)
    return slot_shapes, slot_types


def _arg_ctx(plan, sym, ctx, group2ctx, names):
    """Context of each variable (its ctx_group's device when group2ctx maps it)."""
    nodes = {n.name: n for n in sym._topo() if n.op is None}
    out = []
    for name in names:
        group = nodes[name].attrs.get('__ctx_group__')
        out.append(group2ctx.get(group, ctx) if group and group2ctx else ctx)
    return out


def simple_bind(sym, ctx, grad_req, type_dict, group2ctx, shared_arg_names, shared_exec,
                shared_buffer, shapes, stype_dict=None):
    """Infer shapes, types and storage types, allocate arrays and bind (see
    Symbol.simple_bind)."""
    with paused_gc():
        return _simple_bind(sym, ctx, grad_req, type_dict, group2ctx, shared_arg_names,
                            shared_exec, shared_buffer, shapes, stype_dict)


def _simple_bind(sym, ctx, grad_req, type_dict, group2ctx, shared_arg_names, shared_exec,
                 shared_buffer, shapes, stype_dict):
    if not isinstance(ctx, Context):
        raise TypeError('simple_bind: ctx must be a Context (for example mx.cpu() or mx.gpu(0)), '
                        'got %r (%s)' % (ctx, type(ctx).__name__))
    opt, plan = optimized_plan(sym)
    slot_shapes, slot_types = _simple_bind_slots(sym, plan, shapes, dict(type_dict or {}))
    reqs = _grad_reqs(grad_req, plan.arg_names)
    group2ctx = group2ctx or {}
    arg_ctx = _arg_ctx(plan, sym, ctx, group2ctx, plan.arg_names)
    aux_ctx = _arg_ctx(plan, sym, ctx, group2ctx, plan.aux_names)
    shared = _shared_arrays(shared_exec, shared_arg_names)
    params = set(shared_arg_names or ())
    stypes, grad_stypes = _bind_stypes(plan, opt, stype_dict, reqs)
    args, grads = [], []
    for name, slot, req, actx in zip(plan.arg_names, plan.arg_slots, reqs, arg_ctx):
        sparse = (stypes[slot], grad_stypes.get(slot, 'default'))
        arr, garr = _arg_arrays(name, slot_shapes[slot], slot_types[slot], actx, req,
                                shared.get(name), name in params, shared_buffer, sparse)
        args.append(arr)
        grads.append(garr)
    fresh = [name in params and shared.get(name) is None for name in plan.arg_names]
    pack_contiguous([a for a, new in zip(args, fresh) if new])
    pack_contiguous([g for g, new in zip(grads, fresh) if new and g is not None])
    auxs = []
    for name, slot, actx in zip(plan.aux_names, plan.aux_slots, aux_ctx):
        shared_aux = shared_exec.aux_dict.get(name) if shared_exec is not None else None
        if shared_aux is not None and shared_aux.shape == slot_shapes[slot]:
            auxs.append(shared_aux)
        else:
            auxs.append(nd_zeros(slot_shapes[slot], actx, slot_types[slot]))
    return Executor(sym, ctx, plan, (args, grads, auxs, slot_shapes, slot_types), reqs, group2ctx,
                    optimized=opt)


def pack_contiguous(arrays):
    """Put freshly allocated (zero) dense host arrays of one dtype one after the other in a
    single buffer, in the given order: an optimizer can then update many small parameters with
    one pass over the buffer (see mxmod.optimizer.fused). The NDArrays stay the same objects."""
    groups = {}
    for arr in arrays:
        data = arr._data
        if type(arr) is NDArray and type(data) is np.ndarray and data.base is None and \
                arr.context.device_typeid != 2 and data.flags.c_contiguous:
            groups.setdefault((arr.context, data.dtype), []).append(arr)
    for (_, dtype), members in groups.items():
        if len(members) < 2:
            continue
        flat = np.zeros(sum(a._data.size for a in members), dtype)
        start = 0
        for arr in members:
            size = arr._data.size
            arr._data = flat[start:start + size].reshape(arr._data.shape)
            start += size


def _arg_arrays(name, shape, dtype, ctx, req, shared, is_param, shared_buffer,
                stypes=('default', 'default')):
    """The argument and gradient arrays of one argument: a parameter reuses the shared executor's
    arrays (or gets fresh ones); any other input reuses ``shared_buffer`` entries ``name`` and
    ``'grad of ' + name`` when they are large enough, as MXNet's simple_bind does. ``stypes``
    are the storage types of the argument and its gradient."""
    if stypes != ('default', 'default'):
        return _sparse_arg_arrays(shape, dtype, ctx, req, shared, stypes)
    arr, garr = shared or (None, None)
    if arr is not None and (arr.shape != shape or np.dtype(arr.dtype).name != dtype):
        arr = garr = None
    if arr is None:
        buffer = None if is_param else shared_buffer
        arr = _from_buffer(buffer, name, shape, dtype, ctx)
        if req != 'null':
            garr = _from_buffer(buffer, 'grad of ' + name, shape, dtype, ctx)
    if req == 'null':
        garr = None
    elif garr is None or garr.shape != shape:
        garr = nd_zeros(shape, ctx, dtype)
    return arr, garr


def _bind_stypes(plan, sym, stype_dict, reqs):
    """Storage types of every slot (``stype_dict`` over the variables' own) and of the
    gradients the requested grad_req computes."""
    for name, stype in (stype_dict or {}).items():
        if stype not in STYPES:
            raise ValueError('%r is not a storage type (%s) in stype_dict[%r]'
                             % (stype, ', '.join(STYPES), name))
    stypes, modes = storage.forward_stypes(plan, dict(stype_dict or {}))
    grad_slots = {slot for slot, req in zip(plan.arg_slots, reqs) if req != 'null'}
    grads, step_grads = storage.gradient_stypes(plan, stypes, plan.mark_gradients(grad_slots))
    # the executor made of this plan (and these gradients) need not decide it again
    plan.dense_storage = storage.all_dense(stypes, modes, grads, step_grads)
    return stypes, grads


def _sparse_arg_arrays(shape, dtype, ctx, req, shared, stypes):
    """Argument and gradient arrays when either is sparse (shared ones reused when they match)."""
    arr, garr = shared or (None, None)
    if arr is None or arr.shape != shape or arr.stype != stypes[0] or \
            np.dtype(arr.dtype).name != dtype:
        arr = nd_zeros(shape, ctx, dtype, stype=stypes[0])
        garr = None
    if req == 'null':
        return arr, None
    if garr is None or garr.stype != stypes[1] or garr.shape != shape:
        garr = nd_zeros(shape, ctx, dtype, stype=stypes[1])
    return arr, garr


def _var_shapes(plan, slot_shapes):
    return [slot_shapes[s] for s in plan.arg_slots + plan.aux_slots]


def _shared_arrays(shared_exec, shared_arg_names):
    if shared_exec is None:
        return {}
    names = shared_arg_names if shared_arg_names is not None else []
    args = shared_exec.arg_dict
    grads = {n: g for n, g in zip(shared_exec._plan.arg_names, shared_exec._grad_list)
             if g is not None}
    return {n: (args[n], grads.get(n)) for n in names if n in args}


def _from_buffer(shared_buffer, name, shape, dtype, ctx):
    """An array for ``name``: a view of the shared buffer's array when it is large enough."""
    if shared_buffer is None:
        return nd_zeros(shape, ctx, dtype)
    size = int(np.prod(shape))
    old = shared_buffer.get(name)
    if old is not None and old.size >= size and np.dtype(old.dtype).name == dtype and old.context == ctx:
        return from_xp(old._data.reshape(-1)[:size].reshape(shape), ctx)
    arr = nd_zeros(shape, ctx, dtype)
    shared_buffer[name] = arr
    return arr


def bind(sym, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec):
    """Bind given arrays (see Symbol.bind)."""
    with paused_gc():
        return _bind(sym, ctx, args, args_grad, grad_req, aux_states, group2ctx)


def _bind(sym, ctx, args, args_grad, grad_req, aux_states, group2ctx):
    if not isinstance(ctx, Context):
        raise TypeError('bind: ctx must be a Context (for example mx.cpu() or mx.gpu(0)), got %r '
                        '(%s)' % (ctx, type(ctx).__name__))
    opt, plan = optimized_plan(sym)
    arg_list = _as_array_list(args, plan.arg_names, 'args', required=True)
    grad_list = _as_array_list(args_grad, plan.arg_names, 'args_grad', required=False)
    aux_list = _as_array_list(aux_states, plan.aux_names, 'aux_states', required=True)
    reqs = _grad_reqs(grad_req, plan.arg_names)
    reqs = [r if g is not None else 'null' for r, g in zip(reqs, grad_list)]
    known_shapes = {n: a.shape for n, a in zip(plan.arg_names + plan.aux_names, arg_list + aux_list)}
    known_types = {n: np.dtype(a.dtype).name for n, a in zip(plan.arg_names + plan.aux_names,
                                                              arg_list + aux_list)}
    slot_shapes, slot_types, _ = _slot_info(plan, known_shapes, known_types)
    return Executor(sym, ctx, plan, (arg_list, grad_list, aux_list, slot_shapes, slot_types), reqs,
                    group2ctx, optimized=opt)


def _as_array_list(arrays, names, what, required):
    if arrays is None:
        if required and names:
            raise MXNetError('bind: %s must be given for %s' % (what, names))
        return [None] * len(names)
    if isinstance(arrays, dict):
        missing = [n for n in names if n not in arrays]
        if missing and required:
            raise MXNetError('bind: %s is missing %s' % (what, missing))
        out = [arrays.get(n) for n in names]
    else:
        out = list(arrays)
        if len(out) != len(names):
            raise MXNetError('bind: %s has %d arrays, the symbol needs %d %s'
                             % (what, len(out), len(names), names))
    for n, a in zip(names, out):
        if a is not None and not isinstance(a, NDArray):
            raise TypeError('bind: %s[%r] must be an NDArray, got %s' % (what, n, type(a).__name__))
    return out


def reshape(exe, partial_shaping, allow_up_sizing, shapes):
    """A new executor with new argument shapes sharing ``exe``'s memory (see Executor.reshape)."""
    sym, plan, opt = exe._symbol, exe._plan, exe._optimized
    new_plan = Plan(opt)
    slot_shapes, slot_types, _ = _slot_info(new_plan, shapes,
                                         {n: np.dtype(a.dtype).name for n, a in exe.arg_dict.items()})
    args, grads, auxs = [], [], []
    for name, slot, arr, garr in zip(plan.arg_names, new_plan.arg_slots, exe.arg_arrays, exe._grad_list):
        new_shape = slot_shapes[slot]
        if unknown(new_shape):
            raise MXNetError('reshape: cannot infer the new shape of %r' % name)
        if new_shape == arr.shape:
            args.append(arr)
            grads.append(garr)
            continue
        if name not in shapes and not partial_shaping:
            raise MXNetError('reshape: shape of unspecified argument %r changed from %s to %s; '
                             'pass partial_shaping=True to allow it' % (name, arr.shape, new_shape))
        args.append(_resized(arr, new_shape, allow_up_sizing, name))
        grads.append(None if garr is None else _resized(garr, new_shape, allow_up_sizing, name))
    for name, slot, arr in zip(plan.aux_names, new_plan.aux_slots, exe.aux_arrays):
        new_shape = slot_shapes[slot]
        auxs.append(arr if new_shape == arr.shape else _resized(arr, new_shape, allow_up_sizing, name))
    outputs = []
    for slot, out in zip(new_plan.head_slots, exe.outputs):
        shape = slot_shapes[slot]
        outputs.append(out if shape == out.shape else _resized(out, shape, True, 'output'))
    return Executor(sym, exe._ctx, new_plan, (args, grads, auxs, slot_shapes, slot_types),
                    exe._grad_req, exe._group2ctx, outputs=outputs, optimized=opt)


def _resized(arr, shape, allow_up_sizing, name):
    if arr.stype != 'default':
        # a sparse array holds no dense block to view: an empty one of the new shape (its
        # contents are written before use, as a data input's are)
        from ..ndarray.sparse import zeros as sparse_zeros  # pylint: disable=import-outside-toplevel
        return sparse_zeros(arr.stype, shape, ctx=arr.context, dtype=arr.dtype)
    size = int(np.prod(shape))
    if size <= arr.size:
        return from_xp(arr._data.reshape(-1)[:size].reshape(shape), arr.context)
    if not allow_up_sizing:
        raise MXNetError('reshape: new shape of %r %s is larger than the original %s; pass '
                         'allow_up_sizing=True to allocate a new array' % (name, shape, arr.shape))
    return nd_zeros(shape, arr.context, arr.dtype)
