"""The executor's hot loops for the common case (one device, no monitor, no mirroring): each step
resolved at bind time into a tuple, so running a step is a few list look-ups and one call."""


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
    need-grad flags, is loss?, slots to free after it, gradients finished after it)."""
    program = []
    for step, done, finished in zip(exe._backward_steps, exe._last_read, exe._grads_final):
        octx = exe._octx[step.index]
        free = tuple(s for s in done if s not in exe._kept)
        program.append((step.op.backward, octx, tuple(step.inputs), tuple(step.outputs),
                        tuple(step.aux), step.read_inputs, step.read_outputs,
                        tuple(octx.need_grad), step.op.is_loss, free, finished, step))
    return program


def run_forward(exe, frees):
    """Forward over every step."""
    vals = exe._vals
    for (forward, octx, ins, auxs, outs), free in zip(exe._fwd_program, frees):
        res = forward(octx, [vals[s] for s in ins], [vals[s] for s in auxs])
        for s, o in zip(outs, res):
            vals[s] = o
        for s in free:
            vals[s] = None


def run_backward(exe, grads):
    """Backward over the gradient steps, accumulating into ``grads`` (slot -> array) and writing
    each argument gradient as soon as it is final."""
    vals = exe._vals
    pop = grads.pop
    for (backward, octx, ins, outs, auxs, read_in, read_out, need, is_loss, free, finished,
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
                           [vals[s] for s in auxs])
            for s, g, wanted in zip(ins, res, need):
                if wanted and g is not None:
                    old = grads.get(s)
                    grads[s] = g if old is None else old + g
        for s in free:
            vals[s] = None
        if finished:
            exe._write_grads(grads, finished)
