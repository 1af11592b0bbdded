"""Shape and type inference over a symbol's graph: every operator's infer_shape / infer_type
applied until nothing more is learnt (MXNet 1.x's partial shapes: 0 is an unknown dimension)."""
import numpy as np

from ..base import MXNetError
from ..ops.base import attr_str, merge_shape
from ..util import is_np_shape

_MAX_PASSES = 8


def _entry_key(node, idx):
    return (id(node), idx)


def _parse_shape_attr(text):
    from ..ops.base import _parse_tuple  # pylint: disable=import-outside-toplevel
    shape = _parse_tuple(text)
    if shape is None:
        return None
    return tuple(0 if d is None or d < 0 else d for d in shape)


def _to_internal(shape):
    if shape is None:
        return None
    shape = tuple(int(d) for d in shape)
    if not shape and not is_np_shape():
        return None
    return tuple(0 if d < 0 else d for d in shape)


def to_user(shape):
    """Internal partial shape -> what infer_shape_partial reports (legacy or np_shape)."""
    if is_np_shape():
        return None if shape is None else tuple(-1 if d == 0 else d for d in shape)
    return () if shape is None else shape


def infer_shapes(sym, known, partial, heads=None):
    """Infer shapes of every entry. ``known`` maps variable names to shapes; ``heads`` (a
    subgraph's, optional) gives known shapes of the outputs, one per output (None: unknown).

    Returns a dict entry-key -> shape (None for unknown)."""
    graph = InferenceGraph.of_symbol(sym)
    table = seed_shapes(graph, known)
    for (node, idx), shape in zip(sym._outputs, heads or ()):
        if shape is not None:
            index = graph.slot_of[_entry_key(node, idx)]
            table[index] = merge_shape(node.name, 'its output', table[index], _to_internal(shape))
    solve(graph, table, 'shape')
    return graph.as_dict(table, variables=True)


def seed_shapes(graph, known):
    """The table inference starts from: the shapes of the variables, from ``known`` (variable
    name -> shape) or their ``__shape__`` attribute; None elsewhere."""
    table = [None] * graph.size
    for node, index in graph.variables:
        if node.name in known:
            table[index] = _to_internal(known[node.name])
        elif '__shape__' in node.attrs:
            table[index] = _variable_shape_attr(node)
    return table


def _variable_shape_attr(node):
    try:
        shape = _parse_shape_attr(node.attrs['__shape__'])
    except Exception:  # pylint: disable=broad-except
        shape = False
    if shape is not None and (not isinstance(shape, tuple) or not all(
            isinstance(d, int) for d in shape)):
        raise MXNetError('variable %r: its shape attribute %r is not a shape (a '
                         'tuple of ints such as (2, 3))'
                         % (node.name, node.attrs['__shape__']))
    return shape


def _merge_shape(node, what, old, new):
    new = tuple(int(d) for d in new)
    try:
        return merge_shape('%s (%s)' % (node.name, node.op.op_name), what, old, new)
    except MXNetError as err:
        raise MXNetError('Error in operator %s: shape inconsistent for %s: provided %s, '
                         'inferred %s (%s)' % (node.name, what, old, new, err)) from None


_DTYPE_NAMES = {}


def _dtype_name(value):
    """``np.dtype(value).name``, remembered for hashable values (inference asks it often)."""
    try:
        return _DTYPE_NAMES[value]
    except (KeyError, TypeError):
        name = np.dtype(value).name
        try:
            _DTYPE_NAMES[value] = name
        except TypeError:
            pass
        return name


def _merge_type(node, what, old, new):
    new = _dtype_name(new)
    if old is not None and old != new:
        raise MXNetError('Error in operator %s (%s): type inconsistent for %s: it is %s, the '
                         'operator needs %s (MXNet does not cast: cast it with astype or give '
                         'the inputs one dtype)' % (node.name, node.op.op_name, what, old, new))
    return new


def _shape_complete(shape):
    return shape is not None and 0 not in shape


def _type_complete(dtype):
    return dtype is not None


def _as_shape(value):
    return tuple(map(int, value))


# kind -> (operator method, merge, "fully known" test, the type of the values the table holds,
# what merging a value into an unknown entry gives)
_KINDS = {'shape': ('infer_shape', _merge_shape, _shape_complete, tuple, _as_shape),
          'type': ('infer_type', _merge_type, _type_complete, str, _dtype_name)}


