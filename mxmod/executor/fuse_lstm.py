"""Unrolled LSTMCell layers run as one computation each (lstm_kernel.FusedLSTM).

At bind time the executor's plan is searched for the graph ``LSTMCell.__call__`` builds for one
time step: FullyConnected i2h on x_t and FullyConnected h2h on h_{t-1} (4H outputs each, with
bias), their sum, SliceChannel into 4 gates, sigmoid / sigmoid / tanh / sigmoid, c_t = f * c_{t-1}
+ i * g and h_t = o * tanh(c_t), every intermediate value read by that cell alone. Cells whose
states feed the next cell of the same weights form a chain (one layer over time); each chain
becomes one step of the executed plan, placed in a topological order of the rewritten graph.

Only the executed plan changes: the Symbol, its JSON, outputs, internals, argument and gradient
arrays stay as they are. Anything that does not match exactly runs as before, and so does the whole
graph with a monitor callback, the symbolic profiler, MXMOD_CHECK_NUMERICS, mirroring, several
devices, a non-CPU device or sparse storage. MXMOD_FUSE_RNN=0 turns the fusion off."""
import os

import numpy as np

from ..context import xp_of
from . import numerics
from .lstm_kernel import FusedLSTM
from .plan import Step, mirror_enabled
from .plan_edit import copy_step, ordered_plan

_GATES = ('sigmoid', 'sigmoid', 'tanh', 'sigmoid')       # LSTMCell's i, f, g, o


def enabled():
    """MXMOD_FUSE_RNN=0 turns the fusion off (on by default)."""
    return os.environ.get('MXMOD_FUSE_RNN', '1').strip().lower() not in ('0', 'false', 'no', 'off')


def fuse(plan, ctx, arrays, group2ctx, mirror):
    """``plan`` with every unrolled LSTMCell layer it holds replaced by one fused step, or
    ``plan`` itself when nothing is fused."""
    if not enabled() or group2ctx or numerics.enabled() or xp_of(ctx) is not np:
        return plan
    if mirror or (mirror is None and mirror_enabled()):
        return plan
    args, grads, auxs, shapes, dtypes = arrays
    for arr in list(args) + list(grads) + list(auxs):
        if arr is not None and (arr.stype != 'default' or arr.context != ctx):
            return plan
    graph = _Graph(plan)
    cells = [c for c in (_match_cell(graph, s, shapes, dtypes) for s in plan.steps
                         if s.op.op_name == 'SliceChannel') if c]
    chains = [c for c in _chains(graph, cells) if _begin_ok(c, shapes) and _acyclic(graph, c)]
    if not chains:
        return plan
    return _rewrite(plan, graph, chains) or plan


def unfuse(exe):
    """Set ``exe`` up again on its plan without fused steps, for a monitor callback or the
    symbolic profiler, which see every operator. A backward that follows reruns forward."""
    if exe._plan is exe._unfused_plan:
        return
    hook, names = exe._grad_hook, getattr(exe, '_slot_names', None)
    exe.__init__(exe._symbol, exe._ctx, exe._unfused_plan,
                 (exe.arg_arrays, exe._grad_list, exe.aux_arrays, exe._shapes, exe._dtypes),
                 exe._grad_req, exe._group2ctx, exe._mirror, exe.outputs, exe._optimized,
                 fuse=False)
    exe._grad_hook = hook
    exe._is_train = None
    if names is not None:
        exe._slot_names = names


class _Graph(object):
    """Consumers of every slot and the head slots of a plan."""

    def __init__(self, plan):
        self.plan = plan
        self.producer = plan.producer
        self.heads = set(plan.head_slots)
        self.consumers = {}
        for step in plan.steps:
            for s in step.inputs + step.aux:
                self.consumers.setdefault(s, []).append(step)

    def only(self, slot):
        """The single step reading ``slot`` (once), or None (several readers, a graph output)."""
        readers = self.consumers.get(slot, ())
        return readers[0] if len(readers) == 1 and slot not in self.heads else None

    def made_by(self, slot, op_name):
        step = self.producer.get(slot)
        return step if step is not None and step.op.op_name == op_name else None


class _Cell(object):
    """One matched time step: its member steps, the two FullyConnected steps and state slots."""
    __slots__ = ('members', 'fcs', 'widths', 'c_prev', 'c', 'h', 'tanh_c', 'f_mul', 'H', 'dtype')


