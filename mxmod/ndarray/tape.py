"""The autograd tape: which NDArrays are in a computational graph, and the nodes that imperative
operators add to it while ``mx.autograd.record()`` is active.

An NDArray in a graph carries an entry ``(node, index)``: output ``index`` of ``node``. Leaves are
variables (``attach_grad`` / ``mark_variables``: they own a gradient array and a grad_req) and
constants (arrays without gradient that a recorded operator read). A recorded node keeps what its
backward needs; ``backward`` (gradient_pass.py) walks the nodes from the heads and clears them
unless asked to retain the graph, as MXNet's imperative runtime does."""
import itertools
import threading

from ..base import MXNetError
from ..context import xp_of
from ..sparse_storage import SparseStorage

__all__ = ['is_recording', 'is_training', 'set_recording', 'set_training', 'entry_of',
           'in_graph', 'mark_variable', 'record_op', 'record_function', 'check_writable',
           'Node', 'OpNode', 'FunctionNode']

_STATE = threading.local()
_SEQUENCE = itertools.count()
# names that autograd.get_symbol shows, numbered as MXNet does: variables ("var<i>") and the
# constants recorded operators read ("null<i>") share one counter, operator nodes ("node_<i>")
# have their own
_LEAF_NAMES = itertools.count()
_NODE_NAMES = itertools.count()


def is_recording():
    """True while operators are recorded for gradient computation (the calling thread)."""
    return getattr(_STATE, 'recording', False)


def is_training():
    """True in training mode (Dropout drops, BatchNorm uses batch statistics)."""
    return getattr(_STATE, 'training', False)


def set_recording(is_record):
    """Set recording on or off for the calling thread; returns the previous state."""
    prev = is_recording()
    _STATE.recording = bool(is_record)
    return prev


def set_training(train_mode):
    """Set training mode on or off for the calling thread; returns the previous state."""
    prev = is_training()
    _STATE.training = bool(train_mode)
    return prev


class Node(object):
    """A vertex of the tape. ``kind`` is 'variable', 'constant', 'op' or 'function'."""
    kind = 'constant'

    def __init__(self, name=None):
        self.seq = next(_SEQUENCE)
        self.cleared = False
        self.inputs = ()        # entries of the differentiable inputs
        self.name = name if name is not None else 'null%d' % next(_LEAF_NAMES)

    def clear(self):
        """Forget what backward needed; arrays pointing here leave the graph."""
        self.cleared = True


class VariableNode(Node):
    """A leaf whose gradient is written into ``grad`` according to ``grad_req``."""
    kind = 'variable'

    def __init__(self, grad, grad_req):
        if grad_req not in ('write', 'add', 'null'):
            raise MXNetError("grad_req must be 'write', 'add' or 'null', got %r" % (grad_req,))
        super().__init__('var%d' % next(_LEAF_NAMES))
        self.grad = grad
        self.grad_req = grad_req
        self.fresh = False      # set by backward when it writes grad; cleared by the user

    def clear(self):
        """Variables stay in the graph until marked again."""


class OpNode(Node):
    """An operator call: the operator instance, its per-call context and the arrays its
    backward reads."""
    kind = 'op'

    def __init__(self, op, octx, inputs, in_data, aux_data, out_data):
        super().__init__('node_%d' % next(_NODE_NAMES))
        # auxiliary states are no graph entries; get_symbol shows them as constants
        self.aux_names = ['null%d' % next(_LEAF_NAMES) for _ in aux_data]
        self.op = op
        self.octx = octx
        self.inputs = inputs
        self.in_data = in_data
        self.aux_data = aux_data
        self.out_data = out_data
        self.ctx = octx.ctx

    @property
    def num_outputs(self):
        """Outputs of the call (hidden ones included)."""
        return len(self.out_data)

    def run_backward(self, out_grads, need_grad):
        """Gradients of the inputs (xp arrays or None) given the outputs' gradients."""
        octx = self.octx
        octx.need_grad = need_grad
        octx.grad_out = None
        octx.out = None
        values = list(self.in_data) + list(self.aux_data) + list(self.out_data) + list(out_grads)
        if any(isinstance(v, SparseStorage) for v in values):
            # storage types decide the kernels (or a dense fallback), as for the forward
            from ..ops import sparse_registry  # pylint: disable=import-outside-toplevel
            return sparse_registry.run_backward(self.op, octx, out_grads, self.in_data,
                                                self.out_data, self.aux_data)
        return self.op.backward(octx, out_grads, self.in_data, self.out_data, self.aux_data)

    def clear(self):
        super().clear()
        self.in_data = self.aux_data = self.out_data = self.octx = None


