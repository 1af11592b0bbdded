"""Common subexpression elimination (MXNET_ELIMINATE_COMMON_EXPR, on by default): nodes applying
the same deterministic operator with the same attributes to the same inputs are merged."""
import os

from ..symbol.graph import Node, topo_order
from ..symbol.symbol import Symbol
from ..ops.base import get_op

_NONDETERMINISTIC = ('Dropout', 'Custom')


def enabled():
    """True unless MXNET_ELIMINATE_COMMON_EXPR=0."""
    return os.environ.get('MXNET_ELIMINATE_COMMON_EXPR', '1') not in ('0', 'false', 'False')


def _mergeable(node):
    op = node.op
    if op is None or op.op_name in _NONDETERMINISTIC or getattr(op, 'random', False):
        return False
    if getattr(op, 'subgraphs', None):
        return False    # control flow: the attributes do not describe the subgraphs
    return not op.list_auxiliary_states()


def eliminate_common_expr(sym):
    """Return a Symbol equivalent to ``sym`` with duplicate computations merged. Heads that end up
    on one value get an identity copy each, so outputs stay distinct arrays."""
    mapping, seen = {}, {}
    for node in topo_order(sym._heads()):
        if node.op is None:
            mapping[id(node)] = node
            continue
        inputs = [(mapping[id(src)], idx) for src, idx in node.inputs]
        key = None
        if _mergeable(node):
            key = (node.op.op_name, tuple(sorted(node.attrs.items())),
                   tuple((id(src), idx) for src, idx in inputs))
            if key in seen:
                mapping[id(node)] = seen[key]
                continue
        new = Node(node.op, node.name, dict(node.attrs), inputs)
        mapping[id(node)] = new
        if key is not None:
            seen[key] = new
    outs, used = [], set()
    for node, idx in sym._outputs:
        entry = (mapping[id(node)], idx)
        key = (id(entry[0]), idx)
        if key in used and entry[0].op is not None:
            copy = Node(get_op('_copy')({}), '%s_copy%d' % (entry[0].name, len(outs)), {}, [entry])
            entry = (copy, 0)
        used.add(key)
        outs.append(entry)
    return Symbol(outs)
