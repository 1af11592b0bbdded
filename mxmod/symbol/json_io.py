"""MXNet's symbol JSON: writing it byte-for-byte as MXNet 1.9.1 does, and reading it (including the
older "param"/"attr" node layouts)."""
import json

from ..base import MXNetError
from ..ops.base import get_op
from .graph import Node, topo_order, aux_variable_ids, make_op
from .symbol import Symbol

MXNET_VERSION = 10901


class _Graph(list):
    """A graph document ((key, value) pairs): the whole symbol or a node's subgraph."""


def _dump(value, indent, multiline_nodes=False):
    """Serialize like dmlc's JSON writer: objects with one key and short arrays stay on one line;
    arrays of objects (nodes, subgraphs) and graph documents span lines."""
    pad = '  ' * (indent + 1)
    end = '  ' * indent
    if isinstance(value, _Graph):
        parts = ['%s: %s' % (json.dumps(k), _dump(v, indent + 1, multiline_nodes=(k == 'nodes')))
                 for k, v in value]
        return '{\n' + ', \n'.join(pad + it for it in parts) + '\n' + end + '}'
    if isinstance(value, list) and value and isinstance(value[0], _Graph):
        multiline_nodes = True
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


def _graph_doc(sym):
    """The graph document of ``sym``: its nodes (a node holding subgraphs, such as _foreach's,
    lists them under "subgraphs"), arg_nodes, node_row_ptr and heads."""
    order = topo_order(sym._heads())
    index = {id(n): i for i, n in enumerate(order)}
    aux = aux_variable_ids(order)
    nodes, row_ptr = [], [0]
    for node in order:
        entry = {'op': node.op_name(), 'name': node.name}
        if node.attrs:
            entry['attrs'] = dict(sorted(node.attrs.items()))
        entry['inputs'] = [[index[id(src)], idx, 1 if id(src) in aux else 0] for src, idx in node.inputs]
        subgraphs = getattr(node.op, 'subgraphs', None)
        if subgraphs:
            entry['subgraphs'] = [_graph_doc(graph) for graph in subgraphs]
        nodes.append(entry)
        row_ptr.append(row_ptr[-1] + node.num_outputs())
    return _Graph([('nodes', nodes),
                   ('arg_nodes', [i for i, n in enumerate(order) if n.op is None]),
                   ('node_row_ptr', row_ptr),
                   ('heads', [[index[id(n)], i, 0] for n, i in sym._outputs])])


def to_json(sym):
    """Return MXNet's JSON text for ``sym``."""
    doc = _graph_doc(sym)
    doc.append(('attrs', _graph_attrs()))
    return _dump(doc, 0)


class SymbolJSONError(MXNetError):
    """A symbol JSON document that mxmod refuses (raised with the file or 'symbol JSON')."""


def _fail(what):
    raise SymbolJSONError('Invalid symbol JSON: ' + what)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _node_attrs(entry, where):
    """A node's attributes: "attrs" (MXNet >= 1.0), or the older "param" and "attr" tables."""
    attrs = {}
    for key in ('param', 'attr', 'attrs'):
        table = entry.get(key)
        if table is None:
            continue
        if not isinstance(table, dict):
            _fail('%s: "%s" must be an object of strings, got %s'
                  % (where, key, type(table).__name__))
        for k, v in table.items():
            if not isinstance(v, str):
                _fail('%s: attribute %r must be a string, got %r' % (where, k, v))
            attrs[k] = v
    return attrs


def _unknown_params(cls, attrs):
    """Non-hidden attribute names that operator class ``cls`` does not take."""
    if getattr(cls, 'accepts_any_params', False) or not cls.params:
        return []       # MXNet keeps any attribute of an operator without parameters
    known = set(cls.params)
    if 'scalar' in known:
        known.add('is_int')     # MXNet's scalar operators take it; mxmod reads the scalar's text
    return sorted(k for k in attrs if k not in known and not (k.startswith('__')
                                                               and k.endswith('__')))


