"""Planned memory of a bound graph: simulate which values are alive at each step of forward and
backward (with the plan's frees, kept values and mirrored recomputation) and report the peak,
against the naive figure of one buffer per value."""


def simulate(plan, backward_steps, kept, nbytes, grad_slots):
    """Return a dict with 'naive', 'forward_peak', 'backward_peak', 'planned' bytes (peaks include
    argument, auxiliary and gradient arrays) and 'internal' (the planned peak of intermediate values
    alone, what MXNet's debug_str reports as allocated).

    Parameters
    ----------
    plan : Plan
    backward_steps : list of Step (reverse order)
    kept : set of int
        Slots forward keeps for backward.
    nbytes : list of int
        Bytes per slot.
    grad_slots : set of int
        Argument slots whose gradients are requested.
    """
    persistent = set(plan.arg_slots) | set(plan.aux_slots)
    size = lambda slots: sum(nbytes[s] for s in slots)  # noqa: E731
    grad_arrays = size(grad_slots)
    fwd_peak = _forward_peak(plan, persistent, nbytes) + grad_arrays
    bwd_peak = None
    if not any(step.mirror for step in plan.steps):
        bwd_peak = _backward_peak_kept(plan, backward_steps, kept, nbytes, grad_slots)
    if bwd_peak is None:
        bwd_peak = _backward_peak(plan, backward_steps, kept, nbytes, grad_slots)
    bwd_peak += grad_arrays
    naive = sum(nbytes) + grad_arrays + sum(nbytes[s] for s in range(len(nbytes))
                                            if s not in persistent)
    planned = max(fwd_peak, bwd_peak)
    return {'naive': naive, 'forward_peak': fwd_peak, 'backward_peak': bwd_peak,
            'planned': planned, 'internal': planned - size(persistent) - grad_arrays}


def _forward_peak(plan, persistent, nbytes):
    """Peak bytes of the values alive during forward (gradient arrays not included)."""
    live = set(persistent)
    total = sum(nbytes[s] for s in live)
    peak = total
    for step in plan.steps:
        for s in step.outputs:
            if s not in live:
                live.add(s)
                total += nbytes[s]
        peak = max(peak, total)
        for s in step.free_after:
            if s in live:
                live.remove(s)
                total -= nbytes[s]
    return peak


def _backward_peak_kept(plan, backward_steps, kept, nbytes, grad_slots):
    """Peak bytes during backward (gradient arrays not included) when every value backward reads
    was kept (no mirroring): a value is dropped after the last backward step reading it. None
    when some read value was not kept (then :func:`_backward_peak` recomputes it)."""
    last_read = {}
    for k, step in enumerate(backward_steps):
        for s in plan._backward_reads(step):
            last_read[s] = k
    always = set(plan.arg_slots) | set(plan.aux_slots) | set(plan.head_slots)
    live = set(kept) | always
    total = sum(nbytes[s] for s in live)
    drop = [[] for _ in backward_steps]
    for s in live - always:
        if backward_steps:
            drop[max(last_read.get(s, -1), 0)].append(s)
    peak, grads, grad_bytes = total, set(), 0
    for k, step in enumerate(backward_steps):
        if any(s not in live for s in plan._backward_reads(step)):
            return None
        for s in step.inputs:
            if s not in grads:
                grads.add(s)
                grad_bytes += 0 if s in grad_slots else nbytes[s]
        peak = max(peak, total + grad_bytes)
        for s in step.outputs:
            if s in grads and s not in grad_slots:
                grads.remove(s)
                grad_bytes -= nbytes[s]
        for s in drop[k]:
            live.remove(s)
            total -= nbytes[s]
    return peak


def _backward_peak(plan, backward_steps, kept, nbytes, grad_slots):
    """Peak bytes during backward (gradient arrays not included), recomputing mirrored values."""
    persistent = set(plan.arg_slots) | set(plan.aux_slots)
    size = lambda slots: sum(nbytes[s] for s in slots)  # noqa: E731
    live = set(kept) | persistent | set(plan.head_slots)
    bwd_peak = size(live)
    grads = set()
    remaining = _remaining_reads(plan, backward_steps)
    for k, step in enumerate(backward_steps):
        reads = set(plan._backward_reads(step))
        recomputed = {s for s in reads if s not in live}
        for s in recomputed:
            live.update(_recompute_chain(plan, s, live))
        grads.update(step.inputs)
        bwd_peak = max(bwd_peak, size(live) + size(grads - grad_slots))
        grads.difference_update(set(step.outputs) - grad_slots)
        later = remaining[k + 1] if k + 1 < len(remaining) else set()
        live = {s for s in live if s in persistent or s in later or s in plan.head_slots}
    return bwd_peak


def _remaining_reads(plan, backward_steps):
    """remaining[k]: slots read by backward steps k, k+1, ..."""
    out = [set() for _ in backward_steps]
    acc = set()
    for k in range(len(backward_steps) - 1, -1, -1):
        acc = acc | set(plan._backward_reads(backward_steps[k]))
        for s in list(acc):
            step = plan.producer.get(s)
            if step is not None and step.mirror:
                acc.update(step.inputs)
        out[k] = set(acc)
    return out


def _recompute_chain(plan, slot, live):
    """Slots materialised to recompute ``slot`` from live values."""
    made = set()
    stack = [slot]
    while stack:
        s = stack.pop()
        if s in live or s in made:
            continue
        made.add(s)
        step = plan.producer.get(s)
        if step is not None:
            made.update(step.outputs)
            stack.extend(step.inputs)
    return made


def executor_plan(exe):
    """The memory plan of a bound executor (see ``Executor.memory_plan``)."""
    from . import buffers  # pylint: disable=import-outside-toplevel
    from .plan import slot_bytes  # pylint: disable=import-outside-toplevel
    mem = simulate(exe._plan, exe._backward_steps, exe._kept,  # pylint: disable=protected-access
                   slot_bytes(exe._shapes, exe._dtypes), exe._grad_slots)  # pylint: disable=protected-access
    mem['shared_buffers'] = len(exe._blocks)  # pylint: disable=protected-access
    mem['shared_buffer_bytes'] = buffers.shared_bytes(exe._blocks)  # pylint: disable=protected-access
    return mem


def executor_report(exe):
    """``Executor.debug_str``: the graph, then the memory plan and the mirrored values."""
    lines = [exe._symbol.debug_str().rstrip()]  # pylint: disable=protected-access
    mem = exe.memory_plan()
    mirrored = [s.name for s in exe._plan.steps if s.mirror]  # pylint: disable=protected-access
    lines.append('Total %d MB allocated (intermediate values; with arguments and gradients: '
                 'forward peak %d MB, backward peak %d MB, one buffer per value %d MB)'
                 % (mem['internal'] >> 20, mem['forward_peak'] >> 20,
                    mem['backward_peak'] >> 20, mem['naive'] >> 20))
    lines.append('Planned memory: %d bytes (one buffer per value: %d bytes)'
                 % (mem['planned'], mem['naive']))
    lines.append('Shared forward buffers: %d, %d bytes' % (mem['shared_buffers'],
                                                        mem['shared_buffer_bytes']))
    if mirrored:
        lines.append('Mirrored (recomputed in backward): %s' % ', '.join(mirrored))
    return '\n'.join(lines) + '\n'
