"""MXNet's symbol JSON: writing it byte-for-byte as MXNet 1.9.1 does, and reading it (including the
older "param"/"attr" node layouts)."""
import json

from ..base import MXNetError
from .graph import Node, topo_order, aux_variable_ids, make_op
from .symbol import Symbol

MXNET_VERSION = 10901


def _dump(value, indent, multiline_nodes=False):
    """Serialize like dmlc's JSON writer: objects with one key and short arrays stay on one line."""
    pad = '  ' * (indent + 1)
    end = '  ' * indent
    if isinstance(value, dict):
        items = ['%s: %s' % (json.dumps(k), _dump(v, indent + 1)) for k, v in value.items()]
        if len(items) <= 1 and not multiline_nodes:
            return '{' + ''.join(items) + '}'
        return '{\n' + ', \n'.join(pad + it for it in items) + '\n' + end + '}'
    if isinstance(value, list):
        if multiline_nodes:
            items = [_dump(v, indent + 1, multiline_nodes=True) for v in value]
        else:
            items = [_dump(v, indent + 1) for v in value]
        if len(items) <= 10 and not multiline_nodes:
            return '[' + ', '.join(items) + ']'
        return '[\n' + ', \n'.join(pad + it for it in items) + '\n' + end + ']'
    return json.dumps(value)


def _graph_attrs():
    from ..util import is_np_shape  # pylint: disable=import-outside-toplevel
    attrs = {'mxnet_version': ['int', MXNET_VERSION]}
    if is_np_shape():
        attrs = {'is_np_shape': ['int', 1], 'mxnet_version': ['int', MXNET_VERSION]}
    return attrs


def to_json(sym):
    """Return MXNet's JSON text for ``sym``."""
    order = topo_order(sym._heads())
    index = {id(n): i for i, n in enumerate(order)}
    aux = aux_variable_ids(order)
    nodes, row_ptr = [], [0]
    for node in order:
        entry = {'op': node.op_name(), 'name': node.name}
        if node.attrs:
            entry['attrs'] = dict(sorted(node.attrs.items()))
        entry['inputs'] = [[index[id(src)], idx, 1 if id(src) in aux else 0] for src, idx in node.inputs]
        nodes.append(entry)
        row_ptr.append(row_ptr[-1] + node.num_outputs())
    doc = [('nodes', nodes),
           ('arg_nodes', [i for i, n in enumerate(order) if n.op is None]),
           ('node_row_ptr', row_ptr),
           ('heads', [[index[id(n)], i, 0] for n, i in sym._outputs]),
           ('attrs', _graph_attrs())]
    parts = []
    for key, val in doc:
        text = _dump(val, 1, multiline_nodes=(key == 'nodes'))
        parts.append('  %s: %s' % (json.dumps(key), text))
    return '{\n' + ', \n'.join(parts) + '\n}'


def _node_attrs(entry):
    attrs = {}
    for key in ('param', 'attr', 'attrs'):
        for k, v in (entry.get(key) or {}).items():
            attrs[k] = v if isinstance(v, str) else str(v)
    return attrs


def load_json(json_str):
    """Build a Symbol from MXNet's JSON text."""
    try:
        doc = json.loads(json_str)
    except ValueError as err:
        raise MXNetError('symbol JSON could not be parsed: %s' % err) from None
    if not isinstance(doc, dict) or 'nodes' not in doc or 'heads' not in doc:
        raise MXNetError('symbol JSON must be an object with "nodes" and "heads"')
    built = []
    for i, entry in enumerate(doc['nodes']):
        attrs = _node_attrs(entry)
        op_name = entry.get('op', 'null')
        try:
            op = None if op_name == 'null' else make_op(op_name, attrs)
        except MXNetError as err:
            raise MXNetError('symbol JSON node %d (%s %r): %s' % (i, op_name, entry.get('name'), err)) from None
        inputs = [(built[e[0]], e[1]) for e in entry.get('inputs', [])]
        built.append(Node(op, entry['name'], attrs, inputs))
    return Symbol([(built[h[0]], h[1]) for h in doc['heads']])


def load(fname):
    """Load a symbol from a JSON file written by ``Symbol.save`` (or by MXNet)."""
    if not isinstance(fname, str):
        raise TypeError('fname must be a string, got %s' % type(fname).__name__)
    try:
        with open(fname) as fin:
            text = fin.read()
    except OSError as err:
        raise MXNetError('cannot read symbol file %r: %s' % (fname, err)) from None
    try:
        return load_json(text)
    except MXNetError as err:
        raise MXNetError('%s: %s' % (fname, err)) from None
