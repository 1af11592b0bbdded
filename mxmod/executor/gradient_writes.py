"""When and where an executor writes argument gradients: each one right after the last backward
step contributing to it (its temporary is dropped then), and straight into the gradient array
(``octx.grad_out``) when a single step is its only contributor and grad_req is 'write'."""
import numpy as np


def plan(exe):
    """Set ``exe._grads_final`` (per backward step, the (slot, req, array) targets finished after
    it), ``exe._grads_untouched`` (targets no step reaches) and the steps' ``grad_out`` arrays."""
    targets = {slot: (slot, req, g) for slot, req, g in
               zip(exe._plan.arg_slots, exe._grad_req, exe._grad_list)
               if req != 'null' and g is not None}
    last, contributions = {}, {}
    for k, step in enumerate(exe._backward_steps):
        for i, s in enumerate(step.inputs):
            if s in targets:
                last[s] = k
                contributions.setdefault(s, []).append((step, i))
    exe._grads_final = [[] for _ in exe._backward_steps]
    for slot, k in last.items():
        exe._grads_final[k].append(targets[slot])
    exe._grads_untouched = [t for s, t in targets.items() if s not in last]
    if exe._single_ctx:
        _direct(exe, targets, contributions)


def _direct(exe, targets, contributions):
    for slot, uses in contributions.items():
        _, req, garr = targets[slot]
        if req != 'write' or len(uses) != 1 or garr.stype != 'default':
            continue
        if garr.shape != exe._shapes[slot] or np.dtype(garr.dtype).name != exe._dtypes[slot]:
            continue
        step, i = uses[0]
        octx = exe._octx[step.index]
        if octx.grad_out is None:
            octx.grad_out = [None] * len(step.inputs)
        octx.grad_out[i] = garr._data


def release_order(exe):
    """Argument names in the order backward finishes their gradients, and the names a later
    backward step (or a recomputation under mirroring) still reads (see
    ``Executor.gradient_release_order``)."""
    names = dict(zip(exe._plan.arg_slots, exe._plan.arg_names))
    order, final_at = [], {}
    for k, finished in enumerate(exe._grads_final):
        for slot, _, _ in finished:
            order.append(names[slot])
            final_at[slot] = k
    order += [names[slot] for slot, _, _ in exe._grads_untouched]
    late = set()
    for k, step in enumerate(exe._backward_steps):
        for slot in exe._plan._backward_reads(step):
            if slot in final_at and final_at[slot] < k:
                late.add(names[slot])
    for step in exe._plan.steps:
        if step.mirror:
            late.update(names[s] for s in step.inputs + step.aux if s in names)
    return order, late


def install_early_reports(exe, hook):
    """Give the steps that write a final gradient straight into its array (``grad_out``) an
    ``octx.grad_ready(i)`` that reports it to ``hook`` at once (once per pass: the names are
    kept in ``exe._reported`` and left out of the report after the step); None removes them."""
    exe._reported = set()
    for k, step in enumerate(exe._backward_steps):
        octx = exe._octx[step.index]
        octx.grad_ready = None
        if hook is None or not octx.grad_out:
            continue
        final = {slot for slot, _, _ in exe._grads_final[k]}
        names = {i: exe._slot_names[s] for i, s in enumerate(step.inputs)
                 if i < len(octx.grad_out) and octx.grad_out[i] is not None and s in final}
        if names:
            octx.grad_ready = _reporter(exe, hook, names)


def _reporter(exe, hook, names):
    def report(position):
        name = names.get(position)
        if name is not None and name not in exe._reported:
            exe._reported.add(name)
            hook([name])
    return report
