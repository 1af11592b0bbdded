"""The shape/type inference mxmod had before the one-pass solver (mxmod/symbol/infer.py's
``solve``): every operator swept forwards then backwards, up to 8 times, until nothing changes.
Kept verbatim (but for imports) as the reference that test_infer_solver.py compares the new
inference with, result for result and error message for error message."""
import numpy as np

from mxmod.base import MXNetError
from mxmod.ops.base import merge_shape
from mxmod.symbol.graph import topo_order
from mxmod.symbol.infer import _parse_shape_attr, _to_internal

_MAX_PASSES = 8


def _entry_key(node, idx):
    return (id(node), idx)


def infer_shapes(sym, known, partial, heads=None):
    """Infer shapes of every entry. ``known`` maps variable names to shapes; ``heads`` (a
    subgraph's, optional) gives known shapes of the outputs, one per output (None: unknown).

    Returns a dict entry-key -> shape (None for unknown)."""
    order = topo_order(sym._heads())
    shapes = {}
    for node in order:
        if node.op is None:
            if node.name in known:
                shape = _to_internal(known[node.name])
            elif '__shape__' in node.attrs:
                try:
                    shape = _parse_shape_attr(node.attrs['__shape__'])
                except Exception:  # pylint: disable=broad-except
                    shape = False
                if shape is not None and (not isinstance(shape, tuple) or not all(
                        isinstance(d, int) for d in shape)):
                    raise MXNetError('variable %r: its shape attribute %r is not a shape (a '
                                     'tuple of ints such as (2, 3))'
                                     % (node.name, node.attrs['__shape__']))
            else:
                shape = None
            shapes[_entry_key(node, 0)] = shape
    for (node, idx), shape in zip(sym._outputs, heads or ()):
        if shape is not None:
            key = _entry_key(node, idx)
            shapes[key] = merge_shape(node.name, 'its output', shapes.get(key), _to_internal(shape))
    _fixed_point(order, shapes, 'shape', _merge_shape)
    return shapes


def _merge_shape(node, what, old, new):
    new = tuple(int(d) for d in new)
    try:
        return merge_shape('%s (%s)' % (node.name, node.op.op_name), what, old, new)
    except MXNetError as err:
        raise MXNetError('Error in operator %s: shape inconsistent for %s: provided %s, '
                         'inferred %s (%s)' % (node.name, what, old, new, err)) from None


def _merge_type(node, what, old, new):
    new = np.dtype(new).name
    if old is not None and old != new:
        raise MXNetError('Error in operator %s (%s): type inconsistent for %s: it is %s, the '
                         'operator needs %s (MXNet does not cast: cast it with astype or give '
                         'the inputs one dtype)' % (node.name, node.op.op_name, what, old, new))
    return new


def _fixed_point(order, table, kind, merge):
    """Run every operator's infer_<kind> forwards and backwards until nothing changes."""
    for _ in range(_MAX_PASSES):
        changed = False
        for node in list(order) + list(reversed(order)):
            if node.op is not None:
                changed |= _infer_node(node, table, kind, merge)
        if not changed:
            break


def _infer_node(node, table, kind, merge):
    """Apply one operator's inference to the table of entries; True when something was learnt."""
    op = node.op
    in_keys = [_entry_key(src, idx) for src, idx in node.inputs]
    out_keys = [_entry_key(node, i) for i in range(len(op.list_outputs()))]
    ins = [table.get(k) for k in in_keys]
    outs = [table.get(k) for k in out_keys]
    try:
        new_in, new_out = getattr(op, 'infer_' + kind)(list(ins), list(outs))
    except MXNetError as err:
        raise MXNetError('Error in operator %s (%s): %s; input %ss %s'
                         % (node.name, op.op_name, err, kind,
                            dict(zip(_input_names(node), ins)))) from None
    changed = False
    for key, old, new, what in zip(in_keys + out_keys, ins + outs, list(new_in) + list(new_out),
                                   _input_names(node) + op.list_outputs()):
        if new is None:
            continue
        merged = merge(node, what, old, new)
        if merged != old:
            table[key] = merged
            changed = True
    return changed


def _input_names(node):
    return node.op.list_arguments() + node.op.list_auxiliary_states()


def infer_types(sym, known, heads=None):
    """Infer dtypes (numpy dtype names) of every entry; ``known`` maps variable names to dtypes,
    ``heads`` (a subgraph's, optional) gives known dtypes of the outputs (None: unknown)."""
    from mxmod.symbol.register import FLAG_DTYPES  # pylint: disable=import-outside-toplevel
    order = topo_order(sym._heads())
    types = {}
    for node in order:
        if node.op is None:
            if node.name in known and known[node.name] is not None:
                types[_entry_key(node, 0)] = np.dtype(known[node.name]).name
            elif '__dtype__' in node.attrs:
                types[_entry_key(node, 0)] = FLAG_DTYPES[int(node.attrs['__dtype__'])]
    for (node, idx), dtype in zip(sym._outputs, heads or ()):
        if dtype is not None and types.get(_entry_key(node, idx)) is None:
            types[_entry_key(node, idx)] = np.dtype(dtype).name
    _fixed_point(order, types, 'type', _merge_type)
    return types
