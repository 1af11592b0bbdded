"""``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``: Python functions traced into
subgraphs of the ``_foreach``, ``_while_loop`` and ``_cond`` operators, as MXNet 1.9.1 builds
them (the same node names, attributes and input order, so the symbol JSON is MXNet's).

A function runs inside ``AttrScope(__subgraph_name__=<name>)`` on new variables standing for
the loop's data and states, so every node it creates carries that name. Its outputs that are not
such nodes (an input, or a value from outside) go through an identity. The subgraph is then cut
where its nodes read a value from outside: that value becomes a new variable named after the
output (``fc_output``, ``w``) and an input of the operator; the variables created inside the
function (a weight of an RNN cell made there) become the operator's inputs too."""
import copy

from ..attribute import AttrScope
from ..base import MXNetError
from ..name import NameManager
from ..ndarray.control_flow import ControlFlowError, check_all, flatten, regroup
from ..ops.control_flow import locs_text
from .graph import Node, make_op, normalize_attrs, topo_order
from .register import Variable, create
from .symbol import Symbol, Group

__all__ = ['foreach', 'while_loop', 'cond', 'ControlFlowError']


# ---- building a subgraph -----------------------------------------------------------------------
def _unique_name(sym):
    """``<node name>-<output index>``: the name of the variable standing for ``sym``."""
    nodes = {id(node) for node, _ in sym._outputs}
    index = ', '.join(str(i) for _, i in sym._outputs) if len(nodes) == 1 else None
    return '%s-%s' % (sym.name, index)


def _subgraph_name(name):
    """A fresh subgraph name: ``name`` numbered, under the enclosing subgraph's name."""
    attrs = AttrScope.current._attr  # pylint: disable=protected-access
    parent = attrs.get('__subgraph_name__', '')
    if parent:
        name = parent + '$' + name
    AttrScope._subgraph_names[name] += 1  # pylint: disable=protected-access
    return name + str(AttrScope._subgraph_names[name] - 1)  # pylint: disable=protected-access


def _inside(sym, name):
    return sym.list_attr().get('__subgraph_name__', '') == name


def _identity(sym):
    return create('_copy', 'identity', (sym,), {})


def _group(outputs, states, name, distinct=False):
    """The subgraph's outputs as one group; an output that is an input or comes from outside
    (or, with ``distinct``, a state that is also an output) goes through an identity."""
    if not outputs and not states:
        raise ControlFlowError('the function of %s returns no Symbol' % name)
    inputs = set(Group(outputs + states).list_inputs())
    out_names = {o.name for o in outputs} if distinct else set()
    flat = [_identity(o) if o.name in inputs or not _inside(o, name) else o for o in outputs]
    flat += [_identity(s) if s.name in inputs or s.name in out_names or not _inside(s, name)
             else s for s in states]
    return Group(flat)


def _cut(graph, name):
    """The subgraph ``graph`` (nodes named ``name``) cut from what it reads outside.

    Returns
    -------
    (Symbol, dict, set)
        The subgraph (copied nodes; a value read from outside is a new variable named after it),
        each of its inputs' source as a Symbol (the outside value, or the variable made inside
        the function) by name, and the names of the cut values.
    """
    copies, cut_vars, sources, var_names = {}, {}, {}, []
    for node in topo_order(graph._heads()):
        if node.attrs.get('__subgraph_name__') != name:
            continue
        inputs = []
        for src, idx in node.inputs:
            if id(src) in copies:
                inputs.append((copies[id(src)], idx))
                continue
            key = (id(src), idx)
            if key not in cut_vars:
                cut_vars[key] = Node(None, src.output_name(idx), {})
                sources[cut_vars[key].name] = Symbol([(src, idx)])
                var_names.append(cut_vars[key].name)
            inputs.append((cut_vars[key], 0))
        copies[id(node)] = Node(node.op, node.name, dict(node.attrs), inputs)
        if node.op is None:
            sources[node.name] = Symbol([(node, 0)])
            var_names.append(node.name)
    if len(set(var_names)) != len(var_names):
        raise ControlFlowError("The inputs of the subgraph don't have unique names: %s"
                               % var_names)
    cut = {n.name for n in cut_vars.values()}
    return Symbol([(copies[id(node)], idx) for node, idx in graph._outputs]), sources, cut


