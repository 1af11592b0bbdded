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
    try:
        run_forward(exe, exe._free_train if is_train else exe._free_infer)
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
    """Forward over every step (the written-out loop of ``codegen``): each step's forward
    called on its input and auxiliary values, its outputs stored in their slots, then the slots
    of ``frees`` (one list per step) emptied."""
    codegen.forward_function(exe, frees)(exe._vals)


def run_backward(exe, grads):
    """Backward over the gradient steps (the written-out loop of ``codegen``), accumulating into
    ``grads`` (slot -> array) and writing each argument gradient as soon as it is final: a step
    runs when it has a head gradient (a loss step always; missing ones of a step with several
    outputs are zeros), the gradients of the inputs it is asked for are added up, its freed
    slots are emptied, and the gradients finished after it are written (or left in place when
    the operator wrote them into the gradient array)."""
    codegen.backward_function(exe)(exe, exe._vals, grads)
