"""``mx.autograd``: record imperative NDArray computations and differentiate them, with MXNet
1.9.1's API (``record``, ``pause``, ``train_mode``, ``predict_mode``, ``mark_variables``,
``backward``, ``grad``, ``get_symbol``, ``Function``).

Every mxmod operator class carries its backward, so a recorded ``mx.nd`` call is differentiated
by the same code the symbolic executor runs. ``grad(..., create_graph=True)`` computes the
gradients with recorded operators instead (ndarray/grad_graph.py), so they can be differentiated
again (higher-order gradients)."""
from .base import MXNetError
from .ndarray import NDArray, zeros_like
from .ndarray import gradient_pass, tape
from .ndarray.tape import is_recording, is_training, set_recording, set_training

__all__ = ['set_recording', 'set_training', 'is_recording', 'is_training', 'record', 'pause',
           'train_mode', 'predict_mode', 'mark_variables', 'backward', 'grad', 'get_symbol',
           'Function']


class _RecordingStateScope(object):
    """Sets recording and/or training mode (None: unchanged) inside a ``with`` block."""

    def __init__(self, is_record, train_mode):  # pylint: disable=redefined-outer-name
        self._enter_is_record = is_record
        self._enter_train_mode = train_mode
        self._prev_is_record = None
        self._prev_train_mode = None

    def __enter__(self):
        if self._enter_is_record is not None:
            self._prev_is_record = set_recording(self._enter_is_record)
        if self._enter_train_mode is not None:
            self._prev_train_mode = set_training(self._enter_train_mode)
        return self

    def __exit__(self, ptype, value, trace):
        if self._enter_is_record is not None:
            set_recording(self._prev_is_record)
        if self._enter_train_mode is not None:
            set_training(self._prev_train_mode)


def record(train_mode=True):  # pylint: disable=redefined-outer-name
    """Scope that records operations for gradient computation (``with autograd.record():``).

    Parameters
    ----------
    train_mode : bool
        Run the recorded operators in training mode (Dropout, BatchNorm); the backward should
        use the same mode.
    """
    return _RecordingStateScope(True, train_mode)


def pause(train_mode=False):  # pylint: disable=redefined-outer-name
    """Scope inside a ``record`` block where operations are not recorded."""
    return _RecordingStateScope(False, train_mode)


def train_mode():
    """Scope running operators in training mode without changing recording."""
    return _RecordingStateScope(None, True)


def predict_mode():
    """Scope running operators in inference mode without changing recording."""
    return _RecordingStateScope(None, False)


def _as_list(value, what):
    if isinstance(value, NDArray):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise TypeError('%s must be an NDArray or a list of NDArrays, got %s'
                        % (what, type(value).__name__))
    return list(value)


def mark_variables(variables, gradients, grad_reqs='write'):
    """Make ``variables`` differentiable, their gradients going to ``gradients``.

    Parameters
    ----------
    variables : NDArray or list of NDArray
    gradients : NDArray or list of NDArray
        One gradient array per variable, of its shape.
    grad_reqs : str or list of str
        'write', 'add' or 'null' (one for all, or one per variable).
    """
    variables = _as_list(variables, 'variables')
    gradients = _as_list(gradients, 'gradients')
    if len(variables) != len(gradients):
        raise MXNetError('mark_variables: %d variables but %d gradient arrays'
                         % (len(variables), len(gradients)))
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    if len(reqs) != len(variables):
        raise MXNetError('mark_variables: %d grad_reqs for %d variables'
                         % (len(reqs), len(variables)))
    for var, gradient, req in zip(variables, gradients, reqs):
        if tuple(gradient.shape) != var.shape:
            raise MXNetError('mark_variables: gradient of shape %s for a variable of shape %s'
                             % (tuple(gradient.shape), var.shape))
        tape.mark_variable(var, gradient, req)