def _match_cell(g, split, shapes, dtypes):
    """The cell around a SliceChannel step, or None."""
    op = split.op
    if op.op_name != 'SliceChannel' or op.p.num_outputs != 4 or op.p.squeeze_axis:
        return None
    z = split.inputs[0]
    shape = shapes[z]
    if shape is None or len(shape) != 2 or op.p.axis not in (1, -1) or shape[1] % 4:
        return None
    B, H = shape[0], shape[1] // 4
    dtype = dtypes[z]
    if dtype not in ('float32', 'float64'):
        return None
    add = g.made_by(z, 'elemwise_add')
    if add is None or g.only(z) is not split or add.inputs[0] == add.inputs[1]:
        return None
    fcs = [g.producer.get(s) for s in add.inputs]
    if not all(_dense(g, fc, add, shapes, dtypes, 4 * H, B, dtype) for fc in fcs):
        return None
    gates = []
    for out, kind in zip(split.outputs, _GATES):
        act = g.only(out)
        if act is None or act.op.op_name != 'Activation' or act.op.p.act_type != kind:
            return None
        gates.append(act)
    i, f, gg, o = (a.outputs[0] for a in gates)
    f_mul, ig_mul, o_mul = g.only(f), g.only(i), g.only(o)
    if not all(_is(m, 'elemwise_mul') for m in (f_mul, ig_mul, o_mul)) or g.only(gg) is not ig_mul:
        return None
    c_prev = _other(f_mul.inputs, f)
    if c_prev is None or sorted(ig_mul.inputs) != sorted([i, gg]) or f_mul is ig_mul:
        return None
    state = g.only(f_mul.outputs[0])
    if not _is(state, 'elemwise_add') or g.only(ig_mul.outputs[0]) is not state or \
            sorted(state.inputs) != sorted([f_mul.outputs[0], ig_mul.outputs[0]]):
        return None
    tc = _other(o_mul.inputs, o)
    tanh_c = g.producer.get(tc) if tc is not None else None
    c = state.outputs[0]
    if tanh_c is None or tanh_c.op.op_name != 'Activation' or tanh_c.op.p.act_type != 'tanh' or \
            tanh_c.inputs != [c] or g.only(tc) is not o_mul:
        return None
    if shapes[c_prev] != (B, H) or dtypes[c_prev] != dtype or shapes[c] != (B, H):
        return None
    cell = _Cell()
    cell.members = fcs + [add, split] + gates + [f_mul, ig_mul, state, tanh_c, o_mul]
    if any(_forced_mirror(s) for s in cell.members):
        return None
    cell.fcs, cell.c_prev, cell.c, cell.h = fcs, c_prev, c, o_mul.outputs[0]
    cell.widths = [shapes[fc.inputs[0]][1] for fc in fcs]
    cell.tanh_c, cell.f_mul, cell.H, cell.dtype = tanh_c, f_mul, H, dtype
    return cell


def _is(step, op_name):
    return step is not None and step.op.op_name == op_name


def _other(pair, slot):
    """The input of a two-input step that is not ``slot`` (None unless exactly one is)."""
    if len(pair) != 2 or (pair[0] == slot) == (pair[1] == slot):
        return None
    return pair[1] if pair[0] == slot else pair[0]


def _forced_mirror(step):
    return step.node.attrs.get('__force_mirroring__') in ('True', 'true', '1')


def _dense(g, fc, add, shapes, dtypes, width, B, dtype):
    """A FullyConnected step with bias, ``width`` outputs, a (B, K) input, read by ``add`` only."""
    if fc is None or fc.op.op_name != 'FullyConnected' or fc.op.p.no_bias or \
            fc.op.p.num_hidden != width or g.only(fc.outputs[0]) is not add:
        return False
    x, w, b = fc.inputs
    xs = shapes[x]
    return (xs is not None and len(xs) == 2 and xs[0] == B and shapes[w] == (width, xs[1]) and
            shapes[b] == (width,) and all(dtypes[s] == dtype for s in fc.inputs))


# ---- chains -----------------------------------------------------------------------------
def _roles(cell, h_prev):
    """(i2h step, h2h step) of a cell whose previous hidden state is ``h_prev``; None when it is
    not exactly one FullyConnected's input."""
    a, b = cell.fcs
    if (a.inputs[0] == h_prev) == (b.inputs[0] == h_prev):
        return None
    return (b, a) if a.inputs[0] == h_prev else (a, b)


def _chains(g, cells):
    """Lists of cells, each one layer in time order with (i2h, h2h) roles and shared weights."""
    by_cprev = {}
    for cell in cells:
        by_cprev.setdefault(cell.c_prev, []).append(cell)
    nxt, has_prev = {}, set()
    for cell in cells:
        succ = by_cprev.get(cell.c, [])
        if len(succ) != 1:
            continue
        roles = _roles(succ[0], cell.h)
        if roles is None or succ[0].H != cell.H or succ[0].dtype != cell.dtype:
            continue
        mine = _own_roles(cell, [s.inputs[1:] for s in roles])
        if mine is None:
            continue
        nxt[id(cell)] = (succ[0], roles, mine)
        has_prev.add(id(succ[0]))
    chains = []
    for cell in cells:
        if id(cell) in has_prev:
            continue
        first = nxt.get(id(cell))
        roles = first[2] if first else _single_roles(cell)
        chain = [(cell, roles)]
        while id(chain[-1][0]) in nxt:
            succ, roles, _ = nxt[id(chain[-1][0])]
            chain.append((succ, roles))
        chains.append(chain)
    return chains


