"""Storage types in a bound executor: the storage type of every value and gradient, decided at
bind time, and the steps that run sparse (or by dense fallback) because of them.

Forward storage types come from each operator's storage rule run over the plan's steps (as
:func:`mxmod.symbol.infer.infer_storage_types` runs them over a symbol); gradient storage
types from each operator's backward storage rule, run over the gradient steps in reverse (several
contributions to one gradient add up to row_sparse only when all of them are row_sparse, as
MXNet's gradient aggregation does). Only steps touching a sparse value get the dispatching
forward/backward; every other step keeps the operator's own functions, so dense graphs run
exactly as before."""
from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from ..ndarray.sparse_ndarray import wrap_storage
from ..ops.sparse_registry import (DENSE, plan_backward, plan_forward, rule_of, run_backward,
                                  run_forward)
from ..sparse_storage import empty_storage, is_sparse, stype_of, to_dense, to_stype
from ..symbol.infer import variable_stype

__all__ = ['slot_stypes', 'gradient_stypes', 'install', 'empty_like_slot', 'write_grad']


def slot_stypes(plan, known):
    """Storage type of every slot of ``plan`` (``known``: variable name -> stype)."""
    return forward_stypes(plan, known)[0]


def forward_stypes(plan, known):
    """``(stype of every slot, dispatch mode of every step)`` of ``plan``: MXNet's storage-type
    inference, forward, from the variables' storage types (``known``: variable name -> stype,
    else the variable's own, else 'default')."""
    stypes = ['default'] * plan.slots
    for node, slot in plan.variables:
        stypes[slot] = variable_stype(node, known)
    sparse = _sparse_anywhere(stypes)       # some value so far is not dense
    modes = [DENSE] * len(plan.steps)
    for k, step in enumerate(plan.steps):
        rule = rule_of(step.op)
        if rule is None and not sparse:
            continue        # dense inputs, no sparse support: dense outputs (plan_forward's)
        ins = [stypes[s] for s in step.inputs + step.aux]
        if rule is None and _dense(ins):
            continue
        try:
            outs, modes[k] = plan_forward(step.op, ins)
        except MXNetError as err:
            raise MXNetError('Error in operator %s (%s) with input storage types %s: %s'
                             % (step.name, step.op.op_name, ins, err)) from None
        for slot, stype in zip(step.outputs, outs):
            stypes[slot] = stype
            sparse = sparse or stype != 'default'
    return stypes, modes


def _dense(stypes):
    return all(s == 'default' for s in stypes)


def _merge(old, new):
    if old is None:
        return new
    return old if old == new and old == 'row_sparse' else 'default'


def gradient_stypes(plan, stypes, backward_steps):
    """Storage type of the summed gradient of every slot the backward steps reach, and per
    backward step (index) its ``(out-gradient stypes, gradient stypes, mode)`` (steps that
    run dense on dense values only may be left out)."""
    grads = {slot: stypes[slot] for slot in plan.head_slots}
    sparse = _sparse_anywhere(stypes)      # some value or gradient is not dense
    dense = set()   # slots a dense gradient reaches: their sum is dense, whatever else comes
    step_grads = {}
    for step in backward_steps:
        count = len(step.op.list_arguments())
        rule = rule_of(step.op)
        if rule is None and not sparse:
            dense.update(step.inputs[:count])      # plan_backward's dense gradients
            continue
        ins = [stypes[s] for s in step.inputs + step.aux]
        outs = [stypes[s] for s in step.outputs]
        ograds = ['default' if s in dense else grads.get(s, 'default') for s in step.outputs]
        if rule is None and _dense(ins) and _dense(outs) and _dense(ograds):
            produced, mode = ['default'] * count, DENSE
        else:
            produced, mode = plan_backward(step.op, ins, outs, ograds)
        step_grads[step.index] = (ograds, produced, mode)
        for slot, stype in zip(step.inputs, produced):
            if slot not in dense:
                grads[slot] = merged = _merge(grads.get(slot), stype)
                sparse = sparse or merged != 'default'
    grads.update(dict.fromkeys(dense, 'default'))
    return grads, step_grads


_DEFAULT = frozenset(['default'])


def _sparse_anywhere(stypes):
    return any(s != 'default' for s in stypes)