def _parse_head(heads, head_grads):
    heads = _as_list(heads, 'heads')
    if head_grads is None:
        return heads, None
    head_grads = [head_grads] if isinstance(head_grads, NDArray) else list(head_grads)
    if len(head_grads) != len(heads):
        raise MXNetError('heads and head_grads must be lists of the same length: %d vs %d'
                         % (len(heads), len(head_grads)))
    return heads, head_grads


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # pylint: disable=redefined-outer-name
    """Compute the gradients of ``heads`` with respect to the marked variables, written into
    their gradient arrays.

    Parameters
    ----------
    heads : NDArray or list of NDArray
    head_grads : NDArray or list of NDArray (entries may be None), optional
        Gradients with respect to the heads (default: ones).
    retain_graph : bool
        Keep the recorded graph to differentiate it again.
    train_mode : bool
    """
    heads, head_grads = _parse_head(heads, head_grads)
    gradient_pass.backward(heads, head_grads, retain_graph=retain_graph, train_mode=train_mode)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):  # pylint: disable=redefined-outer-name
    """Gradients of ``heads`` with respect to ``variables``, returned as new NDArrays (the
    variables' gradient arrays are not touched).

    Parameters
    ----------
    heads : NDArray or list of NDArray
    variables : NDArray or list of NDArray
        Arrays in the recorded graph (variables or recorded results).
    head_grads : NDArray or list of NDArray, optional
    retain_graph : bool, optional
        Keep the graph (default: ``create_graph``).
    create_graph : bool
        Record the gradient computation, so that the returned gradients can be differentiated
        again (higher-order gradients). Operators without a differentiable backward raise when
        their gradient is differentiated.
    train_mode : bool

    Returns
    -------
    list of NDArray
    """
    heads, head_grads = _parse_head(heads, head_grads)
    variables = _as_list(variables, 'variables')
    if not variables:
        raise MXNetError('autograd.grad: variables cannot be an empty list')
    retain_graph = create_graph if retain_graph is None else retain_graph
    grads = gradient_pass.backward(heads, head_grads, variables=variables,
                                   retain_graph=retain_graph, train_mode=train_mode,
                                   create_graph=create_graph)
    if create_graph:
        return [zeros_like(var) if value is None else
                value if tuple(value.shape) == var.shape else value.reshape(var.shape)
                for var, value in zip(variables, grads)]
    out = []
    for var, value in zip(variables, grads):
        zero = zeros_like(var) if value is None else None
        out.append(zero if zero is not None else
                   NDArray(value.reshape(var.shape).astype(var._data.dtype, copy=False),
                           var.context))
    return out


def get_symbol(x):
    """The computation recorded up to ``x`` as a Symbol (variables named ``var<i>``,
    constants ``null<i>``, operators ``node_<i>``)."""
    if not isinstance(x, NDArray):
        raise TypeError('get_symbol: expected an NDArray, got %s' % type(x).__name__)
    from .autograd_symbol import tape_to_symbol  # pylint: disable=import-outside-toplevel
    return tape_to_symbol(x)


class Function(object):
    """A differentiable function with a user-defined backward.

    Subclasses define ``forward(self, *inputs)`` (NDArrays in, NDArray or tuple out; it runs
    unrecorded) and ``backward(self, *output_grads)`` (one gradient per output in, one NDArray
    per input out). ``save_for_backward`` keeps arrays in ``saved_tensors``. An instance is
    called once."""

    def __init__(self):
        self._used = False
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        """Keep ``args`` for backward as ``self.saved_tensors``."""
        self.saved_tensors = args

    def __call__(self, *inputs):
        if self._used:
            raise MXNetError('Each Function instance can only be called once. Please create '
                             'another instance.')
        self._used = True
        prev = set_recording(False)
        try:
            outputs = self.forward(*inputs)
        finally:
            set_recording(prev)
        if prev:
            outs = [outputs] if isinstance(outputs, NDArray) else list(outputs)
            arrays = [a for a in inputs if isinstance(a, NDArray)]
            tape.record_function(self._backward_entry(arrays, outs), arrays, outs)
        return outputs

    def _backward_entry(self, inputs, outputs):
        def run(out_grads, need):
            del need
            grads = [NDArray(g, o.context) for g, o in zip(out_grads, outputs)]
            with pause():
                rets = self.backward(*grads)
            rets = [rets] if isinstance(rets, NDArray) else list(rets)
            if len(rets) != len(inputs):
                raise MXNetError('%s.backward must return exactly the same number of NDArrays as '
                                 'the number of NDArrays arguments to forward. Expecting %d got %d'
                                 % (type(self).__name__, len(inputs), len(rets)))
            for ret in rets:
                if not isinstance(ret, NDArray):
                    raise MXNetError('autograd.Function.backward must return NDArrays, not %s'
                                     % type(ret).__name__)
            return [r._data for r in rets]
        return run

    def forward(self, *inputs):
        """The computation (override)."""
        raise NotImplementedError('%s must define forward' % type(self).__name__)

    def backward(self, *output_grads):
        """The gradients of the inputs given those of the outputs (override)."""
        raise NotImplementedError('%s must define backward' % type(self).__name__)
