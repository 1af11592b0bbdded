"""``mx.contrib.autograd``: MXNet's earlier autograd API (training sections that record, and
``grad`` / ``grad_and_loss`` function transforms), on mxmod's autograd."""
import functools

from ..autograd import mark_variables  # noqa: F401  (same function in both APIs)
from ..autograd import set_recording, set_training
from ..ndarray import NDArray, zeros_like
from ..ndarray import gradient_pass

__all__ = ['set_is_training', 'TrainingStateScope', 'train_section', 'test_section',
           'mark_variables', 'backward', 'compute_gradient', 'grad_and_loss', 'grad']


def set_is_training(is_train):
    """Turn training mode and recording on or off together; returns the previous state."""
    prev = set_training(is_train)
    set_recording(is_train)
    return prev


class TrainingStateScope(object):
    """Scope with training mode and recording both on (``True``) or off."""

    def __init__(self, enter_state):
        self._enter_state = enter_state
        self._prev = None

    def __enter__(self):
        self._prev = set_is_training(self._enter_state)
        return self

    def __exit__(self, ptype, value, trace):
        if self._prev != self._enter_state:
            set_is_training(self._prev)


def train_section():
    """Scope that records in training mode."""
    return TrainingStateScope(True)


def test_section():
    """Scope that neither records nor trains."""
    return TrainingStateScope(False)


def backward(outputs, out_grads=None, retain_graph=False):
    """Compute the gradients of ``outputs`` (a list of NDArrays) into the marked variables'
    gradient arrays."""
    if not isinstance(outputs, (list, tuple)):
        raise TypeError('outputs must be a list or tuple of NDArrays, got %s'
                        % type(outputs).__name__)
    gradient_pass.backward(list(outputs), None if out_grads is None else list(out_grads),
                           retain_graph=retain_graph)


def compute_gradient(outputs):
    """Deprecated name of ``backward(outputs)``."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """Transform ``func`` into a function returning ``(gradients of the arguments, outputs)``;
    ``argnum`` (int or list) selects the arguments to differentiate."""
    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            variables = [args[i] for i in (argnum if isinstance(argnum, list) else [argnum])]
        for var in variables:
            if not isinstance(var, NDArray):
                raise TypeError('type of autograd input should be NDArray, got %s'
                                % type(var).__name__)
        grads = [zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func, argnum=None):
    """Transform ``func`` into a function returning the gradients of its arguments."""
    with_loss = grad_and_loss(func, argnum)

    @functools.wraps(with_loss)
    def wrapped(*args):
        return with_loss(*args)[0]
    return wrapped
