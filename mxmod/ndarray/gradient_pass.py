"""Backward over the autograd tape: from head arrays (and their head gradients) to the gradients
of variables, walking recorded nodes newest first (a node's inputs are always older than it)."""
from ..base import MXNetError
from ..context import device_scope, xp_of
from ..profiler.hooks import run_op
from ..profiler.state import PROFILER
from ..sparse_storage import SparseStorage, to_dense, to_stype, stype_of, add_values
from . import tape
from .ndarray import NDArray, from_xp

__all__ = ['backward']

_NOT_IN_GRAPH = ('Cannot differentiate node because it is not in a computational graph. You need '
                 'to set is_recording to true or use autograd.record() to save computational '
                 'graphs for backward. If you want to differentiate the same graph twice, you '
                 'need to pass retain_graph=True to backward.')


def _reachable(head_entries):
    """Recorded nodes and leaf nodes reachable from the heads."""
    nodes, leaves, stack, seen = [], [], [e[0] for e in head_entries], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.kind in ('op', 'function'):
            nodes.append(node)
            stack.extend(e[0] for e in node.inputs)
        else:
            leaves.append(node)
    nodes.sort(key=lambda n: n.seq)
    return nodes, leaves


def _useful(nodes, targets):
    """ids of the target nodes and of the nodes from which a target can be reached."""
    useful = {id(e[0]) for e in targets}
    for node in nodes:                       # oldest first: inputs are decided before users
        if any(id(e[0]) in useful for e in node.inputs):
            useful.add(id(node))
    return useful


def _accumulate(grads, entry, value):
    key = (id(entry[0]), entry[1])
    old = grads.get(key)
    if old is None:
        grads[key] = value
    elif isinstance(old, NDArray):          # create_graph: a recorded sum
        grads[key] = old + value
    elif isinstance(old, SparseStorage) or isinstance(value, SparseStorage):
        grads[key] = add_values(old, value)
    else:
        grads[key] = old + value


def _head_grads(heads, head_grads, entries, as_arrays=False):
    grads = {}
    if head_grads is None:
        head_grads = [None] * len(heads)
    if len(head_grads) != len(heads):
        raise MXNetError('backward: %d head gradients given for %d heads'
                         % (len(head_grads), len(heads)))
    for head, hgrad, entry in zip(heads, head_grads, entries):
        if hgrad is None:
            with device_scope(head.context):
                # a sparse head gets a dense head gradient of ones
                value = xp_of(head.context).ones(head.shape, dtype=head._data.dtype)
        else:
            value = hgrad._data
            if tuple(hgrad.shape) != head.shape:
                # MXNet reads the head's size of elements from the gradient's buffer: a larger
                # gradient (of any shape) gives its leading elements, a smaller one is an error
                if hgrad.size < head.size:
                    raise MXNetError('backward: head gradient of shape %s for a head of shape '
                                     '%s' % (tuple(hgrad.shape), head.shape))
                value = value.reshape(-1)[:head.size].reshape(head.shape)
            value = value.astype(head._data.dtype)
            if value is hgrad._data:
                value = value.copy()
        if as_arrays:       # create_graph: head gradients enter as constants, as in MXNet
            value = from_xp(to_dense(value), head.context)
        _accumulate(grads, entry, value)
    return grads


def _step(node, grads, wanted, useful, captured, create_graph=False):
    """Run one node's backward, moving gradients from its outputs to its inputs."""
    keys = [(id(node), i) for i in range(node.num_outputs)]
    for key in keys:
        if key in wanted:
            captured[key] = grads.get(key)
    out_grads = [grads.pop(k, None) for k in keys]
    is_loss = node.kind == 'op' and node.op.is_loss
    if all(g is None for g in out_grads) and not is_loss:
        return
    need = [id(e[0]) in useful for e in node.inputs]
    if not any(need):
        return
    if (create_graph or not is_loss) and any(g is None for g in out_grads):
        out_grads = [g if g is not None else _zeros_like_output(node, i)
                     for i, g in enumerate(out_grads)]
        if create_graph:
            out_grads = [g if isinstance(g, NDArray) else from_xp(g, node.ctx) for g in out_grads]
    with device_scope(node.ctx):
        if create_graph:
            from .grad_graph import run_node  # pylint: disable=import-outside-toplevel
            in_grads = run_node(node, out_grads, need)
        elif PROFILER.imperative and node.kind == 'op':
            # timed as MXNet's profiler shows an autograd backward: '_backward_<op>'
            in_grads = run_op('_backward_' + node.op.op_name, node.ctx, node.run_backward,
                              out_grads, need)
        else:
            in_grads = node.run_backward(out_grads, need)
    for entry, grad, needed in zip(node.inputs, in_grads, need):
        if needed and grad is not None:
            _accumulate(grads, entry, grad)