class InferenceGraph(object):
    """A graph laid out for inference: every entry (node output) is an index into a flat table,
    every operator node a record of the indices it reads and writes.

    Parameters
    ----------
    variables : list of (Node, int)
        The variable nodes and their entries' indices.
    operators : iterable of (Node, list of int, list of int)
        The operator nodes in topological order with the indices of their inputs (in
        ``node.inputs`` order) and of their outputs.
    size : int
        The number of entries.
    slot_of : callable
        Returns the dict (id(node), output index) -> index (for :meth:`as_dict`).
    """

    def __init__(self, variables, operators, size, slot_of):
        self.variables = variables
        self.size = size
        self._slot_of = slot_of
        # (node, op, input indices, output indices, both); a node has as many inputs as its
        # operator names (graphs are built and loaded so), so names are looked up when needed
        self.records = []
        self.users = [[] for _ in range(size)]     # records reading or writing an entry
        for record, (node, ins, outs) in enumerate(operators):
            touched = ins + outs
            self.records.append((node, node.op, ins, outs, touched))
            for index in touched:
                users = self.users[index]
                if not users or users[-1] != record:     # an entry read twice: listed once
                    users.append(record)

    @classmethod
    def of_symbol(cls, sym):
        """The graph of ``sym``, its entries numbered in topological order."""
        slot_of, variables, operators = {}, [], []
        for node in sym._topo():
            if node.op is None:
                slot_of[(id(node), 0)] = len(slot_of)
                variables.append((node, len(slot_of) - 1))
                continue
            ins = [slot_of[(id(src), idx)] for src, idx in node.inputs]
            base = len(slot_of)
            outs = list(range(base, base + len(node.op.list_outputs())))
            for i in outs:
                slot_of[(id(node), i - base)] = i
            operators.append((node, ins, outs))
        return cls(variables, operators, len(slot_of), lambda: slot_of)

    @property
    def slot_of(self):
        """(id(node), output index) -> index, for every entry."""
        return self._slot_of()

    def as_dict(self, table, variables):
        """The table as an entry-key dict: the entries that are known, and every variable's
        when ``variables``."""
        out = {}
        for key, index in self._slot_of().items():
            value = table[index]
            if value is not None:
                out[key] = value
        if variables:
            for node, index in self.variables:
                out[(id(node), 0)] = table[index]
        return out


def solve(graph, table, kind, changed_entries=None):
    """Complete ``table`` (a list indexed as ``graph`` numbers the entries; None = unknown) with
    every operator's ``infer_<kind>`` (``kind`` is 'shape' or 'type'); returns ``table``.
    ``changed_entries``: the table is a solved one in which only these entries were set since,
    so only the operators touching them start pending.

    The result is that of sweeping all operators forwards then backwards until a pair of sweeps
    learns nothing (at most ``_MAX_PASSES`` pairs), as MXNet 1.x does, but a sweep visits only
    the operators that can still learn something: those never visited, or with an entry changed
    since their last visit (by themselves included) and an entry still not fully known. A graph
    whose shapes follow from its inputs is done in one forward sweep; the backward sweep visits
    only what is still underdetermined (e.g. weights inferred from a consumer)."""
    how = _KINDS[kind] + (kind,)
    partial_shapes = kind == 'shape'
    records, users = graph.records, graph.users
    count = len(records)
    if changed_entries is None:
        pending = [True] * count
    else:
        pending = [False] * count
        for index in changed_entries:
            for user in users[index]:
                pending[user] = True
    for _ in range(_MAX_PASSES):
        changed = False
        for sweep in (range(count), range(count - 1, -1, -1)):
            for r in sweep:
                if pending[r]:
                    pending[r] = False
                    if _visit(records[r], table, how, users, pending):
                        changed = True
                    for i in records[r][4]:
                        value = table[i]
                        if value is None or (partial_shapes and 0 in value):
                            break
                    else:
                        pending[r] = False      # fully known: its entries cannot change
        if not changed or True not in pending:
            break
    return table


