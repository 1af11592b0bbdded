"""``mx.viz``: a network as a table (:func:`print_summary`) or as a Graphviz graph
(:func:`plot_network`), as MXNet 1.9.1 shows them.

Both read the symbol's JSON, so they show what ``tojson`` saves. The table is MXNet's to the
character, including how it counts parameters: a layer's input width is the first non-batch
dimension of each input that is an operator output (Convolution and FullyConnected use it;
BatchNorm counts gamma and beta; Embedding input_dim x output_dim), and a layer with several
outputs shows no output shape."""
import json
import re
import warnings

from .symbol import Symbol

__all__ = ['print_summary', 'plot_network']

_WEIGHT_SUFFIXES = ('_weight', '_bias', '_beta', '_gamma', '_moving_var', '_moving_mean',
                    '_running_var', '_running_mean')
_COLORS = ('#8dd3c7', '#fb8072', '#ffffb3', '#bebada', '#80b1d3', '#fdb462', '#b3de69', '#fccde5')


def _numbers(text):
    """The integers written in an attribute such as ``'(3, 3)'``, as strings."""
    return re.findall(r'\d+', text)


def _internal_values(symbol, infer, given, what):
    """{internal output name: inferred shape or type} for the inputs ``given``."""
    internals = symbol.get_internals()
    _, outputs, _ = getattr(internals, infer)(**given)
    if outputs is None:
        raise ValueError('Input %s is incomplete' % what)
    return dict(zip(internals.list_outputs(), outputs))


def _format_row(fields, positions):
    """The fields laid out in columns ending at ``positions`` (each cut to fit)."""
    line = ''
    for field, end in zip(fields, positions):
        line = (line + str(field))[:end]
        line += ' ' * (end - len(line))
    return line


def _output_key(node):
    return node['name'] if node['op'] == 'null' else node['name'] + '_output'


def _layer_params(node, input_width, shapes):
    """Parameters of one layer, counted as MXNet's summary counts them."""
    op, attrs = node['op'], node.get('attrs', {})
    no_bias = attrs.get('no_bias') == 'True'
    if op == 'Convolution':
        count = input_width * int(attrs['num_filter']) // int(attrs.get('num_group', '1'))
        for size in _numbers(attrs['kernel']):
            count *= int(size)
        return count if no_bias else count + int(attrs['num_filter'])
    if op == 'FullyConnected':
        return (input_width + (0 if no_bias else 1)) * int(attrs['num_hidden'])
    if op == 'BatchNorm':
        return int(shapes[node['name'] + '_output'][1]) * 2 if shapes is not None else 0
    if op == 'Embedding':
        return int(attrs['input_dim']) * int(attrs['output_dim'])
    return 0


def _summary_rows(nodes, heads, shapes):
    """(fields of each row of a layer, its parameter count) for every listed node."""
    for index, node in enumerate(nodes):
        if node['op'] == 'null' and index > 0:
            continue
        out_shape = []
        if shapes is not None and (node['op'] != 'null' or index in heads):
            out_shape = shapes.get(_output_key(node), [None])[1:]
        previous, width = [], 0
        if node['op'] != 'null':
            for source, _, _ in node['inputs']:
                src = nodes[source]
                if src['op'] == 'null' and source not in heads:
                    continue
                previous.append(src['name'])
                if shapes is not None and _output_key(src) in shapes:
                    width += int(shapes[_output_key(src)][1:][0])
        params = _layer_params(node, width, shapes)
        rows = [['%s(%s)' % (node['name'], node['op']), 'x'.join(str(d) for d in out_shape),
                 params, previous[0] if previous else '']]
        rows += [['', '', '', name] for name in previous[1:]]
        yield index, rows, params


def print_summary(symbol, shape=None, line_length=120, positions=[.44, .64, .74, 1.]):  # pylint: disable=dangerous-default-value
    """Print a table of the layers of ``symbol``: name (operator), output shape, parameters,
    previous layers, and the total number of parameters (MXNet's layout).

    Parameters
    ----------
    symbol : Symbol
    shape : dict of str to tuple, optional
        Input shapes; without them shapes and shape-dependent counts are left out.
    line_length : int, default 120
        Width of the table.
    positions : list of float or int, default [.44, .64, .74, 1.]
        Where the four columns end: fractions of ``line_length`` (when the last is <= 1) or
        character positions.
    """
    if not isinstance(symbol, Symbol):
        raise TypeError('symbol must be Symbol')
    shapes = _internal_values(symbol, 'infer_shape', shape, 'shape') if shape is not None else None
    conf = json.loads(symbol.tojson())
    nodes = conf['nodes']
    heads = set(conf['heads'][0])     # MXNet's reading: the ids in the first head entry
    positions = list(positions)
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    print('_' * line_length)
    print(_format_row(['Layer (type)', 'Output Shape', 'Param #', 'Previous Layer'], positions))
    print('=' * line_length)
    total = 0
    for index, rows, params in _summary_rows(nodes, heads, shapes):
        for row in rows:
            print(_format_row(row, positions))
        total += params
        print(('=' if index == len(nodes) - 1 else '_') * line_length)
    print('Total params: {}'.format(total))
    print('_' * line_length)