def _zeros_like_output(node, index):
    if node.kind == 'op':
        out = node.out_data[index]
        return node.octx.xp.zeros(out.shape, dtype=out.dtype)
    return node.xp.zeros(node.out_shapes[index], dtype=node.out_dtypes[index])


def _write_variable(node, grad):
    target = node.grad
    if node.grad_req == 'null' or target is None:
        return
    with device_scope(target.context):
        if grad is None:
            if node.grad_req == 'write':
                target._data[...] = 0
            return
        if isinstance(grad, SparseStorage) or isinstance(target._data, SparseStorage):
            _write_sparse(target, grad, node.grad_req)
            return
        grad = grad.reshape(target.shape) if tuple(grad.shape) != target.shape else grad
        if node.grad_req == 'add':
            target._data += grad
        else:
            target._data[...] = grad


def _write_sparse(target, grad, grad_req):
    """Write (or add) a gradient into a gradient array when either is sparse: the gradient
    array keeps its storage type."""
    if grad_req == 'add':
        grad = add_values(target._data, grad)
    stype = stype_of(target._data)
    if stype == 'default':
        target._data[...] = to_dense(grad)
    else:
        target._data.assign(to_stype(grad, stype))


def backward(heads, head_grads=None, variables=None, retain_graph=False, train_mode=True,
             create_graph=False):
    """Differentiate ``heads`` (NDArrays in a graph).

    Without ``variables``, gradients are written into the gradient arrays of the variables the
    heads depend on (per grad_req) and None is returned. With ``variables`` (NDArrays in the
    graph), their gradients are returned as xp arrays (None where a head does not depend on
    one) and nothing is written. The recorded nodes are cleared unless ``retain_graph``.

    With ``create_graph`` (and ``variables``) the gradients are computed by recorded operators
    (grad_graph.py) and returned as NDArrays in the graph, to be differentiated again."""
    if create_graph and variables is None:
        raise MXNetError('backward: create_graph needs the variables to differentiate')
    entries = [tape.entry_of(h) for h in heads]
    if any(e is None for e in entries):
        raise MXNetError(_NOT_IN_GRAPH)
    targets = None
    if variables is not None:
        targets = [tape.entry_of(v) for v in variables]
        for i, entry in enumerate(targets):
            if entry is None:
                raise MXNetError('Cannot differentiate with respect to the %d-th variable because '
                                 'it does not require gradient.' % (i + 1))
    nodes, leaves = _reachable(entries)
    grads = _head_grads(heads, head_grads, entries, as_arrays=create_graph)
    wanted = {(id(e[0]), e[1]) for e in targets} if targets is not None else set()
    leaf_targets = targets if targets is not None else [
        (leaf, 0) for leaf in leaves if leaf.kind == 'variable' and leaf.grad_req != 'null']
    useful = _useful(nodes, leaf_targets)
    captured = {}
    prev = tape.set_training(train_mode)
    prev_recording = tape.set_recording(True) if create_graph else None
    try:
        for node in reversed(nodes):
            _step(node, grads, wanted, useful, captured, create_graph)
    finally:
        tape.set_training(prev)
        if create_graph:
            tape.set_recording(prev_recording)
    if targets is not None:
        result = [captured[k] if k in captured else grads.get(k)
                  for k in ((id(e[0]), e[1]) for e in targets)]
    else:
        for leaf in leaves:
            if leaf.kind == 'variable':
                _write_variable(leaf, grads.get((id(leaf), 0)))
                if leaf.grad_req != 'null':
                    leaf.fresh = True       # NDArray._fresh_grad, as MXNet marks every argument
        result = None
    if not retain_graph:
        for node in nodes:
            node.clear()
        for leaf in leaves:
            leaf.clear()
    return result