def _own_roles(cell, weights):
    """(i2h, h2h) of ``cell`` given the successor's [i2h weights, h2h weights] slots."""
    a, b = cell.fcs
    for i2h, h2h in ((a, b), (b, a)):
        if [i2h.inputs[1:], h2h.inputs[1:]] == weights:
            return i2h, h2h
    return None


def _single_roles(cell):
    """Roles of a cell without predecessor or successor: LSTMCell adds i2h + h2h (for a single
    step either reading gives the same sum; h2h must read a (B, H) state)."""
    a, b = cell.fcs
    return (b, a) if cell.widths[1] != cell.H and cell.widths[0] == cell.H else (a, b)


def _begin_ok(chain, shapes):
    """The begin states have the shape (B, H) of the cell's states."""
    cell, (_, h2h) = chain[0]
    return shapes[h2h.inputs[0]] == shapes[cell.c_prev]


def _acyclic(g, chain):
    """No input of the chain is computed from one of its cells' values (say x_{t+1} = f(h_t))."""
    members = {id(s) for cell, _ in chain for s in cell.members}
    made = {o for cell, _ in chain for s in cell.members for o in s.outputs}
    inputs = set()
    for cell, (i2h, h2h) in chain:
        inputs.update(i2h.inputs)
        inputs.update(h2h.inputs[1:])
    inputs.add(chain[0][1][1].inputs[0])
    inputs.add(chain[0][0].c_prev)
    if inputs & made:
        return False
    seen, stack = set(), [s for cell, _ in chain for s in (cell.h, cell.c)]
    while stack:
        slot = stack.pop()
        for step in g.consumers.get(slot, ()):
            if id(step) in members or id(step) in seen:
                continue
            seen.add(id(step))
            for out in step.outputs:
                if out in inputs:
                    return False
                stack.append(out)
    return True


# ---- the rewritten plan ---------------------------------------------------------------------
class _FusedNode(object):
    """What a plan step needs of a graph node, for a fused layer."""
    __slots__ = ('op', 'name', 'attrs')

    def __init__(self, op, name):
        self.op, self.name, self.attrs = op, name, {}


def _fused_step(g, chain):
    """(Step without index, member ids) for one chain."""
    cells = [cell for cell, _ in chain]
    inside = set()
    for k, (cell, _) in enumerate(chain):
        inside.add(id(cell.tanh_c))
        if k + 1 < len(chain):
            succ, (_, succ_h2h) = chain[k + 1]
            inside.add(id(succ_h2h))
            inside.add(id(succ.f_mul))
    outs, slots = [], []
    for t, cell in enumerate(cells):
        for kind, slot in (('h', cell.h), ('c', cell.c)):
            readers = [s for s in g.consumers.get(slot, ()) if id(s) not in inside]
            if readers or slot in g.heads:
                outs.append((kind, t))
                slots.append(slot)
    first_i2h, first_h2h = chain[0][1]
    h0 = first_h2h.inputs[0]
    begin_zero = g.made_by(h0, '_zeros') is not None
    name = first_i2h.name[:-3] + 'layer' if first_i2h.name.endswith('i2h') else first_i2h.name
    op = FusedLSTM(name, len(chain), cells[0].H, outs, begin_zero)
    step = Step(_FusedNode(op, name), -1)
    step.inputs = [i2h.inputs[0] for _, (i2h, _) in chain] + [h0, cells[0].c_prev] + \
        list(first_i2h.inputs[1:]) + list(first_h2h.inputs[1:])
    step.outputs = slots
    return step, {id(s) for cell in cells for s in cell.members}


def _rewrite(plan, g, chains):
    """A copy of ``plan`` whose steps are the unmatched steps and one step per chain, in a
    topological order close to the original; None when the steps cannot be ordered."""
    member_of, fused = {}, []
    for chain in chains:
        step, members = _fused_step(g, chain)
        first = min(s.index for cell, _ in chain for s in cell.members)
        fused.append((first, step))
        for m in members:
            member_of[m] = step
    nodes = [(s.index, copy_step(s)) for s in plan.steps if id(s) not in member_of] + fused
    return ordered_plan(plan, nodes)