def _operator(op_name, subgraphs, inputs, params):
    """A Symbol of every output of a new ``op_name`` node holding ``subgraphs``."""
    attrs = normalize_attrs(AttrScope.current.get(None))
    attrs.update(params)
    attrs['num_args'] = str(len(subgraphs) + len(inputs))
    op = make_op(op_name, attrs)
    op.subgraphs = subgraphs
    entries = []
    for k, sym in enumerate(inputs):
        if len(sym._outputs) != 1:
            raise MXNetError('%s: input %d (%r) must be a single-output Symbol, got %d outputs'
                             % (op_name, k, sym.name, len(sym._outputs)))
        entries.append(sym._outputs[0])
    node = Node(op, NameManager.current.get(None, op_name), attrs, entries)
    return Symbol([(node, i) for i in range(op.num_visible_outputs())])


def _locate(names, wanted, message):
    if wanted not in names:
        raise ControlFlowError(message)
    return names.index(wanted)


# ---- foreach -------------------------------------------------------------------------------------
def foreach(body, data, init_states, name='foreach'):
    """Run ``body`` on each slice of ``data`` along axis 0, carrying states between steps.

    ``body(data_slice, states)`` returns ``(outputs, new_states)``; ``data_slice`` and the
    states have the nesting of ``data`` and ``init_states``, and ``new_states`` must keep the
    nesting of ``init_states``.

    Parameters
    ----------
    body : callable
        The computation of one iteration.
    data : Symbol or nested list of Symbols
        Iterated over axis 0.
    init_states : Symbol or nested list of Symbols
        The loop states' initial values.
    name : str, optional
        Name of the subgraph.

    Returns
    -------
    (outputs, states)
        The per-step outputs stacked along a new axis 0, and the final states, nested as
        ``body`` returned them.
    """
    flat_data, data_fmt = flatten(data, 'foreach input', Symbol)
    check_all(flat_data, Symbol, 'data should be a symbol or a nested list of symbols')
    flat_init, init_fmt = flatten(init_states, 'foreach states', Symbol)
    check_all(flat_init, Symbol, 'init_states should be a symbol or a nested list of symbols')
    sub_name = _subgraph_name(name)
    with AttrScope(__subgraph_name__=sub_name):
        data_vars = regroup([Variable(_unique_name(s)) for s in flat_data], data_fmt)[0]
        state_vars = regroup([Variable(_unique_name(s)) for s in flat_init],
                             copy.deepcopy(init_fmt))[0]
        outs, states = body(data_vars, state_vars)
        flat_out, out_fmt = flatten(outs, 'foreach output', Symbol)
        flat_new, new_fmt = flatten(states, 'foreach loop_vars', Symbol)
        if init_fmt != new_fmt:
            raise ControlFlowError('The input and output loop_vars have different format')
        check_all(flat_out, Symbol, 'the output should be an NDArray or a nested list of NDArrays')
        check_all(flat_new, Symbol,
                  'the output states should be an NDArray or a nested list of NDArrays')
        graph = _group(flat_out, flat_new, sub_name, distinct=True)
    subgraph, sources, cut = _cut(graph, sub_name)
    names = subgraph.list_inputs()
    data_names = [_unique_name(s) for s in flat_data]
    state_names = [_unique_name(s) for s in flat_init]
    data_locs = [_locate(names, n, 'the data arrays have to be used in the loop body')
                 for n in data_names]
    state_locs = [_locate(names, n, 'the state arrays have to be used in the loop body')
                  for n in state_names]
    remain_locs = [i for i, n in enumerate(names)
                   if n in cut or (n not in data_names and n not in state_names)]
    result = _operator('_foreach', [subgraph],
                       flat_data + flat_init + [sources[names[i]] for i in remain_locs],
                       {'num_outputs': str(len(flat_out) + len(flat_new)),
                        'num_out_data': str(len(flat_out)),
                        'in_state_locs': locs_text(state_locs),
                        'in_data_locs': locs_text(data_locs),
                        'remain_locs': locs_text(remain_locs)})
    outs = regroup([result[i] for i in range(len(flat_out))], out_fmt)[0]
    states = regroup([result[len(flat_out) + i] for i in range(len(flat_new))], init_fmt)[0]
    return outs, states


# pylint: disable=wrong-import-position
from .control_flow_branches import while_loop, cond  # noqa: E402
