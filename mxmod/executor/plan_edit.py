"""Editing an execution plan at bind time: steps taken out, steps put in (with value slots of their
own), and the result ordered again. Used by the fusion passes (fuse_products.py,
fuse_elemwise.py), which change only the executed plan: the Symbol, its JSON, its outputs and
the argument, gradient and auxiliary arrays stay as they are."""
import copy
import heapq
import os

import numpy as np

from ..context import xp_of
from . import numerics
from .plan import Step, mirror_enabled


class PlanNode(object):
    """What a plan step needs of a graph node, for a step that no graph node stands for."""
    __slots__ = ('op', 'name', 'attrs')

    def __init__(self, op, name):
        self.op, self.name, self.attrs = op, name, {}


class Consumers(object):
    """The steps reading each slot of a plan, and its head slots."""

    def __init__(self, plan):
        self.plan = plan
        self.heads = set(plan.head_slots)
        self.readers = {}
        for step in plan.steps:
            for s in step.inputs + step.aux:
                self.readers.setdefault(s, []).append(step)

    def of(self, slot):
        """The steps reading ``slot`` (a step reading it twice is listed twice)."""
        return self.readers.get(slot, ())


class PlanEdit(object):
    """A plan being rewritten: ``add`` new steps, ``remove`` replaced ones, ``new_slot`` for
    values no original step makes, then ``build``.

    Parameters
    ----------
    plan : Plan
    shapes, dtypes : list
        Per slot of ``plan``; the edit extends copies of them with its new slots.
    """

    def __init__(self, plan, shapes, dtypes):
        self.plan = plan
        self.shapes, self.dtypes = list(shapes), list(dtypes)
        self.slots = plan.slots
        self.removed = set()
        self.added = []         # (sort key, step)
        self._count = 0

    def new_slot(self, shape, dtype):
        """A fresh value slot of ``shape`` and ``dtype``."""
        slot = self.slots
        self.slots += 1
        self.shapes.append(tuple(shape))
        self.dtypes.append(dtype)
        return slot

    def remove(self, steps):
        """Take ``steps`` out of the plan (their outputs must be made by added steps)."""
        self.removed.update(id(s) for s in steps)

    def add(self, op, name, inputs, outputs, anchor):
        """Put in a step running ``op``; it runs as close to the place of the original step
        with index ``anchor`` as its inputs allow (steps added for one anchor keep their order)."""
        step = Step(PlanNode(op, name), -1)
        step.inputs, step.outputs, step.aux = list(inputs), list(outputs), []
        self._count += 1
        self.added.append(((anchor, 1, self._count), step))
        return step

    def build(self):
        """The rewritten plan, or None when its steps cannot be ordered (a cycle) or an input or
        head would not be computed."""
        nodes = [((s.index, 0, 0), copy_step(s)) for s in self.plan.steps
                 if id(s) not in self.removed] + self.added
        new = ordered_plan(self.plan, nodes)
        if new is not None:
            new.slots = self.slots
        return new


def ordered_plan(plan, nodes):
    """A copy of ``plan`` whose steps are those of ``nodes`` ((key, step) pairs: the original
    steps kept, copied, and new ones), in a topological order that runs the smallest key among
    the ready steps first, renumbered; None when a step or head reads a value no step makes, or
    on a cycle."""
    made_by = {}
    for key, step in nodes:
        for s in step.outputs:
            made_by[s] = key
    sources = set(plan.arg_slots) | set(plan.aux_slots) | set(made_by)
    if any(s not in sources for _, step in nodes for s in step.inputs + step.aux) or \
            any(s not in sources for s in plan.head_slots):
        return None
    order = _topological(nodes, made_by)
    if order is None:
        return None
    new = copy.copy(plan)
    new.steps = order
    new.producer = {}
    for index, step in enumerate(order):
        step.index = index
        for s in step.outputs:
            new.producer[s] = step
    return new


def _topological(nodes, made_by):
    """The steps of ``nodes`` ((key, step) pairs) in a topological order that takes the smallest
    key among the ready steps first; None on a cycle."""
    waiting, readers = {}, {}
    for key, step in nodes:
        deps = {made_by[s] for s in step.inputs + step.aux if s in made_by} - {key}
        waiting[key] = len(deps)
        for d in deps:
            readers.setdefault(d, []).append(key)
    by_key = dict(nodes)
    ready = [k for k, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        key = heapq.heappop(ready)
        order.append(by_key[key])
        for r in readers.get(key, ()):
            waiting[r] -= 1
            if waiting[r] == 0:
                heapq.heappush(ready, r)
    return order if len(order) == len(nodes) else None


def copy_step(step):
    """A fresh Step for the rewritten plan (the original plan's steps stay as they are)."""
    new = Step(step.node, step.index)
    new.inputs, new.outputs, new.aux = list(step.inputs), list(step.outputs), list(step.aux)
    return new


def member_ancestry(plan, members):
    """For each slot of ``plan``, a bit mask (int) of the ``members`` (a list of steps) whose
    outputs it is computed from, directly or not: bit k stands for ``members[k]``."""
    bit = {id(s): 1 << k for k, s in enumerate(members)}
    mask = {}
    for step in plan.steps:
        m = 0
        for s in step.inputs + step.aux:
            m |= mask.get(s, 0)
        m |= bit.get(id(step), 0)
        if m:
            for s in step.outputs:
                mask[s] = m
    return mask



def rewritable(ctx, arrays, group2ctx, mirror):
    """Whether a plan bound with these may be rewritten by a fusion pass: one CPU device (numpy),
    no ctx groups, no mirroring, no MXMOD_CHECK_NUMERICS, dense arrays on ``ctx`` only."""
    if group2ctx or numerics.enabled() or xp_of(ctx) is not np:
        return False
    if mirror or (mirror is None and mirror_enabled()):
        return False
    args, grads, auxs = arrays[:3]
    return all(arr is None or (arr.stype == 'default' and arr.context == ctx)
               for arr in list(args) + list(grads) + list(auxs))


def env_flag(name):
    """An on-by-default switch: ``name`` set to 0/false/no/off turns it off."""
    return os.environ.get(name, '1').strip().lower() not in ('0', 'false', 'no', 'off')
