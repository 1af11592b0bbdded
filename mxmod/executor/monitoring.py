"""Monitor callbacks of an executor, named and ordered as MXNet's graph executor reports them:
after each node runs, every output (hidden ones included) as ``<node>_<output>``;
``<node>_backward_output[i]`` for the gradients a backward node produces; and with
``monitor_all``, before each node runs, each input as ``<node>_<argument>`` (or
``<node>_input<i>`` for operators without named inputs), preceded by the variable's own name
when the input is a variable."""
from ..base import MXNetError
from ..ndarray.ndarray import from_xp


# Operators MXNet 1.9.1 registers without input names (no FListInputNames): its monitor reports
# their inputs as '<node>_input<i>'. Found by running every operator under the real MXNet's
# monitor (monitor_all=True); the names are the operators' canonical names here.
GENERIC_INPUT_NAMES = frozenset([
    'Activation', 'BlockGrad', 'Cast', 'Flatten', 'Reshape', 'SoftmaxActivation', '_copy',
    '_div_scalar', '_equal_scalar', '_greater_equal_scalar', '_greater_scalar', '_hypot_scalar',
    '_lesser_equal_scalar', '_lesser_scalar', '_logical_and_scalar', '_logical_or_scalar',
    '_logical_xor_scalar', '_maximum_scalar', '_minimum_scalar', '_minus_scalar', '_mod_scalar',
    '_mul_scalar', '_not_equal_scalar', '_plus_scalar', '_power_scalar', '_rdiv_scalar',
    '_rminus_scalar', '_rmod_scalar', '_rpower_scalar', '_sample_multinomial',
    '_scatter_minus_scalar', '_scatter_plus_scalar', '_shuffle', 'abs', 'amp_cast', 'arccos',
    'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'argmax', 'argmax_channel', 'argmin',
    'argsort', 'broadcast_axis', 'broadcast_to', 'cbrt', 'ceil', 'clip', 'cos', 'cosh', 'degrees',
    'erf', 'erfinv', 'exp', 'expand_dims', 'expm1', 'fix', 'floor', 'gamma', 'gammaln',
    'hard_sigmoid', 'log', 'log10', 'log1p', 'log2', 'logical_not', 'make_loss', 'max', 'mean',
    'min', 'nanprod', 'nansum', 'negative', 'norm', 'ones_like', 'prod', 'radians', 'rcbrt',
    'reciprocal', 'relu', 'rint', 'round', 'rsqrt', 'shape_array', 'sigmoid', 'sign', 'sin',
    'sinh', 'size_array', 'slice', 'slice_axis', 'smooth_l1', 'softmin', 'softsign', 'sort',
    'sqrt', 'square', 'sum', 'tan', 'tanh', 'topk', 'transpose', 'trunc', 'zeros_like',
])


def _wrap(value, ctx):
    return from_xp(value, ctx)


def report_forward(exe, step, ins, outs):
    """Call the monitor for one forward step (its inputs with monitor_all, then its outputs)."""
    callback = exe._monitor
    ctx = step.ctx
    if exe._monitor_all:
        _report_inputs(exe, step, ctx)
    for name, val in zip(step.op.list_outputs(), outs):
        callback('%s_%s' % (step.name, name), _wrap(val, ctx))


def _report_inputs(exe, step, ctx):
    plan = exe._plan
    variables = dict(zip(plan.arg_slots, plan.arg_names))
    variables.update(zip(plan.aux_slots, plan.aux_names))
    names = step.op.list_arguments() + step.op.list_auxiliary_states()
    generic = getattr(step.op, 'monitor_generic_inputs', False) or \
        step.op.op_name in GENERIC_INPUT_NAMES
    for i, (name, slot) in enumerate(zip(names, list(step.inputs) + list(step.aux))):
        value = _wrap(exe._vals[slot], ctx)
        if slot in variables:
            exe._monitor(variables[slot], value)
        exe._monitor('%s_input%d' % (step.name, i) if generic else '%s_%s' % (step.name, name),
                     value)


def monitored_backward(backward, octx, out_grads, ins, outs, aux):
    """Run one backward step for the monitor, which reports the gradient of every input: all
    of them are asked for; an operator that refuses some of them (Embedding's data, which MXNet
    never computes either) is asked again for the ones the graph needs, and the monitor sees
    zeros for the others. The flags are restored either way."""
    need = octx.need_grad
    octx.need_grad = [True] * len(need)
    try:
        return backward(octx, out_grads, ins, outs, aux)
    except MXNetError:
        octx.need_grad = need
        return backward(octx, out_grads, ins, outs, aux)
    finally:
        octx.need_grad = need


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