def _visit(record, table, how, users, pending):
    """One operator's inference applied to the table; True when something was learnt. The
    operators reading or writing a changed entry are marked ``pending``."""
    node, op, in_idx, out_idx, touched = record
    attr, merge, _, stored, convert, kind = how
    ins = [table[i] for i in in_idx]
    outs = [table[i] for i in out_idx]
    olds = ins + outs       # the operator gets (and may change) ins and outs themselves
    try:
        new_in, new_out = getattr(op, attr)(ins, outs)
    except MXNetError as err:
        in_names = op.list_arguments() + op.list_auxiliary_states()
        raise MXNetError('Error in operator %s (%s): %s; input %ss %s'
                         % (node.name, op.op_name, err, kind,
                            dict(zip(in_names, olds[:len(in_idx)])))) from None
    changed = False
    for k, (index, old, new) in enumerate(zip(touched, olds, [*new_in, *new_out])):
        if new is None or (type(new) is stored and new == old):
            continue        # merging would learn nothing
        if old is None:
            merged = convert(new)
        else:
            merged = merge(node, _entry_names(op)[k], old, new)
        if merged != old:
            table[index] = merged
            changed = True
            for user in users[index]:
                pending[user] = True
    return changed


def _entry_names(op):
    """Names of an operator's inputs (arguments, auxiliary states) then outputs."""
    return op.list_arguments() + op.list_auxiliary_states() + op.list_outputs()


def infer_types(sym, known, heads=None):
    """Infer dtypes (numpy dtype names) of every entry; ``known`` maps variable names to dtypes,
    ``heads`` (a subgraph's, optional) gives known dtypes of the outputs (None: unknown)."""
    graph = InferenceGraph.of_symbol(sym)
    table = seed_types(graph, known)
    for (node, idx), dtype in zip(sym._outputs, heads or ()):
        index = graph.slot_of[_entry_key(node, idx)]
        if dtype is not None and table[index] is None:
            table[index] = np.dtype(dtype).name
    solve(graph, table, 'type')
    return graph.as_dict(table, variables=False)


def seed_types(graph, known):
    """The table type inference starts from: the dtypes of the variables, from ``known``
    (variable name -> dtype) or their ``__dtype__`` attribute; None elsewhere."""
    from .register import FLAG_DTYPES  # pylint: disable=import-outside-toplevel
    table = [None] * graph.size
    for node, index in graph.variables:
        if known.get(node.name) is not None:
            table[index] = _dtype_name(known[node.name])
        elif '__dtype__' in node.attrs:
            table[index] = FLAG_DTYPES[int(node.attrs['__dtype__'])]
    return table


def shape_attr(shape):
    """String form of a shape for the ``__shape__`` attribute."""
    return attr_str(tuple(shape))


def variable_stype(node, known):
    """Storage type of a variable: ``known[name]`` (stype_dict, bound arrays), else its
    ``__storage_type__`` attribute (Variable(stype=...)), else 'default'."""
    from .register import STYPE_FLAGS  # pylint: disable=import-outside-toplevel
    if known.get(node.name):
        return known[node.name]
    flag = node.attrs.get('__storage_type__')
    if flag is not None:
        names = {v: k for k, v in STYPE_FLAGS.items()}
        if int(flag) in names:
            return names[int(flag)]
    return 'default'


def infer_storage_types(sym, known):
    """Storage type of every entry (MXNet's storage-type inference, forward).

    ``known`` maps variable names to storage types. Each operator's storage rule (see
    :mod:`mxmod.ops.sparse_registry`) names its outputs' storage types from its inputs'; an
    operator without sparse support gives dense outputs (storage fallback).

    Returns ``(entry-key -> stype, node id -> dispatch mode)``."""
    from ..ops.sparse_registry import plan_forward  # pylint: disable=import-outside-toplevel
    table, modes = {}, {}
    for node in sym._topo():
        if node.op is None:
            table[_entry_key(node, 0)] = variable_stype(node, known)
            continue
        ins = [table[_entry_key(src, idx)] for src, idx in node.inputs]
        try:
            outs, modes[id(node)] = plan_forward(node.op, ins)
        except MXNetError as err:
            raise MXNetError('Error in operator %s (%s) with input storage types %s: %s'
                             % (node.name, node.op.op_name, ins, err)) from None
        for i, stype in enumerate(outs):
            table[_entry_key(node, i)] = stype
    return table, modes
