"""The execution plan: a symbol's graph flattened at bind time into forward steps with resolved
entry slots, the backward steps that the requested gradients need, value lifetimes (what is kept for
backward, what is freed, what is recomputed under mirroring) and the planned memory."""
import math
import os

import numpy as np

from ..base import MXNetError

from ..symbol.graph import aux_variable_ids
from ..symbol.infer import InferenceGraph


class Step(object):
    """One operator application: slots of its inputs, outputs and auxiliary states."""
    __slots__ = ('node', 'op', 'name', 'inputs', 'outputs', 'aux', 'ctx', 'mirror', 'needs_grad',
                 'free_after', 'index', 'read_inputs', 'read_outputs', 'no_inputs', 'no_outputs')

    def __init__(self, node, index):
        self.node = node
        self.op = node.op
        self.name = node.name
        self.index = index
        self.inputs = []
        self.outputs = []
        self.aux = []
        self.ctx = None
        self.mirror = False
        self.needs_grad = False
        self.free_after = []


def mirror_enabled():
    """MXNET_BACKWARD_DO_MIRROR=1 turns on mirroring for every cheap operator."""
    return os.environ.get('MXNET_BACKWARD_DO_MIRROR', '0') not in ('0', '', 'false', 'False')


def _wants_mirror(node, global_mirror):
    op = node.op
    if not op.mirror_cheap:
        return False
    force = node.attrs.get('__force_mirroring__')
    if force is not None:
        return force in ('True', 'true', '1')
    stage = node.attrs.get('__mirror_stage__')
    if stage is not None and stage in ('False', 'false', '0'):
        return False
    return global_mirror


