"""Common subexpression elimination (MXNET_ELIMINATE_COMMON_EXPR, on by default): nodes applying
the same deterministic operator with the same attributes to the same inputs are merged."""
import os

from ..symbol.graph import Node
from ..symbol.symbol import Symbol
from ..ops.base import get_op

_NONDETERMINISTIC = ('Dropout', 'Custom')


def enabled():
    """True unless MXNET_ELIMINATE_COMMON_EXPR=0."""
    return os.environ.get('MXNET_ELIMINATE_COMMON_EXPR', '1') not in ('0', 'false', 'False')


def _mergeable(op):
    if op.op_name in _NONDETERMINISTIC or getattr(op, 'random', False):
        return False
    if getattr(op, 'subgraphs', None):
        return False    # control flow: the attributes do not describe the subgraphs
    return not op.list_auxiliary_states()


def eliminate_common_expr(sym):
    """Return a Symbol equivalent to ``sym`` with duplicate computations merged, or ``sym``
    itself when nothing merges. Heads that end up on one value get an identity copy each, so
    outputs stay distinct arrays. Nodes whose inputs are unchanged are shared with ``sym``."""
    mapping, seen = {}, {}
    for node in sym._topo():
        op = node.op
        if op is None:
            mapping[id(node)] = node
            continue
        inputs, changed = [], False
        for src, idx in node.inputs:
            new = mapping[id(src)]
            changed = changed or new is not src
            inputs.append((new, idx))
        key = None
        if _mergeable(op):
            key = (op.op_name, tuple([(id(src), idx) for src, idx in inputs]))
            earlier = seen.get(key)
            same = None if earlier is None else _same_computation(node, earlier)
            if same is not None:
                mapping[id(node)] = same
                continue
        new = Node(op, node.name, dict(node.attrs), inputs) if changed else node
        mapping[id(node)] = new
        if key is not None:
            earlier = seen.get(key)
            seen[key] = new if earlier is None else _listed(earlier) + [new]
    outs, used = [], set()
    for node, idx in sym._outputs:
        entry = (mapping[id(node)], idx)
        key = (id(entry[0]), idx)
        if key in used and entry[0].op is not None:
            copy = Node(get_op('_copy')({}), '%s_copy%d' % (entry[0].name, len(outs)), {}, [entry])
            entry = (copy, 0)
        used.add(key)
        outs.append(entry)
    if all(new == old for new, old in zip(outs, sym._outputs)):
        return sym
    opt = Symbol.__new__(Symbol)    # same variables as ``sym``: no name check needed
    opt._outputs = outs
    return opt


def _listed(earlier):
    return earlier if isinstance(earlier, list) else [earlier]


def _same_computation(node, earlier):
    """The node among ``earlier`` (a node, or a list of nodes, applying ``node``'s operator to
    the same inputs) with ``node``'s attributes, or None."""
    mine = tuple(sorted(node.attrs.items()))
    for candidate in _listed(earlier):
        if tuple(sorted(candidate.attrs.items())) == mine:
            return candidate
    return None
