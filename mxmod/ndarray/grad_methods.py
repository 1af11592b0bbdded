"""NDArray's autograd methods (``attach_grad``, ``grad``, ``backward``, ``detach``) and the
recording of NDArray methods that are not operator calls (indexing, ``copyto``)."""
from ..base import MXNetError
from ..context import device_scope, xp_of
from . import gradient_pass, tape
from .ndarray import NDArray, from_xp

__all__ = ['attach_grad', 'backward', 'detach', 'record_getitem', 'record_copy',
           'check_assignment']


def attach_grad(self, grad_req='write', stype=None):
    """Allocate a zero gradient array for this array and make it a variable of autograd: after
    ``backward`` its ``.grad`` holds the gradient (``grad_req`` 'write' replaces it, 'add'
    accumulates, 'null' leaves it alone).

    Parameters
    ----------
    grad_req : {'write', 'add', 'null'}
    stype : str, optional
        Storage type of the gradient array (default: this array's).
    """
    from ..sparse_storage import empty_storage, stype_of  # pylint: disable=import-outside-toplevel
    with device_scope(self._ctx):
        # the gradient has this array's storage type unless told otherwise, as in MXNet
        grad = from_xp(empty_storage(xp_of(self._ctx), stype or stype_of(self._data),
                                     self.shape, self._data.dtype), self._ctx)
    tape.mark_variable(self, grad, grad_req)


def _grad(self):
    """The gradient array attached by ``attach_grad`` (or ``mark_variables``), else None."""
    entry = getattr(self, '_ag', None)
    if entry is None or entry[0].kind != 'variable':
        return None
    return entry[0].grad


def _get_fresh_grad(self):
    """Whether ``backward`` has written this variable's gradient since the flag was last reset
    (``x._fresh_grad = False``, as an optimizer does after consuming it). False for arrays that
    are no autograd variables."""
    entry = getattr(self, '_ag', None)
    return bool(entry is not None and entry[0].kind == 'variable' and entry[0].fresh)


def _set_fresh_grad(self, state):
    entry = getattr(self, '_ag', None)
    if entry is None:
        raise MXNetError('NDArray has not been marked as a variable and does not have gradient '
                         'state')
    if entry[0].kind == 'variable':
        entry[0].fresh = bool(state)


def backward(self, out_grad=None, retain_graph=False, train_mode=True):
    """Compute the gradients of this array with respect to the variables it was recorded from.

    Parameters
    ----------
    out_grad : NDArray, optional
        Gradient with respect to this array (default: ones).
    retain_graph : bool
        Keep the recorded graph, to differentiate it again.
    train_mode : bool
        Whether the backward pass runs in training mode.
    """
    gradient_pass.backward([self], None if out_grad is None else [out_grad],
                           retain_graph=retain_graph, train_mode=train_mode)


def detach(self):
    """This array's values (shared memory) outside any computational graph."""
    return from_xp(self._data, self._ctx)


def record_getitem(source, key, result):
    """Record ``result = source[key]``: the gradient scatters back into the indexed places."""
    in_shape, in_dtype, ctx = source.shape, source._data.dtype, source.context

    def scatter_xp(grad_out):
        xp = xp_of(ctx)
        grad = xp.zeros(in_shape, dtype=in_dtype)
        view_shape = grad[key].shape
        xp.add.at(grad, key, grad_out.reshape(view_shape))
        return grad

    def scatter(out_grads, need):
        del need
        return [scatter_xp(out_grads[0])]

    def scatter_recorded(grad_out):
        # the scatter as a recorded linear step whose own gradient is this indexing again
        from .grad_graph import linear_step  # pylint: disable=import-outside-toplevel
        return linear_step(grad_out, scatter_xp(grad_out._data), ctx,
                           lambda g: g[key].reshape(grad_out.shape))

    from ..autograd_symbol import getitem_symbolic  # pylint: disable=import-outside-toplevel
    tape.record_function(scatter, [source], [result],
                         getitem_symbolic(key, in_shape, result.shape),
                         graph_backward=lambda dys: [scatter_recorded(dys[0])])


def record_copy(source, result):
    """Record a copy of ``source`` (to another context): the gradient copies back."""
    def copy_back(out_grads, need):
        del need
        with device_scope(source.context):
            return [from_xp(out_grads[0], result.context).copyto(source.context)._data]
    from ..autograd_symbol import copy_symbolic  # pylint: disable=import-outside-toplevel
    tape.record_function(copy_back, [source], [result], copy_symbolic,
                         graph_backward=lambda dys: [dys[0].copyto(source.context)])


def check_assignment(target, value):
    """While recording, refuse an in-place write of ``value`` into ``target`` (MXNet's rule)."""
    if not tape.is_recording():
        return
    tape.check_writable([target])
    if isinstance(value, NDArray) and tape.in_graph(value):
        raise MXNetError('Inplace operations (+=, -=, x[:]=, etc) are not supported when '
                         'recording with autograd.')


NDArray.attach_grad = attach_grad
NDArray.grad = property(_grad)
NDArray._fresh_grad = property(_get_fresh_grad, _set_fresh_grad)
NDArray.backward = backward
NDArray.detach = detach
