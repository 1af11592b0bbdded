"""The executor's hot loops for the common case (one device, dense values, no monitor, no
mirroring): each step resolved at bind time into a tuple, so running a step is a few list look-ups
and one call. ``compile_hot`` resolves, once per bind, what ``forward`` and ``backward`` need
around the steps (input slots, output copies, which gradients go where)."""
from ..base import DeferredOpError, MXNetError
from ..ndarray.ndarray import defer_error
from .. import rng
from . import codegen


def share_derived(exe):
    """Give steps whose ``shares_derived`` arguments are read by several steps the executor's
    cache of derived arrays (``exe._derived``, emptied before every forward and backward)."""
    reads = {}
    for step in exe._plan.steps:
        for s in step.inputs:
            reads[s] = reads.get(s, 0) + 1
    exe._derived = {}
    for step, octx in zip(exe._plan.steps, exe._octx):
        ins = step.inputs
        if any(i < len(ins) and reads[ins[i]] > 1 for i in step.op.shares_derived):
            octx.shared = exe._derived


def compile_backward(exe):
    """Per backward step: (backward, octx, inputs, outputs, aux, read inputs?, read outputs?,
    (position, slot) of the inputs whose gradient is wanted, is loss?, slots to free after it,
    gradients finished after it, the step)."""
    program = []
    for step, done, finished in zip(exe._backward_steps, exe._last_read, exe._grads_final):
        octx = exe._octx[step.index]
        free = tuple(s for s in done if s not in exe._kept)
        wanted = tuple((i, s) for i, (s, need) in enumerate(zip(step.inputs, octx.need_grad))
                       if need)
        program.append((step.op.backward, octx, tuple(step.inputs), tuple(step.outputs),
                        tuple(step.aux), step.read_inputs, step.read_outputs, wanted,
                        step.op.is_loss, free, tuple(finished), step))
    return program


def compile_hot(exe):
    """What the hot ``forward``/``backward`` need, resolved once: ``exe._hot`` (whether they
    apply), the (slot, array) pairs loaded before a pass, the (output array, slot) pairs copied
    after it, and whether backward can skip the head-gradient bookkeeping."""
    plan = exe._plan
    exe._input_pairs = tuple(zip(plan.arg_slots, exe.arg_arrays)) + \
        tuple(zip(plan.aux_slots, exe.aux_arrays))
    exe._out_pairs = tuple(zip(exe.outputs, plan.head_slots))
    exe._octx_mode = None
    exe._hot = exe._local_outputs and not exe._has_sparse
    # heads whose gradient is never asked for (loss layers and the like): with no out_grads,
    # backward then starts from an empty gradient table, as _head_grads would return
    exe._heads_need_grad = any(
        not (node.op is not None and (node.op.is_loss or not getattr(node.op, 'needs_head_grad', True)
                                      or not node.op.propagates_grad))
        for node, _ in plan.heads)


def forward(exe, is_train):
    """``Executor.forward`` for a hot executor (its checks of keyword inputs already done)."""
    vals = exe._vals
    for slot, arr in exe._input_pairs:
        vals[slot] = arr._data
    derived = exe._derived
    if derived:
        derived.clear()
    begin_pass(exe, is_train)
    outputs = exe.outputs
    keep = is_train or exe._keep_infer
    try:
        run_forward(exe, exe._free_train if keep else exe._free_infer)
    except DeferredOpError as err:
        # reported when an output is read, as MXNet's asynchronous engine does
        exe._deferred = err
        defer_error(outputs, err)
        exe._is_train = is_train
        return outputs
    for out, slot in exe._out_pairs:
        value, target = vals[slot], out._data
        if value is not target:
            if value.shape != target.shape:
                raise MXNetError('output %s has shape %s, the executor was bound for %s'
                                 % (out, tuple(value.shape), out.shape))
            target[...] = value
    exe._is_train = is_train
    exe._values_kept = keep
    return outputs


def begin_pass(exe, is_train):
    """What every forward pass resets before its steps run: the random state a later backward
    replays, the operators' training flag, and the errors of the previous pass."""
    # backward after an inference pass reruns that pass (see Executor._values_for_backward);
    # random operators must then draw what they drew here (Dropout mode='always')
    exe._rng_before = (rng.snapshot(exe._contexts())
                       if not is_train and exe._backward_steps else None)
    if exe._octx_mode is not is_train:
        for octx in exe._octx:
            octx.is_train = is_train
        exe._octx_mode = is_train
    exe._deferred = None
    for out in exe.outputs:
        out._exc = None


def run_forward(exe, frees):
    """Forward over every step: each step's forward called on its input and auxiliary values,
    its outputs stored in their slots, then the slots of ``frees`` (one list per step) emptied.
    A program that ran often enough takes the same steps written out (``codegen``)."""
    written = codegen.forward_function(exe, frees)
    if written is not None:
        written(exe._vals)
        return
    vals = exe._vals
    for (forward_, octx, ins, auxs, outs), free in zip(exe._fwd_program, frees):
        res = forward_(octx, [vals[s] for s in ins], [vals[s] for s in auxs])
        for s, o in zip(outs, res):
            vals[s] = o
        for s in free:
            vals[s] = None


def run_backward(exe, grads):
    """Backward over the gradient steps, accumulating into ``grads`` (slot -> array) and writing
    each argument gradient as soon as it is final. A program that ran often enough takes the
    same steps written out (``codegen``)."""
    written = codegen.backward_function(exe)
    if written is not None:
        written(exe, exe._vals, grads)
        return
    vals = exe._vals
    pop = grads.pop
    get = grads.get
    for (backward, octx, ins, outs, auxs, read_in, read_out, wanted, is_loss, free, finished,
         step) in exe._bwd_program:
        if len(outs) == 1:
            ogs = [pop(outs[0], None)]
            run = is_loss or ogs[0] is not None
        else:
            ogs = [pop(s, None) for s in outs]
            missing = [g is None for g in ogs]
            run = is_loss or not all(missing)
            if run and not is_loss and any(missing):
                ogs = [g if g is not None else exe._zeros(s) for g, s in zip(ogs, outs)]
        if run:
            res = backward(octx, ogs, [vals[s] for s in ins] if read_in else step.no_inputs,
                           [vals[s] for s in outs] if read_out else step.no_outputs,
                           [vals[s] for s in auxs] if auxs else [])
            count = len(res)
            for i, s in wanted:
                g = res[i] if i < count else None
                if g is not None:
                    old = get(s)
                    grads[s] = g if old is None else old + g
        for s in free:
            vals[s] = None
        if finished:
            if exe._grad_hook is not None:
                exe._write_grads(grads, finished)
                continue
            for target in finished:
                g = get(target[0])
                if g is not None and g is target[2]._data:
                    del grads[target[0]]    # the operator wrote it in place (grad_out)
                else:
                    exe._write_grads(grads, (target,))
