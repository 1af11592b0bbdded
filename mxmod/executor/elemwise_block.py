"""A connected group of elementwise steps run as one step (fuse_elemwise.py finds the groups and
puts an ``ElemwiseBlock`` step in place of each).

Forward and backward are Python functions written out for the group when it first runs: straight
lines of the members' own arithmetic (the very functions their operators call: an operator's
``fn`` and gradient functions, or its ``forward`` / ``backward`` for the others), in the members'
order forward and in reverse order backward, with the gradients of values read several times
summed in the order the executor sums them. The values are therefore those of the separate steps,
bit for bit; what is saved is the executor's work per step (its loop, the gradient table, the
operator's argument handling), which is most of the cost of a small elementwise step.

With numba in use, groups whose members all have a per-element form run as compiled passes
instead (elemwise_jit.py), with the same values. Either way the code is written once per group
structure (``key``) and shared by the groups of that structure, the time steps of a layer.

A training forward keeps, for backward, the values the members' backward reads (the operators'
``backward_uses``; compiled: the outputs of the numpy functions between the passes); the group's
inputs are kept by the executor (``backward_uses = ('inputs',)``). An inference forward keeps
nothing, and a backward after it computes those values again."""
import numpy as np

from ..ops import jit
from ..ops.base import Operator, OpContext
from ..ops.broadcasting import unbroadcast
from . import elemwise_jit, elemwise_kinds as kinds


