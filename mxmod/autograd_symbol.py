"""``autograd.get_symbol``: the computation recorded on the autograd tape up to an NDArray, as
a Symbol.

Variables (``attach_grad`` / ``mark_variables``) become variables named ``var<i>``, arrays that
recorded operators read without being in a graph become variables named ``null<i>`` (auxiliary
states too), and each recorded operator a node ``node_<i>`` with its parameters, as MXNet names
them. NDArray indexing shows as ``slice`` (and ``Reshape`` where the result's shape differs) for
basic keys and ``gather_nd`` from a constant index otherwise; a copy to another context as
``_copyto``. ``autograd.Function`` steps have no symbolic form."""
from .base import MXNetError, integer_types
from .ndarray import tape
from .symbol.graph import Node, make_op
from .symbol.symbol import Symbol

__all__ = ['tape_to_symbol', 'getitem_symbolic', 'copy_symbolic']


def _op_node(op_name, name, attrs, inputs):
    return Node(make_op(op_name, attrs), name, dict(attrs), list(inputs))


def _tuple_attr(values):
    return str(tuple(None if v is None else int(v) for v in values))


def _basic_regions(key, shape):
    """(begin, end, step) per sliced axis of a basic index ``key`` into ``shape``."""
    parts = list(key) if isinstance(key, tuple) else [key]
    used = sum(1 for k in parts if k is not None and k is not Ellipsis)
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        parts[at:at + 1] = [slice(None)] * (len(shape) - used)
    parts = [k for k in parts if k is not None]
    parts += [slice(None)] * (len(shape) - len(parts))
    begin, end, step = [], [], []
    for k, dim in zip(parts, shape):
        if isinstance(k, integer_types):
            k = int(k) + dim if int(k) < 0 else int(k)
            begin.append(k)
            end.append(k + 1)
            step.append(None)
        else:
            start, stop, stride = k.indices(dim)
            begin.append(start)
            end.append(None if stride < 0 and stop < 0 else stop)
            step.append(None if stride == 1 else stride)
    return begin, end, step


def getitem_symbolic(key, in_shape, out_shape):
    """The ``symbolic`` hook of a recorded ``source[key]`` (see tape.FunctionNode)."""
    def build(entries, name):
        if all(isinstance(k, integer_types + (slice,)) or k is None or k is Ellipsis
               for k in (key if isinstance(key, tuple) else (key,))):
            begin, end, step = _basic_regions(key, in_shape)
            attrs = {'begin': _tuple_attr(begin), 'end': _tuple_attr(end)}
            if any(s is not None for s in step):
                attrs['step'] = _tuple_attr(step)
            node = _op_node('slice', name, attrs, entries)
            if tuple(out_shape) != tuple(_sliced_shape(begin, end, step, in_shape)):
                node = _op_node('Reshape', name + '_reshape',
                                {'shape': _tuple_attr(out_shape)}, [(node, 0)])
            return [(node, 0)]
        index = Node(None, 'null%d' % next(tape._LEAF_NAMES))   # pylint: disable=protected-access
        return [(_op_node('gather_nd', name, {}, [entries[0], (index, 0)]), 0)]
    return build


def _sliced_shape(begin, end, step, shape):
    out = []
    for b, e, s, dim in zip(begin, end, step, shape):
        out.append(len(range(dim)[slice(b, e, s)]))
    return out


def copy_symbolic(entries, name):
    """The ``symbolic`` hook of a recorded copy to another context."""
    return [(_op_node('_copyto', name, {}, entries), 0)]


def tape_to_symbol(array):
    """The recorded computation up to ``array`` (an NDArray in a graph) as a Symbol."""
    entry = tape.entry_of(array)
    if entry is None:
        raise MXNetError('NDArray is not part of a computation graph. Did you forget to turn on '
                         'recording?')
    order, stack, seen = [], [entry[0]], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        stack.extend(e[0] for e in node.inputs)
    order.sort(key=lambda n: n.seq)          # inputs are always older than their users
    built = {}
    for node in order:
        if node.kind in ('variable', 'constant'):
            built[id(node)] = [(Node(None, node.name, {}), 0)]
            continue
        if node.cleared:
            raise MXNetError('get_symbol: the graph was freed by a backward pass; record again '
                             'or pass retain_graph=True to backward')
        inputs = [built[id(e[0])][e[1]] for e in node.inputs]
        if node.kind == 'op':
            inputs += [(Node(None, name, {}), 0) for name in node.aux_names]
            sym_node = Node(make_op(node.op.op_name, node.op.attrs), node.name,
                            dict(node.op.attrs), inputs)
            built[id(node)] = [(sym_node, i) for i in range(node.num_outputs)]
        elif node.symbolic is not None:
            built[id(node)] = node.symbolic(inputs, node.name)
        else:
            raise MXNetError('get_symbol: the graph contains an autograd.Function step (%s), '
                             'which has no symbolic form' % node.name)
    return Symbol([built[id(entry[0])][entry[1]]])
