"""``mx.sym.contrib.while_loop`` and ``mx.sym.contrib.cond`` (see control_flow.py for how a
function becomes a subgraph)."""
from ..attribute import AttrScope
from ..base import MXNetValueError
from ..ndarray.control_flow import as_python, check_all, flatten, regroup
from ..ops.control_flow import locs_text
from .control_flow import _cut, _group, _operator, _subgraph_name, _unique_name
from .register import Variable
from .symbol import Symbol


def _traced(graph_vars, function, name):
    """Run ``function`` on variables standing for ``graph_vars`` inside a new subgraph scope.

    Returns
    -------
    (Symbol, str, int, int, format)
        The subgraph before cutting, its name, the numbers of per-step outputs and of all
        outputs, and the format of the per-step outputs.
    """
    sub_name = _subgraph_name(name)
    with AttrScope(__subgraph_name__=sub_name):
        flat, fmt = flatten(graph_vars, 'while loop_vars', Symbol)
        new_vars = regroup([Variable(_unique_name(s)) for s in flat], fmt)[0] if flat else []
        outputs, finals, out_fmt = function(new_vars)
        graph = _group(outputs, finals, sub_name)
    return graph, sub_name, len(outputs), len(outputs) + len(finals), out_fmt


def _union(graphs, loop_vars, by_node_name=False):
    """The operator's inputs for cut subgraphs ``graphs`` ((subgraph, sources) pairs) and the
    locations of each subgraph's inputs among them (and of the loop variables among each
    subgraph's inputs), as MXNet's Python API orders them: a symbol given twice (the same
    Python object) is one input."""
    inputs, seen, locs = [], {}, []
    var_of = {_unique_name(s): s for s in loop_vars}
    var_index = {_unique_name(s): i for i, s in enumerate(loop_vars)}
    for subgraph, sources in graphs:
        earlier = {s.name: s for s in inputs} if by_node_name else {}
        input_locs, var_locs = [], [-1] * len(loop_vars)
        for name in subgraph.list_inputs():
            sym = var_of[name] if name in var_of else \
                earlier[name] if name in earlier else sources[name]
            if id(sym) not in seen:
                seen[id(sym)] = len(inputs)
                inputs.append(sym)
            input_locs.append(seen[id(sym)])
            if name in var_index:
                var_locs[var_index[name]] = len(input_locs) - 1
        locs.append((input_locs, var_locs))
    return inputs, locs


def while_loop(cond, func, loop_vars, max_iterations=None, name='while_loop'):
    """Run ``func`` while ``cond`` holds, at most ``max_iterations`` times.

    ``cond(*loop_vars)`` returns a one-element Symbol; ``func(*loop_vars)`` returns
    ``(step_output, new_loop_vars)``.

    Parameters
    ----------
    cond, func : callable
    loop_vars : Symbol or nested list of Symbols
    max_iterations : int
    name : str, optional

    Returns
    -------
    (outputs, states)
        The per-step outputs stacked along axis 0 (``max_iterations`` rows; those after the
        last step are zeros), and the final loop variables.
    """
    flat_vars, var_fmt = flatten(loop_vars, 'while loop_vars', Symbol)
    check_all(flat_vars, Symbol, 'loop_vars should be a symbol or a nested list of symbols')

    def cond_wrapper(new_vars):
        result = cond(*new_vars)
        if not isinstance(result, Symbol):
            raise MXNetValueError('Return of cond must be a Symbol')
        return [], [result], []

    def func_wrapper(new_vars):
        step_output, new_loop_vars = func(*new_vars)
        step_output = [] if step_output is None else step_output
        new_loop_vars = [] if new_loop_vars is None else new_loop_vars
        step_output = list(step_output) if isinstance(step_output, tuple) else step_output
        new_loop_vars = list(new_loop_vars) if isinstance(new_loop_vars, tuple) else new_loop_vars
        step_output, out_fmt = flatten(step_output, 'while output', Symbol)
        new_loop_vars, _ = flatten(new_loop_vars, 'while loop_vars', Symbol)
        if len(new_vars) != len(new_loop_vars):
            raise MXNetValueError('The number of loop_vars should be consistent during the loop')
        return step_output, new_loop_vars, out_fmt

    if max_iterations is None:
        raise MXNetValueError('max_iterations should be specified')
    max_iterations = as_python(max_iterations, int, 'max_iteration')
    if len(loop_vars) == 0:
        raise MXNetValueError('loop_vars should contain at least one element')
    cond_g, cond_name, _, _, _ = _traced(loop_vars, cond_wrapper, name + '_cond')
    func_g, func_name, n_data, n_out, out_fmt = _traced(loop_vars, func_wrapper, name + '_func')
    cond_sub, cond_src, _ = _cut(cond_g, cond_name)
    func_sub, func_src, _ = _cut(func_g, func_name)
    inputs, ((cond_locs, _), (func_locs, var_locs)) = _union(
        [(cond_sub, cond_src), (func_sub, func_src)], flat_vars)
    for i, loc in enumerate(var_locs, 1):
        if loc == -1:
            raise MXNetValueError("The %d-th loop_var doesn't involve into the computation" % i)
    result = _operator('_while_loop', [cond_sub, func_sub], inputs,
                       {'max_iterations': str(max_iterations),
                        'cond_input_locs': locs_text(cond_locs),
                        'func_input_locs': locs_text(func_locs),
                        'func_var_locs': locs_text(var_locs),
                        'num_out_data': str(n_data), 'num_outputs': str(n_out)})
    outputs = regroup([result[i] for i in range(n_data)], out_fmt)[0]
    finals = regroup([result[i] for i in range(n_data, n_out)], var_fmt)[0]
    return outputs, finals


def cond(pred, then_func, else_func, name='cond'):
    """Run ``then_func()`` or ``else_func()`` as the one-element Symbol ``pred`` is true or
    false; both return Symbols of the same number, shapes and dtypes.

    Parameters
    ----------
    pred : Symbol
    then_func, else_func : callable
    name : str, optional

    Returns
    -------
    Symbol or nested list of Symbols
        The taken branch's outputs, nested as ``then_func`` returns them.
    """
    def traced(function, suffix):
        def wrapper(_):
            outputs, fmt = flatten(function(), 'cond outputs', Symbol)
            return outputs, [], fmt
        graph, sub_name, count, _, fmt = _traced([], wrapper, name + suffix)
        subgraph, sources, _ = _cut(graph, sub_name)
        return subgraph, sources, count, fmt

    cond_sub, cond_src, cond_count, _ = traced(lambda: pred, '_pred')
    if cond_count != 1:
        raise MXNetValueError('pred should always be a single output')
    then_sub, then_src, then_count, then_fmt = traced(then_func, '_then')
    else_sub, else_src, else_count, _ = traced(else_func, '_else')
    if then_count != else_count:
        raise MXNetValueError('Number of outputs differs between then-branch and else-branch')
    inputs, locs = _union([(cond_sub, cond_src), (then_sub, then_src), (else_sub, else_src)], [],
                          by_node_name=True)
    result = _operator('_cond', [cond_sub, then_sub, else_sub], inputs,
                       {'cond_input_locs': locs_text(locs[0][0]),
                        'then_input_locs': locs_text(locs[1][0]),
                        'else_input_locs': locs_text(locs[2][0]),
                        'num_outputs': str(then_count)})
    return regroup([result[i] for i in range(then_count)], then_fmt)[0]


__all__ = ['while_loop', 'cond']
