"""Groups of elementwise steps run as one step each (elemwise_block.ElemwiseBlock), wherever a
graph builds them: the gate arithmetic of one time step of a recurrent layer written with
primitive operators (keras-mxnet's LSTM and GRU cells: some 25 small steps per time step) becomes
one step forward and one backward.

Which steps may be grouped (elemwise_kinds.kind_of): elementwise arithmetic, scalar arithmetic,
unary math, clip, where, hard_sigmoid and Activation, with float32 / float64 values of one
shape. Two such steps are joined when one reads the other's value and both get the same level in
a labelling of the plan where a step's level is at least that of each step it reads, plus one
when that step is not a joinable neighbour. Every path between two steps of a group then runs
through steps of the group only (a path leaving it would raise the level on the way), so the
rewritten plan has no cycle (_levels says how the levels are chosen).

A group is fused when its values have at most MAX_ELEMENTS elements (on larger ones the work,
not the executor, takes the time, and the steps' shared buffers matter more) and the graph holds
MIN_REPEATS groups computing the same (the time steps of an unrolled layer: one compiled kernel
serves them all; a one-off group would pay numba's compilation for one use, and the graph keeps
the separate steps its memory plan and monitor show).

On one CPU device without mirroring, ctx groups, sparse arrays or MXMOD_CHECK_NUMERICS.
MXMOD_FUSE_ELEMWISE=0 (or MXMOD_FUSE_RNN=0) turns the pass off."""
from .elemwise_block import ElemwiseBlock
from .elemwise_kinds import kind_of
from .plan_edit import Consumers, PlanEdit, env_flag, rewritable

_FLOATS = ('float32', 'float64')
MIN_STEPS = 2           # a group of one step is left alone
MAX_ELEMENTS = 1 << 16  # larger values: the separate steps' own cost is small beside the work
MIN_REPEATS = 2         # a group is fused when the graph computes the same at least this often


def enabled():
    """MXMOD_FUSE_ELEMWISE=0 or MXMOD_FUSE_RNN=0 turns the pass off (on by default)."""
    return env_flag('MXMOD_FUSE_ELEMWISE') and env_flag('MXMOD_FUSE_RNN')


def fuse(plan, ctx, arrays, group2ctx, mirror, shapes, dtypes):
    """(plan, shapes, dtypes) with the groups of ``plan``'s elementwise steps fused, or the
    arguments as they are when nothing is fused."""
    if not enabled() or not rewritable(ctx, arrays, group2ctx, mirror):
        return plan, shapes, dtypes
    groups = _groups(plan, shapes, dtypes)
    if not groups:
        return plan, shapes, dtypes
    edit = PlanEdit(plan, shapes, dtypes)
    uses = Consumers(plan)
    for members in groups:
        _replace(edit, uses, members)
    new = edit.build()
    if new is None:
        return plan, shapes, dtypes
    return new, edit.shapes, edit.dtypes


def _candidate(step, shapes, dtypes):
    """Whether ``step`` may join a group: a fusable kind, one output of known shape, floats."""
    if len(step.outputs) != 1 or step.aux or kind_of(step.op) is None:
        return False
    if step.node.attrs.get('__force_mirroring__') in ('True', 'true', '1'):
        return False
    out = step.outputs[0]
    shape, dtype = shapes[out], dtypes[out]
    if shape is None or 0 in shape or dtype not in _FLOATS:
        return False
    return all(dtypes[s] == dtype for i, s in enumerate(step.inputs)
               if not (step.op.op_name == 'where' and i == 0))