def all_dense(stypes, modes, grads, step_grads):
    """True when every value and gradient is dense and every step runs its dense code (the
    results of :func:`forward_stypes` and :func:`gradient_stypes`)."""
    if not _DEFAULT.issuperset(stypes) or not _DEFAULT.issuperset(grads.values()) or \
            modes.count(DENSE) != len(modes):
        return False
    return all(mode == DENSE and _DEFAULT.issuperset(produced)
               for _, produced, mode in step_grads.values())


def install(exe, known):
    """Decide the storage types of ``exe``'s values and gradients and give the steps that touch
    sparse values the dispatching functions. Returns True when the executor has any."""
    plan = exe._plan
    exe._sparse_fwd, exe._sparse_bwd = {}, {}
    if plan.dense_storage and not _sparse_anywhere(known.values()):
        # simple_bind found everything dense (fusing steps keeps it so)
        exe._stypes, exe._grad_stypes = ['default'] * plan.slots, {}
        return False
    stypes, modes = forward_stypes(plan, known)
    grads, step_grads = gradient_stypes(plan, stypes, exe._backward_steps)
    exe._stypes, exe._grad_stypes = stypes, grads
    for step, mode in zip(plan.steps, modes):
        if mode != DENSE or _sparse_anywhere(stypes[s] for s in step.outputs):
            exe._sparse_fwd[step.index] = _forward_fn(step.op)
    for step in exe._backward_steps:
        if step.index not in step_grads:
            continue        # dense throughout
        ograds, produced, mode = step_grads[step.index]
        touched = [stypes[s] for s in step.inputs + step.aux + step.outputs] + ograds + produced
        if mode != DENSE or _sparse_anywhere(touched):
            exe._sparse_bwd[step.index] = _backward_fn(step.op)
    return bool(exe._sparse_fwd or exe._sparse_bwd or _sparse_anywhere(stypes))


def _forward_fn(op):
    def forward(octx, inputs, aux):
        return run_forward(op, octx, inputs, aux)
    return forward


def _backward_fn(op):
    def backward(octx, out_grads, inputs, outputs, aux):
        return run_backward(op, octx, out_grads, inputs, outputs, aux)
    return backward


def patch_programs(exe):
    """Swap the dispatching functions into the executor's compiled forward/backward programs."""
    if exe._sparse_fwd:
        program = list(exe._fwd_program)
        for step in exe._plan.steps:
            fn = exe._sparse_fwd.get(step.index)
            if fn is not None:
                program[step.index] = (fn,) + tuple(program[step.index][1:])
        exe._fwd_program = program
    if exe._sparse_bwd:
        program = list(exe._bwd_program)
        for k, entry in enumerate(program):
            fn = exe._sparse_bwd.get(entry[-1].index)
            if fn is not None:
                program[k] = (fn,) + tuple(entry[1:])
        exe._bwd_program = program


def empty_like_slot(exe, slot, ctx):
    """A zero sparse NDArray for a sparse head slot."""
    with_xp = ctx.xp
    return wrap_storage(empty_storage(with_xp, exe._stypes[slot], exe._shapes[slot] or (),
                                      exe._dtypes[slot] or 'float32'), ctx)


def head_grad(exe, slot, data):
    """A head gradient in the storage type of its output (MXNet copies it into an array of the
    output's storage type)."""
    return to_stype(data, exe._stypes[slot])


def write_grad(garr, req, g):
    """Write gradient ``g`` (array or storage, None = zero) into ``garr`` per grad_req, keeping
    ``garr``'s storage type."""
    if garr.stype == 'default':
        dense = None if g is None else to_dense(g)
        if req == 'add':
            if dense is not None:
                garr._data += dense.reshape(garr.shape)
        elif dense is None:
            garr._data[...] = 0
        else:
            garr._data[...] = dense.reshape(garr.shape)
        return
    if g is None:
        if req != 'add':
            garr._data.assign(empty_storage(garr._data.xp, garr.stype, garr.shape, garr.dtype))
        return
    if req == 'add':
        g = to_stype(g, 'default') if garr.stype == 'csr' else g
        g = garr._data + g
    garr._set(g if is_sparse(g) or stype_of(g) == 'default' else to_dense(g))


def copy_output(out, value):
    """Copy a forward result into the executor's output NDArray ``out``."""
    if isinstance(out, NDArray) and out.stype == 'default' and not is_sparse(value):
        out._data[...] = value
    else:
        out._set(value)