class FunctionNode(Node):
    """A Python-defined step: ``backward(out_grads, need_grad)`` maps output gradients (xp arrays)
    to input gradients (xp arrays or None)."""
    kind = 'function'

    def __init__(self, backward, inputs, outputs, symbolic=None, graph_backward=None):
        super().__init__('node_%d' % next(_NODE_NAMES))
        # how get_symbol shows the step: ``symbolic(input_entries, name)`` gives the symbol
        # entries of the outputs (None: it has no symbolic form)
        self.symbolic = symbolic
        # the backward as recorded NDArray steps (output gradients in, input gradients out), for
        # create_graph; None: the step's gradient cannot be differentiated again
        self.graph_backward = graph_backward
        self.ctx = outputs[0].context
        self.xp = xp_of(self.ctx)
        self.out_shapes = [o.shape for o in outputs]
        self.out_dtypes = [o._data.dtype for o in outputs]
        self.backward = backward
        self.inputs = inputs

    @property
    def num_outputs(self):
        """Outputs of the step."""
        return len(self.out_shapes)

    def run_backward(self, out_grads, need_grad):
        """Gradients of the inputs given the outputs' gradients."""
        return self.backward(out_grads, need_grad)

    def clear(self):
        super().clear()
        self.backward = self.graph_backward = None


def entry_of(array):
    """The (node, index) entry of an NDArray, or None when it is not in a graph."""
    entry = getattr(array, '_ag', None)
    if entry is None or entry[0].cleared:
        return None
    return entry


def in_graph(array):
    """True when ``array`` is in a computational graph (a variable or a recorded output)."""
    return entry_of(array) is not None


def mark_variable(array, grad, grad_req):
    """Make ``array`` a variable whose gradient goes to ``grad`` (an NDArray)."""
    array._ag = (VariableNode(grad, grad_req), 0)


def check_writable(arrays):
    """While recording, refuse writes into arrays already in a graph (MXNet's rule)."""
    if not is_recording():
        return
    for arr in arrays:
        if in_graph(arr):
            raise MXNetError('Assigning to NDArrays that are already in a computational graph will '
                             'cause undefined behavior when evaluating gradients. Please call '
                             'backward first to clear the graph or do this out side of a record '
                             'section. Also note that you cannot use inplace operations like +=, '
                             '*=, relu(x, out=x), y[idx]=x, etc inside a record section.')


def _input_entries(inputs):
    """Entries of the inputs; those outside the graph become constants."""
    entries = []
    for arr in inputs:
        entry = entry_of(arr)
        if entry is None:
            entry = (Node(), 0)
            arr._ag = entry
        entries.append(entry)
    return entries


def _attach_outputs(node, inputs, outputs):
    for arr in outputs:
        if any(arr is x for x in inputs):
            raise MXNetError('Inplace operations (+=, -=, x[:]=, etc) are not supported when '
                             'recording with autograd.')
    for i, arr in enumerate(outputs):
        arr._ag = (node, i)


def needs_recording(inputs):
    """True when a call on ``inputs`` (NDArrays) is to be recorded."""
    return is_recording() and any(in_graph(a) for a in inputs)


def record_op(op, octx, inputs, aux, results, outputs):
    """Record an operator call if recording and some input is in a graph.

    Parameters
    ----------
    op : Operator
    octx : OpContext
        The call's context (kept: forward may have saved state for backward in it).
    inputs, aux : list of NDArray
        The argument and auxiliary-state arrays.
    results : list of xp arrays
        Every output of the call, hidden ones included.
    outputs : list of NDArray
        The NDArrays handed to the caller (the visible outputs).
    """
    if not needs_recording(inputs):
        return
    entries = _input_entries(inputs)
    node = OpNode(op, octx, entries, [a._data for a in inputs], [a._data for a in aux],
                  list(results))
    _attach_outputs(node, list(inputs) + list(aux), outputs)


def record_function(backward, inputs, outputs, symbolic=None, graph_backward=None):
    """Record a Python-defined step (see FunctionNode) from ``inputs`` to ``outputs`` (NDArrays)
    if recording and some input is in a graph."""
    if not needs_recording(inputs):
        return
    entries = _input_entries(inputs)
    node = FunctionNode(backward, entries, outputs, symbolic, graph_backward)
    _attach_outputs(node, inputs, outputs)