def _groups(plan, shapes, dtypes):
    """Lists of steps (in plan order) to fuse, each of at least MIN_STEPS steps."""
    steps = plan.steps
    ok = {id(s) for s in steps if _candidate(s, shapes, dtypes)}
    producer = plan.producer

    def joinable(p, s, slot):
        return id(p) in ok and id(s) in ok and shapes[slot] == shapes[s.outputs[0]] and \
            shapes[p.outputs[0]] == shapes[s.outputs[0]]

    level = _levels(plan, joinable)
    parent = {id(s): id(s) for s in steps if id(s) in ok}
    for s in steps:
        for slot in s.inputs:
            p = producer.get(slot)
            if p is not None and joinable(p, s, slot) and level[id(p)] == level[id(s)]:
                parent[_root(parent, id(p))] = _root(parent, id(s))
    members = {}
    for s in steps:
        if id(s) in parent:
            members.setdefault(_root(parent, id(s)), []).append(s)
    groups = [m for m in members.values() if len(m) >= MIN_STEPS and
              _elements(shapes[m[0].outputs[0]]) <= MAX_ELEMENTS]
    counts = {}
    keys = [_signature(m, shapes) for m in groups]
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return [m for m, key in zip(groups, keys) if counts[key] >= MIN_REPEATS]


def _levels(plan, joinable):
    """A level per step (by id): at least each producer's, one more over a step that is not a
    joinable neighbour. A step takes the level of a joinable producer when it can (a value made
    from a group's values joins that group: a masked output of a time step stays with the time
    step), else the latest its readers allow (a bias added to a product made long before joins
    the group reading the sum)."""
    steps, producer = plan.steps, plan.producer
    weight = {}
    readers = {}
    for s in steps:
        for slot in s.inputs + s.aux:
            p = producer.get(slot)
            if p is not None:
                weight[(id(p), id(s), slot)] = 0 if joinable(p, s, slot) else 1
                readers.setdefault(id(p), []).append((s, slot))
    latest = {}
    for s in steps:                                 # as soon as possible first...
        latest[id(s)] = max([latest[id(producer[t])] + weight[(id(producer[t]), id(s), t)]
                             for t in s.inputs + s.aux if t in producer] or [0])
    for p in reversed(steps):                       # ...then as late as possible
        after = [latest[id(s)] - weight[(id(p), id(s), slot)] for s, slot in readers.get(id(p), ())]
        if after:
            latest[id(p)] = min(after)
    level = {}
    for s in steps:
        ins = [(producer[t], t) for t in s.inputs + s.aux if t in producer]
        low = max([level[id(p)] + weight[(id(p), id(s), t)] for p, t in ins] or [0])
        joins = any(weight[(id(p), id(s), t)] == 0 and level[id(p)] == low for p, t in ins)
        level[id(s)] = low if joins else max(low, latest[id(s)])
    return level


def _elements(shape):
    total = 1
    for d in shape:
        total *= d
    return total


def _signature(members, shapes):
    """What a group computes, whatever the order of its steps in the plan and the values it
    reads: the multiset of its members' structures, a member's structure being its operator,
    attributes and its inputs' structures (an outside input by its shape). Only decides what is
    fused: two groups of one signature that differed would each still run their own code."""
    made = {}
    for m in members:
        made[m.outputs[0]] = hash((m.op.op_name, tuple(sorted(m.op.attrs.items())),
                                   tuple(made.get(s, ('x', shapes[s])) for s in m.inputs)))
    return tuple(sorted(made.values()))


def _root(parent, key):
    while parent[key] != key:
        parent[key] = parent[parent[key]]
        key = parent[key]
    return key


def _replace(edit, uses, members):
    """Put one ElemwiseBlock step in place of ``members``."""
    made = {m.outputs[0] for m in members}
    inside = {id(m) for m in members}
    inputs = []
    for m in members:
        for s in m.inputs:
            if s not in made and s not in inputs:
                inputs.append(s)
    outputs = [m.outputs[0] for m in members
               if m.outputs[0] in uses.heads or
               any(id(r) not in inside for r in uses.of(m.outputs[0]))]
    name = members[0].name + '_group'
    op = ElemwiseBlock(name, members, inputs, outputs, edit.shapes, edit.dtypes)
    edit.remove(members)
    edit.add(op, name, inputs, outputs, min(m.index for m in members))
