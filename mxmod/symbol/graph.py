"""Graph nodes behind Symbols, attribute conventions and traversal helpers."""
from ..ops.base import get_op

# keys that MXNet stores hidden as __key__ and lists both ways
HIDDEN_KEYS = ('ctx_group', 'lr_mult', 'wd_mult', 'force_mirroring', 'mirror_stage', 'profiler_scope')


class Node(object):
    """One node: an operator application, or a variable when ``op`` is None.

    Attributes
    ----------
    op : Operator or None
    name : str
    attrs : dict of str to str
        Everything MXNet writes in the node's JSON "attrs" (operator parameters and hidden ``__x__``
        attributes).
    inputs : list of (Node, int)
        Input entries: the producing node and its output index.
    """
    __slots__ = ('op', 'name', 'attrs', 'inputs', '__weakref__')

    def __init__(self, op, name, attrs=None, inputs=None):
        self.op = op
        self.name = name
        self.attrs = attrs or {}
        self.inputs = inputs or []

    @property
    def is_variable(self):
        """True for argument/auxiliary variables."""
        return self.op is None

    def op_name(self):
        """The operator name in JSON ('null' for variables)."""
        return 'null' if self.op is None else self.op.op_name

    def num_outputs(self):
        """Total outputs, hidden ones included."""
        return 1 if self.op is None else len(self.op.list_outputs())

    def output_name(self, index):
        """Name of output ``index`` as list_outputs shows it."""
        if self.op is None:
            return self.name
        return '%s_%s' % (self.name, self.op.list_outputs()[index])

    def __repr__(self):
        return '<Node %s %s>' % (self.op_name(), self.name)


def normalize_attrs(attrs):
    """Store the HIDDEN_KEYS of a user attribute dict as ``__key__`` (as MXNet does)."""
    out = {}
    for key, val in (attrs or {}).items():
        if not isinstance(val, str):
            raise ValueError('Attributes need to be string, got %s=%r' % (key, val))
        out['__%s__' % key if key in HIDDEN_KEYS else key] = val
    return out


def listed_attrs(attrs):
    """An attribute dict as list_attr shows it: hidden keys also under their plain name."""
    out = dict(attrs)
    for key in HIDDEN_KEYS:
        hidden = '__%s__' % key
        if hidden in attrs:
            out[key] = attrs[hidden]
    return out


def make_op(op_name, attrs):
    """Instantiate operator ``op_name`` from a node's attribute dict (non-parameters filtered)."""
    cls = get_op(op_name)
    accepts_any = getattr(cls, 'accepts_any_params', False)
    params = {k: v for k, v in attrs.items()
              if k in cls.params or (accepts_any and not (k.startswith('__') and k.endswith('__')))}
    return cls(params)


def topo_order(heads):
    """Nodes reachable from ``heads`` (list of nodes) in a deterministic post-order (inputs first,
    in input order), as MXNet's DFS visits them."""
    order, seen = [], set()
    for head in heads:
        stack = [(head, 0)]
        while stack:
            node, i = stack.pop()
            if i == 0:
                if id(node) in seen:
                    continue
                seen.add(id(node))
            if i < len(node.inputs):
                stack.append((node, i + 1))
                child = node.inputs[i][0]
                if id(child) not in seen:
                    stack.append((child, 0))
            else:
                order.append(node)
    return order


def aux_variable_ids(order):
    """ids of variable nodes used as auxiliary states by some operator."""
    aux = set()
    for node in order:
        if node.op is not None:
            nargs = len(node.op.list_arguments())
            for src, _ in node.inputs[nargs:]:
                aux.add(id(src))
    return aux