def _node_look(node, base):
    """(label, attributes) of a drawn operator or input node; None for a hidden weight."""
    op, name, attrs = node['op'], node['name'], node.get('attrs', {})
    look = dict(base)
    label, color = name, 7
    if op == 'null':
        look['shape'], color = 'oval', 0
    elif op == 'Convolution':
        stride = 'x'.join(_numbers(attrs['stride'])) if 'stride' in attrs else '1'
        label = 'Convolution\n%s/%s, %s' % ('x'.join(_numbers(attrs['kernel'])), stride,
                                            attrs['num_filter'])
        color = 1
    elif op == 'FullyConnected':
        label, color = 'FullyConnected\n%s' % attrs['num_hidden'], 1
    elif op == 'BatchNorm':
        color = 3
    elif op in ('Activation', 'LeakyReLU'):
        default = 'Leaky' if op == 'LeakyReLU' else None
        label, color = '%s\n%s' % (op, attrs.get('act_type', default)), 2
    elif op == 'Pooling':
        kernel = 'x'.join(_numbers(attrs['kernel'])) if 'kernel' in attrs else '[]'
        stride = 'x'.join(_numbers(attrs['stride'])) if 'stride' in attrs else '1'
        label, color = 'Pooling\n%s, %s/%s' % (attrs['pool_type'], kernel, stride), 4
    elif op in ('Concat', 'Flatten', 'Reshape'):
        color = 5
    elif op == 'Softmax':
        color = 6
    elif op == 'Custom':
        label = attrs['op_type']
    look['fillcolor'] = _COLORS[color]
    return label, look


def _edge_label(src, shapes, types):
    """The shape (and type) text of the edge leaving node ``src``."""
    key = _output_key(src)
    if src['op'] != 'null' and 'num_outputs' in src.get('attrs', {}):
        key += str(int(src['attrs']['num_outputs']) - 1)
    label = ''
    if shapes is not None:
        label = 'x'.join(str(d) for d in shapes[key][1:])
    if types is not None:
        label += '(%s)' % types[key].__name__
    return label


def _draw_nodes(dot, nodes, base, hide_weights):
    """Add the operator and input nodes to ``dot``; return the names of hidden weights."""
    hidden = set()
    for node in nodes:
        if node['op'] == 'null' and node['name'].endswith(_WEIGHT_SUFFIXES):
            if hide_weights:
                hidden.add(node['name'])
            continue        # a weight shown is drawn by its edge alone, as MXNet does
        label, look = _node_look(node, base)
        dot.node(name=node['name'], label=label, **look)
    return hidden


def _draw_edges(dot, nodes, hidden, shapes, types):
    """Add an edge from every operator to each of its (shown) inputs."""
    for node in nodes:
        if node['op'] == 'null':
            continue
        inputs = node['inputs'][:1] if node['op'] == '_contrib_BilinearResize2D' else node['inputs']
        for source, _, _ in inputs:
            src = nodes[source]
            if src['name'] not in hidden:
                dot.edge(tail_name=node['name'], head_name=src['name'], dir='back',
                         arrowtail='open', label=_edge_label(src, shapes, types))


def _warn_repeated_names(nodes):
    seen, repeated = set(), []
    for node in nodes:
        if node['name'] in seen and node['name'] not in repeated:
            repeated.append(node['name'])
        seen.add(node['name'])
    if repeated:
        warnings.warn('There are multiple variables with the same name in your graph, this may '
                      'result in cyclic graph. Repeated names: ' + ','.join(repeated),
                      RuntimeWarning)


def plot_network(symbol, title='plot', save_format='pdf', shape=None, dtype=None, node_attrs={},  # pylint: disable=dangerous-default-value
                 hide_weights=True):
    """A Graphviz drawing of ``symbol``: one node per operator and input, edges from each input
    to its consumer labelled with shapes (and types) when given.

    Parameters
    ----------
    symbol : Symbol
    title : str, default 'plot'
        Name of the graph (and of the file ``render()`` writes).
    save_format : str, default 'pdf'
        Format ``render()`` writes.
    shape : dict of str to tuple, optional
        Input shapes: edges are labelled with the shapes between nodes.
    dtype : dict of str to numpy type, optional
        Input types: edges are labelled with the types between nodes.
    node_attrs : dict, optional
        Graphviz node attributes that override the defaults (box, 1.3 x 0.8034, filled).
    hide_weights : bool, default True
        Leave out weight, bias, gamma/beta and moving statistics inputs.

    Returns
    -------
    graphviz.Digraph
        Rendering it needs Graphviz's ``dot`` program; building it needs only the ``graphviz``
        package (``pip install mxmod[viz]``).
    """
    try:
        from graphviz import Digraph  # pylint: disable=import-outside-toplevel
    except ImportError as err:
        raise ImportError('Draw network requires graphviz library: pip install mxmod[viz] '
                          '(the graphviz package; %s)' % err) from err
    if not isinstance(symbol, Symbol):
        raise TypeError('symbol must be a Symbol')
    shapes = _internal_values(symbol, 'infer_shape', shape, 'shape') if shape is not None else None
    types = _internal_values(symbol, 'infer_type', dtype, 'type') if dtype is not None else None
    nodes = json.loads(symbol.tojson())['nodes']
    _warn_repeated_names(nodes)
    base = {'shape': 'box', 'fixedsize': 'true', 'width': '1.3', 'height': '0.8034',
            'style': 'filled'}
    base.update(node_attrs)
    dot = Digraph(name=title, format=save_format)
    hidden = _draw_nodes(dot, nodes, base, hide_weights)
    _draw_edges(dot, nodes, hidden, shapes, types)
    return dot