def _entry(built, item, where):
    """Resolve a [node, output(, version)] reference to an already built node."""
    if not isinstance(item, list) or len(item) not in (2, 3) or \
            not all(_is_int(v) for v in item):
        _fail('%s must be [node, output] or [node, output, version] integers, got %r'
              % (where, item))
    node_id, index = item[0], item[1]
    if not 0 <= node_id < len(built):
        _fail('%s refers to node %d; only nodes 0..%d come before it (a reference out of range '
              'or a cycle)' % (where, node_id, len(built) - 1))
    src = built[node_id]
    if not 0 <= index < src.num_outputs():
        _fail('%s refers to output %d of node %d (%s %r), which has %d output(s)'
              % (where, index, node_id, src.op_name(), src.name, src.num_outputs()))
    return (src, index)


def _make_node(i, entry, built):
    where = 'node %d' % i
    if not isinstance(entry, dict):
        _fail('%s must be an object, got %s' % (where, type(entry).__name__))
    op_name, name = entry.get('op'), entry.get('name')
    if not isinstance(op_name, str) or not isinstance(name, str):
        _fail('%s needs string "op" and "name", got op=%r name=%r' % (where, op_name, name))
    where = 'node %d (%s %r)' % (i, op_name, name)
    attrs = _node_attrs(entry, where)
    raw_inputs = entry.get('inputs', [])
    if not isinstance(raw_inputs, list):
        _fail('%s: "inputs" must be a list, got %s' % (where, type(raw_inputs).__name__))
    inputs = [_entry(built, e, '%s input %d' % (where, k)) for k, e in enumerate(raw_inputs)]
    if op_name == 'null':
        if inputs:
            _fail('%s is a variable but has %d inputs' % (where, len(inputs)))
        return Node(None, name, attrs, [])
    op = _make_op(op_name, attrs, where)
    _attach_subgraphs(op, entry.get('subgraphs'), where)
    expected = len(op.list_arguments()) + len(op.list_auxiliary_states())
    if len(inputs) != expected:
        _fail('%s has %d inputs, but %s with these attributes takes %d (%s)'
              % (where, len(inputs), op_name, expected,
                 ', '.join(op.list_arguments() + op.list_auxiliary_states())))
    return Node(op, name, attrs, inputs)


def _attach_subgraphs(op, docs, where):
    """Give an operator that holds subgraphs (control flow) the node's "subgraphs"."""
    takes = getattr(op, 'accepts_subgraphs', False)
    if docs is None:
        if takes:
            _fail('%s: %s needs its %d subgraph(s) in "subgraphs"'
                  % (where, op.op_name, op.subgraph_count))
        return
    if not takes:
        _fail('%s: %s takes no "subgraphs"' % (where, op.op_name))
    if not isinstance(docs, list):
        _fail('%s: "subgraphs" must be a list, got %s' % (where, type(docs).__name__))
    graphs = [_build_graph(_check_keys(doc, '%s subgraph %d' % (where, k)),
                           '%s subgraph %d' % (where, k)) for k, doc in enumerate(docs)]
    try:
        op.subgraphs = graphs
    except (MXNetError, TypeError) as err:
        raise SymbolJSONError('Invalid symbol JSON: %s: %s' % (where, err)) from None


def _make_op(op_name, attrs, where):
    try:
        cls = get_op(op_name)
    except MXNetError as err:
        raise SymbolJSONError('Invalid symbol JSON: %s: %s' % (where, err)) from None
    unknown = _unknown_params(cls, attrs)
    if unknown:
        _fail('%s: Cannot find argument %s; %s takes %s' % (where, ', '.join(
            repr(k) for k in unknown), op_name, ', '.join(sorted(cls.params)) or 'no arguments'))
    try:
        return make_op(op_name, attrs)
    except Exception as err:  # pylint: disable=broad-except
        raise SymbolJSONError('Invalid symbol JSON: %s: %s' % (where, err)) from None


