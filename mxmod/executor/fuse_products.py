"""Matrix products merged at bind time (product_block.ProductBlock), wherever a graph builds them:

1. siblings: ``dot`` steps reading the same left operand x with different weights W_1 .. W_G
   (the four gate products of an LSTM step written gate by gate, as keras-mxnet's LSTMCell does)
   become one product with the weights joined (one ``stack`` or ``Concat`` step per tuple of
   weights joins them once per pass, however many time steps use it).
2. hoisting: products with the same weight whose left operands do not depend on one another
   (the input projections of every time step of an unrolled recurrent layer) become one product
   over all their rows, made where the first of them was, as soon as every operand is there.

An unrolled recurrent layer then costs one product per time step (the recurrent one) instead of
one per gate and input, forward and backward. Only plain 2-D ``dot`` steps (no transposes) of
float32 / float64 values are merged, on one CPU device without mirroring, ctx groups, sparse
arrays or MXMOD_CHECK_NUMERICS; a merge that would make the plan cyclic is not made.
MXMOD_FUSE_PRODUCTS=0 (or MXMOD_FUSE_RNN=0) turns the pass off."""
from ..ops.base import get_op
from .plan_edit import PlanEdit, env_flag, member_ancestry, rewritable
from .product_block import ProductBlock

_FLOATS = ('float32', 'float64')


def enabled():
    """MXMOD_FUSE_PRODUCTS=0 or MXMOD_FUSE_RNN=0 turns the pass off (on by default)."""
    return env_flag('MXMOD_FUSE_PRODUCTS') and env_flag('MXMOD_FUSE_RNN')


def fuse(plan, ctx, arrays, group2ctx, mirror):
    """(plan, shapes, dtypes) with the mergeable products of ``plan`` merged, or ``plan`` and the
    shapes and dtypes of ``arrays`` as they are when nothing is merged."""
    shapes, dtypes = arrays[3], arrays[4]
    if not enabled() or not rewritable(ctx, arrays, group2ctx, mirror):
        return plan, shapes, dtypes
    dots = [s for s in plan.steps if _plain_dot(s, shapes, dtypes)]
    if len(dots) < 2:
        return plan, shapes, dtypes
    products = _siblings(plan, dots)
    for hoist in (True, False):
        edit = PlanEdit(plan, shapes, dtypes)
        groups = _hoisted(plan, products, shapes) if hoist else [[p] for p in products]
        if not _apply(edit, groups):
            break
        new = edit.build()
        if new is not None:
            return new, edit.shapes, edit.dtypes
    return plan, shapes, dtypes


class _Product(object):
    """dot steps of one left operand: ``members`` (ordered by their weight slots)."""
    __slots__ = ('members', 'lhs', 'weights', 'anchor')

    def __init__(self, members):
        self.members = sorted(members, key=lambda s: s.inputs[1])
        self.lhs = members[0].inputs[0]
        self.weights = tuple(s.inputs[1] for s in self.members)
        self.anchor = min(s.index for s in members)


def _plain_dot(step, shapes, dtypes):
    """A ``dot`` of a 2-D x (B, K) and a 2-D weight (K, N) without transposes, float32/64."""
    op = step.op
    if op.op_name != 'dot' or op.p.transpose_a or op.p.transpose_b or len(step.outputs) != 1:
        return False
    if op.p.forward_stype not in (None, 'default'):
        return False
    x, w = step.inputs
    xs, ws = shapes[x], shapes[w]
    return (xs is not None and ws is not None and len(xs) == 2 and len(ws) == 2 and
            xs[1] == ws[0] and 0 not in xs and 0 not in ws and
            dtypes[x] in _FLOATS and dtypes[w] == dtypes[x])