class Plan(object):
    """Flattened graph of a symbol.

    Attributes
    ----------
    arg_names, aux_names : list of str
    slots : int
        Number of value slots (one per node output).
    arg_slots, aux_slots : list of int
    head_slots : list of int
    steps : list of Step
    """

    def __init__(self, sym, aux_ids=None):
        order = sym._topo()
        if aux_ids is None:     # ids of the variables some operator reads as auxiliary state
            aux_ids = aux_variable_ids(order)
        first = {}      # id(node) -> slot of its output 0
        self.arg_slots, self.aux_slots, self.arg_names, self.aux_names = [], [], [], []
        self.variables = []         # (node, slot) of every variable, in graph order
        self.steps = []
        self.producer = {}
        count = 0
        for node in order:
            op = node.op
            first[id(node)] = count
            if op is None:
                self.variables.append((node, count))
                if id(node) in aux_ids:
                    self.aux_slots.append(count)
                    self.aux_names.append(node.name)
                else:
                    self.arg_slots.append(count)
                    self.arg_names.append(node.name)
                count += 1
                continue
            step = Step(node, len(self.steps))
            nargs = len(op.list_arguments())
            ins = [first[id(s)] + i for s, i in node.inputs]
            step.inputs, step.aux = ins[:nargs], ins[nargs:]
            step.outputs = list(range(count, count + len(op.list_outputs())))
            for s in step.outputs:
                self.producer[s] = step
            count += len(step.outputs)
            self.steps.append(step)
        self.slots = count
        self._graph_steps = self.steps      # one per operator node, whatever fusion makes
        self.dense_storage = False          # simple_bind found every value and gradient dense
        self.head_slots = [first[id(n)] + i for n, i in sym._outputs]
        self.heads = list(sym._outputs)

    @property
    def slot_of(self):
        """(id(node), output index) -> slot, for every value."""
        out = {}
        for node, slot in self.variables:
            out[(id(node), 0)] = slot
        for step in self._graph_steps:
            node_id = id(step.node)
            for i, slot in enumerate(step.outputs):
                out[(node_id, i)] = slot
        return out

    def inference_graph(self):
        """The graph laid out for shape/type inference, numbered as the slots are (made anew:
        binding drops it once inferred)."""
        return InferenceGraph(self.variables,
                              [(s.node, s.inputs + s.aux, s.outputs) for s in self.steps],
                              self.slots, lambda: self.slot_of)

    def mark_gradients(self, grad_slots):
        """Mark the steps on a path from a slot needing a gradient; returns them in reverse order."""
        needs = set(grad_slots)
        for step in self.steps:
            if not needs.isdisjoint(step.inputs):
                step.needs_grad = True
                if getattr(step.op, 'propagates_grad', True):
                    # past BlockGrad (and its kind) no gradient reaches an argument: what is
                    # computed from its outputs alone needs none (nor a head gradient)
                    needs.update(step.outputs)
            else:
                step.needs_grad = False
        receives = self._receiving_gradient()
        for step in self.steps:
            step.needs_grad = step.needs_grad and step.index in receives
            if step.needs_grad and not step.op.differentiable:
                raise MXNetError('Operator %s (%s) is non-differentiable: its gradient is needed '
                                 'because an input of it requires one; set grad_req to null for '
                                 'those arguments or stop the gradient with BlockGrad'
                                 % (step.op.op_name, step.name))
        return [s for s in reversed(self.steps) if s.needs_grad]

    def _receiving_gradient(self):
        """Indices of steps that a gradient reaches from the heads (BlockGrad and other ops with
        ``propagates_grad = False`` stop it: zero gradients are not computed)."""
        reached = set(self.head_slots)
        steps = set()
        for step in reversed(self.steps):
            if reached.isdisjoint(step.outputs):
                continue
            steps.add(step.index)
            if getattr(step.op, 'propagates_grad', True):
                reached.update(step.inputs)
        return steps

    def lifetimes(self, backward_steps, mirror):
        """Decide which slots forward keeps for backward; set each step's ``free_after`` list and
        its ``mirror`` flag. Returns the set of kept slots."""
        global_mirror = mirror_enabled() if mirror is None else mirror
        for step in self.steps:
            step.mirror = step.needs_grad and _wants_mirror(step.node, global_mirror)
        self._bound_segments()
        kept = set(self.head_slots) | set(self.arg_slots) | set(self.aux_slots)
        for step in backward_steps:
            kept.update(self._backward_reads(step))
        kept = self._expand_mirrored(kept)
        last_use = {}
        for step in self.steps:
            for s in step.inputs + step.aux:
                last_use[s] = step.index
        for step in self.steps:
            step.free_after = []
        for slot, idx in last_use.items():
            if slot not in kept:
                self.steps[idx].free_after.append(slot)
        for step in self.steps:
            for s in step.outputs:
                if s not in kept and s not in last_use:
                    step.free_after.append(s)
        return kept

    def _bound_segments(self):
        """Keep every k-th value of a long run of mirrored steps (k = MXNET_BACKWARD_MIRROR_STEP,
        default about sqrt(number of steps)), so recomputation restarts from a nearby kept value
        instead of the start of the graph."""
        default = max(2, int(round(len(self.steps) ** 0.5)))
        limit = int(os.environ.get('MXNET_BACKWARD_MIRROR_STEP', default))
        depth = {}
        for step in self.steps:
            if not step.mirror:
                continue
            parents = [depth.get(self.producer[s].index, 0) for s in step.inputs
                       if s in self.producer and self.producer[s].mirror]
            d = 1 + max(parents, default=0)
            if d > limit:
                step.mirror = False
                d = 0
            depth[step.index] = d

    def _backward_reads(self, step):
        uses = step.op.backward_uses
        reads = list(step.aux)
        if 'inputs' in uses:
            reads += step.inputs
        if 'outputs' in uses:
            which = step.op.backward_outputs
            reads += (step.outputs if which is None
                      else [step.outputs[i] for i in which if i < len(step.outputs)])
        return reads

    def _expand_mirrored(self, kept):
        """Under mirroring, outputs of mirrored steps are recomputed: keep their inputs instead."""
        changed = True
        while changed:
            changed = False
            for slot in list(kept):
                step = self.producer.get(slot)
                if step is not None and step.mirror and slot not in self.head_slots:
                    kept.discard(slot)
                    for s in step.inputs + step.aux:
                        if s not in kept:
                            kept.add(s)
                            changed = True
        return kept


def slot_bytes(shapes, dtypes):
    """Bytes of each slot from inferred shapes and dtypes (unknown -> 0)."""
    out = []
    itemsize = {}
    for shape, dtype in zip(shapes, dtypes):
        if shape is None or dtype is None:
            out.append(0)
            continue
        if dtype not in itemsize:
            itemsize[dtype] = np.dtype(dtype).itemsize
        out.append(math.prod(int(d) for d in shape) * itemsize[dtype])
    return out
