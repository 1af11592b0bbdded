"""Shape and type inference over a symbol's graph, iterated to a fixed point."""
import numpy as np

from ..base import MXNetError
from ..ops.base import attr_str, merge_shape
from ..util import is_np_shape
from .graph import topo_order

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


def infer_shapes(sym, known, partial):
    """Infer shapes of every entry. ``known`` maps variable names to shapes.

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


def infer_types(sym, known):
    """Infer dtypes (numpy dtype names) of every entry; ``known`` maps variable names to dtypes."""
    from .register import FLAG_DTYPES  # pylint: disable=import-outside-toplevel
    order = topo_order(sym._heads())
    types = {}
    for node in order:
        if node.op is None:
            if node.name in known and known[node.name] is not None:
                types[_entry_key(node, 0)] = np.dtype(known[node.name]).name
            elif '__dtype__' in node.attrs:
                types[_entry_key(node, 0)] = FLAG_DTYPES[int(node.attrs['__dtype__'])]
    _fixed_point(order, types, 'type', _merge_type)
    return types


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
    for node in topo_order(sym._heads()):
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