def _siblings(plan, dots):
    """The dot steps grouped by their left operand (a group of one is a plain product); a step
    whose weight is computed from another step of its group stays apart."""
    by_lhs = {}
    for step in dots:
        by_lhs.setdefault(step.inputs[0], []).append(step)
    products = []
    for group in by_lhs.values():
        if len(group) > 1:
            inside = {id(s) for s in group}
            apart = [s for s in group if _made_from(plan, s.inputs[1], inside)]
            products.extend(_Product([s]) for s in apart)
            group = [s for s in group if s not in apart]
        if group:
            products.append(_Product(group))
    return sorted(products, key=lambda p: p.anchor)


def _made_from(plan, slot, steps, limit=64):
    """Whether ``slot`` is computed from one of ``steps`` (ids), or too far from the arguments
    to tell within ``limit`` steps (weights are arguments or a few steps from them)."""
    stack, seen = [slot], set()
    while stack:
        step = plan.producer.get(stack.pop())
        if step is None or id(step) in seen:
            continue
        if id(step) in steps or len(seen) >= limit:
            return True
        seen.add(id(step))
        stack.extend(step.inputs + step.aux)
    return False


def _hoisted(plan, products, shapes):
    """Products grouped by weights and operand shape, each group split into runs whose left
    operands (and weights) do not depend on the products of the run."""
    by_key = {}
    for p in products:
        widths = tuple(shapes[w][1] for w in p.weights)
        by_key.setdefault((p.weights, widths, shapes[p.lhs]), []).append(p)
    groups = []
    for group in by_key.values():
        if len(group) == 1:
            groups.append(group)
            continue
        members = [s for p in group for s in p.members]
        mask = member_ancestry(plan, members)
        bits, k = [], 0
        for p in group:
            bits.append(((1 << len(p.members)) - 1) << k)
            k += len(p.members)
        taken, taken_bits, rest = [], 0, []
        for p, own in zip(group, bits):
            deps = mask.get(p.lhs, 0)
            for w in p.weights:
                deps |= mask.get(w, 0)
            if deps & (taken_bits | own):
                rest.append(p)
            else:
                taken.append(p)
                taken_bits |= own
        groups.append(taken)
        groups.extend([p] for p in rest)
    return groups


def _apply(edit, groups):
    """Put the merged steps of ``groups`` (lists of products of one weight tuple) into ``edit``;
    False when there is nothing to merge."""
    joined, anchors = {}, {}
    for group in groups:
        for p in group:
            anchors[p.weights] = min(anchors.get(p.weights, p.anchor), p.anchor)
    merged = False
    for group in groups:
        first = group[0]
        if len(group) == 1 and len(first.members) == 1:
            continue
        merged = True
        weight = first.weights[0]
        if len(first.weights) > 1:
            weight = joined.get(first.weights)
            if weight is None:
                weight = joined[first.weights] = _concat(edit, first, anchors[first.weights])
        widths = [edit.shapes[w][1] for w in first.weights]
        stacked = len(widths) > 1 and len(set(widths)) == 1
        steps = [s for p in group for s in p.members]
        edit.remove(steps)
        edit.add(ProductBlock(first.members[0].name + '_fused', len(group), widths, stacked),
                 first.members[0].name + '_fused', [p.lhs for p in group] + [weight],
                 [s.outputs[0] for p in group for s in p.members],
                 min(p.anchor for p in group))
    return merged


def _concat(edit, product, anchor):
    """A step joining the weights of ``product``, placed near the original step ``anchor``: a
    ``stack`` (G, K, H) when they have one shape, else a ``Concat`` along their columns; its
    output slot."""
    shapes = [edit.shapes[w] for w in product.weights]
    dtype = edit.dtypes[product.weights[0]]
    if len(set(shapes)) == 1:
        out = edit.new_slot((len(shapes),) + shapes[0], dtype)
        op = get_op('stack')({'num_args': len(shapes), 'axis': 0})
    else:
        out = edit.new_slot((shapes[0][0], sum(s[1] for s in shapes)), dtype)
        op = get_op('Concat')({'num_args': len(shapes), 'dim': 1})
    name = product.members[0].name + '_weights'
    edit.add(op, name, list(product.weights), [out], anchor)
    return out