class ElemwiseBlock(Operator):
    """The steps ``members`` (Step objects of one plan, in plan order) as one operator.

    Arguments: the slots ``inputs`` the members read that no member makes. Outputs: the member
    values ``outputs`` that other steps read (or that are graph outputs)."""
    op_name = '_fused_elemwise'
    backward_uses = ('inputs',)

    def __init__(self, name, members, inputs, outputs, shapes, dtypes):  # pylint: disable=super-init-not-called
        self.attrs = {}
        self.p = None
        self.name = name
        self.members = [(kinds.kind_of(s.op), s.op, list(s.inputs), s.outputs[0])
                        for s in members]
        self.input_slots = list(inputs)
        self.output_slots = list(outputs)
        used = set(inputs) | {m[3] for m in self.members}
        self.shapes = {s: shapes[s] for s in used}
        self.dtypes = {s: dtypes[s] for s in used}
        self.contexts = [OpContext(np, None) for _ in self.members]
        self._consts = {'np': np, 'UB': unbroadcast}
        for k, member in enumerate(self.members):
            self._consts['OP%d' % k] = member[1]
            self._consts['CTX%d' % k] = self.contexts[k]
        self._forward_fn = None
        self._backward_fns = {}
        self._compiled = None
        self.key = self._structure()

    def _structure(self):
        """What the generated code depends on: the members' operators and attributes, how they
        read the inputs and each other, the outputs, the inputs' shapes and the dtype."""
        made = {m[3]: k for k, m in enumerate(self.members)}
        where = {s: i for i, s in enumerate(self.input_slots)}
        return (tuple((type(op).__name__, op.op_name, tuple(sorted(op.attrs.items())),
                       tuple(('m', made[s]) if s in made else ('x', where[s]) for s in ins))
                      for _, op, ins, _ in self.members),
                tuple(made[s] for s in self.output_slots),
                tuple(tuple(self.shapes[s]) for s in self.input_slots),
                self.dtypes[self.members[0][3]])

    def _numpy_function(self, which, write):
        """``run`` of the numpy form ``which`` ('forward' or 'backward' with its flags), the code
        shared by groups of one structure, this group's operators bound."""
        code, consts = _compiled((self.key,) + which, write, self.name)
        scope = dict(consts, __name__=__name__)     # warnings from this code are mxmod's
        scope.update(self._consts)
        exec(code, scope)  # pylint: disable=exec-used
        return scope['run']

    def describe(self):
        return 'elementwise %s (%d steps, fused)' % (self.name, len(self.members))

    def list_arguments(self):
        return ['data%d' % k for k in range(len(self.input_slots))]

    def list_outputs(self):
        return ['output%d' % k for k in range(len(self.output_slots))]

    # ---- running ------------------------------------------------------------------------
    def forward(self, octx, inputs, aux):
        if self._forward_fn is None:
            if jit.enabled():
                self._compiled = elemwise_jit.build(self)
            self._forward_fn = (self._compiled.forward if self._compiled is not None
                                else self._numpy_function(('forward',), self._write_forward))
        outs, saved = self._forward_fn(inputs)
        if octx.is_train:
            octx.saved['values'] = saved
        else:       # an inference pass keeps nothing (a backward after it computes them again)
            octx.saved.pop('values', None)
        return outs

    def backward(self, octx, out_grads, inputs, outputs, aux):
        need = tuple(octx.need_grad or [True] * len(self.input_slots))
        saved = octx.saved.get('values')
        if saved is None:
            saved = self._forward_fn(inputs)[1]
        if self._compiled is not None:
            return self._compiled.backward(out_grads, inputs, saved, need)
        fn = self._backward_fns.get(need)
        if fn is None:
            fn = self._backward_fns[need] = self._numpy_function(
                ('backward', need), lambda: self._write_backward(need))
        return fn(out_grads, inputs, saved)

    # ---- writing the functions ------------------------------------------------------------
    def _names(self):
        names = {s: 'x%d' % k for k, s in enumerate(self.input_slots)}
        for k, member in enumerate(self.members):
            names[member[3]] = 'v%d' % k
        return names

    def _kept(self):
        """Member values that some member's backward reads, in member order."""
        made = {m[3] for m in self.members}
        kept = []
        for kind, op, ins, out in self.members:
            reads = list(ins) if kind.reads_inputs(op) else []
            if kind.reads_output(op):
                reads.append(out)
            for s in reads:
                if s in made and s not in kept:
                    kept.append(s)
        return sorted(kept, key=[m[3] for m in self.members].index)

    def _write_forward(self):
        names, consts = self._names(), dict(self._consts)
        lines = ['def run(inputs):']
        if self.input_slots:
            lines.append('    %s, = inputs' % ', '.join(names[s] for s in self.input_slots))
        for k, (kind, op, ins, out) in enumerate(self.members):
            lines.append('    %s = %s' % (names[out], kind.forward_expr(
                op, k, [names[s] for s in ins], self.dtypes[out], consts)))
        lines.append('    return [%s], (%s)' % (
            ', '.join(names[s] for s in self.output_slots),
            ''.join(names[s] + ', ' for s in self._kept())))
        return lines, consts

    def _write_backward(self, need):
        names, consts = self._names(), dict(self._consts)
        wanted = self.wanted_slots(need)
        lines = ['def run(out_grads, inputs, saved):']
        if self.input_slots:
            lines.append('    %s, = inputs' % ', '.join(names[s] for s in self.input_slots))
        kept = self._kept()
        if kept:
            lines.append('    %s, = saved' % ', '.join(names[s] for s in kept))
        grads = {s: 'g_' + names[s] for s in names}
        for s in list(self.input_slots) + [m[3] for m in self.members]:
            if s not in self.output_slots:
                lines.append('    %s = None' % grads[s])
        for k, s in enumerate(self.output_slots):
            lines.append('    %s = out_grads[%d]' % (grads[s], k))
        for k in range(len(self.members) - 1, -1, -1):
            lines += self._member_backward(k, names, grads, wanted, consts)
        lines.append('    return [%s]' % ', '.join(
            grads[s] if need[i] else 'None' for i, s in enumerate(self.input_slots)))
        return lines, consts

    def _member_backward(self, k, names, grads, wanted, consts):
        kind, op, ins, out = self.members[k]
        if not any(s in wanted for s in ins):
            return []
        values = [names[s] if kind.reads_inputs(op) else 'None' for s in ins]
        value_out = names[out] if kind.reads_output(op) else 'None'
        prelude, exprs = kind.backward_exprs(op, k, values, value_out, grads[out], consts)
        body = list(prelude)
        for i, expr in exprs:
            s = ins[i]
            if s not in wanted:
                continue
            if kind.broadcasts(op) and tuple(self.shapes[s]) != tuple(self.shapes[out]):
                consts['SH%d_%d' % (k, i)] = tuple(self.shapes[s])
                expr = 'UB(%s, SH%d_%d)' % (expr, k, i)
            g = grads[s]
            body += ['c = %s' % expr, '%s = c if %s is None else %s + c' % (g, g, g)]
        if not any(line.startswith('c = ') for line in body):
            return []
        return ['    if %s is not None:' % grads[out]] + ['        ' + line for line in body]

    def wanted_slots(self, need):
        """Slots whose gradient is worth computing: needed inputs and values made from them."""
        wanted = {s for s, n in zip(self.input_slots, need) if n}
        for kind, op, ins, out in self.members:
            if any(s in wanted for s in ins):
                wanted.add(out)
        return wanted


_CODE = {}          # (structure key, which) -> (code object, constants) of the numpy form
MAX_CODE = 512


def _compiled(key, write, label):
    """The code object and constants of the function ``write`` makes, written and compiled once
    per group structure (the time steps of a layer share them)."""
    hit = _CODE.get(key)
    if hit is None:
        lines, consts = write()
        code = compile('\n'.join(lines) + '\n', '<mxmod fused elementwise %s>' % label, 'exec')
        if len(_CODE) >= MAX_CODE:
            _CODE.clear()
        hit = _CODE[key] = (code, consts)
    return hit