def _document(json_str):
    if isinstance(json_str, (bytes, bytearray)):
        try:
            json_str = bytes(json_str).decode('utf-8')
        except UnicodeDecodeError as err:
            _fail('not UTF-8 text (%s)' % err)
    if not isinstance(json_str, str):
        raise TypeError('json_str must be a string, got %s' % type(json_str).__name__)
    try:
        doc = json.loads(json_str)
    except RecursionError:
        _fail('nested too deeply to be a symbol')
    except ValueError as err:
        _fail('could not be parsed: %s' % err)
    return _check_keys(doc, 'the document')


def _check_keys(doc, where):
    """``doc`` if it is an object with the lists "nodes", "arg_nodes" and "heads"."""
    if not isinstance(doc, dict):
        _fail('%s must be an object with "nodes", "arg_nodes" and "heads", got %s'
              % (where, type(doc).__name__))
    for key in ('nodes', 'arg_nodes', 'heads'):
        if not isinstance(doc.get(key), list):
            _fail('%s: "%s" must be a list, got %s' % (where, key, type(doc.get(key)).__name__
                                                       if key in doc else 'nothing'))
    return doc


def _check_arg_nodes(doc, built):
    for k, node_id in enumerate(doc['arg_nodes']):
        if not _is_int(node_id) or not 0 <= node_id < len(built) or \
                not built[node_id].is_variable:
            _fail('arg_nodes[%d] = %r is not the index of a variable node' % (k, node_id))


def _check_names(order):
    seen = {}
    for node in order:
        if node.is_variable:
            other = seen.setdefault(node.name, node)
            if other is not node:
                _fail('two different variables are named %r; variable names must be unique'
                      % node.name)


def load_json(json_str):
    """Build a Symbol from MXNet's JSON text.

    The document is checked before a Symbol is built: its structure, every node reference
    (in range, to an earlier node: no cycles), every operator and its arguments, the number of
    inputs each operator takes, and unique variable names. Anything else raises an MXNetError
    naming the node.

    Parameters
    ----------
    json_str : str
        What ``Symbol.tojson`` (mxmod's or MXNet's) wrote.

    Returns
    -------
    Symbol
    """
    return _build_graph(_document(json_str), None)


def _build_graph(doc, where):
    """The Symbol of a checked graph document (``where``: which subgraph, None for the whole)."""
    built = []
    prefix = '' if where is None else where + ': '
    try:
        for i, entry in enumerate(doc['nodes']):
            built.append(_make_node(i, entry, built))
        _check_arg_nodes(doc, built)
        heads = [_entry(built, h, 'head %d' % k) for k, h in enumerate(doc['heads'])]
    except SymbolJSONError as err:
        if where is None:
            raise
        raise SymbolJSONError(str(err).replace('Invalid symbol JSON: ', 'Invalid symbol JSON: '
                                               + prefix, 1)) from None
    except MXNetError:
        raise
    except Exception as err:  # pylint: disable=broad-except
        raise SymbolJSONError('Invalid symbol JSON: %snode %d: %s: %s'
                              % (prefix, len(built), type(err).__name__, err)) from None
    if not heads:
        _fail('%s"heads" is empty: the symbol has no outputs' % prefix)
    _check_names(topo_order([n for n, _ in heads]))
    return Symbol(heads)


def load_source(text, fname):
    """:func:`load_json` for the contents of ``fname``; errors name the file."""
    try:
        return load_json(text)
    except SymbolJSONError as err:
        raise MXNetError('%r: %s' % (fname, err)) from None


def load(fname):
    """Load a symbol from a JSON file written by ``Symbol.save`` (or by MXNet)."""
    if not isinstance(fname, str):
        raise TypeError('fname must be a string, got %s' % type(fname).__name__)
    try:
        with open(fname, 'rb') as fin:
            text = fin.read()
    except OSError as err:
        raise MXNetError('cannot read symbol file %r: %s' % (fname, err.strerror or err)) from None
    return load_source(text, fname)
