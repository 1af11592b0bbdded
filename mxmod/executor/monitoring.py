"""Monitor callbacks of an executor, named as MXNet names them: ``<node>_<output>`` for forward
outputs, ``<node>_backward_output[i]`` for the gradients a backward node produces, and with
``monitor_all`` the variables by name and every operator input as ``<node>_<argument>`` (or
``<node>_input<i>`` for operators without named inputs)."""
from ..ndarray.ndarray import from_xp


def _wrap(value, ctx):
    return from_xp(value, ctx)


def report_forward(exe, step, ins, outs):
    """Call the monitor for one forward step."""
    callback = exe._monitor
    ctx = step.ctx
    if exe._monitor_all:
        generic = getattr(step.op, 'monitor_generic_inputs', False)
        for i, (name, val) in enumerate(zip(step.op.list_arguments(), ins)):
            label = '%s_input%d' % (step.name, i) if generic else '%s_%s' % (step.name, name)
            callback(label, _wrap(val, ctx))
    for name, val in zip(step.op.list_outputs()[:step.op.num_visible_outputs()], outs):
        callback('%s_%s' % (step.name, name), _wrap(val, ctx))


def report_variables(exe):
    """With ``monitor_all``, every variable (argument and auxiliary state) is reported by name."""
    for name, arr in list(zip(exe._plan.arg_names, exe.arg_arrays)) + \
            list(zip(exe._plan.aux_names, exe.aux_arrays)):
        exe._monitor(name, arr)


def report_backward(exe, step, backward_inputs, in_grads):
    """Call the monitor for one backward step (gradients of every argument, zeros where none)."""
    callback = exe._monitor
    ctx = step.ctx
    xp = exe._octx[step.index].xp
    if exe._monitor_all:
        for i, val in enumerate(v for v in backward_inputs if v is not None):
            callback('%s_backward_input%d' % (step.name, i), _wrap(val, ctx))
    names = step.op.list_arguments()
    for i, grad in enumerate(in_grads[:len(names)]):
        if grad is None:
            shape = exe._shapes[step.inputs[i]]
            grad = xp.zeros(shape or (), dtype=exe._dtypes[step.inputs[i]] or 'float32')
        label = '%s_backward_output' % step.name if len(names) == 1 else \
            '%s_backward_output%d' % (step.name, i)
        callback(label, _wrap(grad, ctx))
