"""Optimizer updates with sparse weights, gradients or states (MXNet's ``lazy_update``).

Every mxmod optimizer's ``update`` / ``update_multi_precision`` is wrapped (see
:meth:`Optimizer.__init_subclass__`): with dense arguments nothing changes. With a row_sparse
gradient and a *lazy* update (SGD and Adam with ``lazy_update=True``, AdaGrad always, Ftrl when the
weight is row_sparse too, as MXNet's sparse update operators do) the optimizer's own dense update
runs on just the gradient's rows of the weight and of every state, which are then written back:
rows the batch did not touch keep their weight, momentum and moments, and the cost grows with the
touched rows, not the table. Otherwise the gradient is made dense and the update covers every row
(MXNet's standard update / storage fallback). Row_sparse weights and states are updated in their
full-row storage (a row_sparse state starts empty and gets every row on its first update, as in
MXNet); CSR ones go through a dense copy."""
import functools

from ..ndarray.ndarray import NDArray, from_xp
from ..sparse_storage import rsp_from_dense, to_dense

__all__ = ['sparse_aware', 'lazy_rows_wanted']


def lazy_rows_wanted(optimizer, weight, grad):
    """Whether ``optimizer`` updates only the rows of a row_sparse ``grad``."""
    if grad.stype != 'row_sparse':
        return False
    rule = getattr(optimizer, 'sparse_update_rule', None)
    if rule == 'lazy_update':
        return bool(getattr(optimizer, 'lazy_update', True))
    if rule == 'always':
        return True
    if rule == 'row_sparse_weight':
        return weight.stype == 'row_sparse'
    return False


def _leaves(state):
    """The NDArrays of a (nested) state in a fixed order."""
    if isinstance(state, NDArray):
        return [state]
    if isinstance(state, (list, tuple)):
        return [leaf for part in state for leaf in _leaves(part)]
    return []


def _rebuild(state, leaves):
    """``state`` with its NDArrays replaced, in order, by ``leaves`` (an iterator)."""
    if isinstance(state, NDArray):
        return next(leaves)
    if isinstance(state, (list, tuple)):
        return type(state)(_rebuild(part, leaves) for part in state)
    return state


def _any_sparse(arrays):
    return any(isinstance(a, NDArray) and a.stype != 'default' for a in arrays)


def _plainly_dense(weights, grads, states):
    """True when every weight and gradient is a plain NDArray (whose storage is dense) and every
    state None or a plain NDArray: a quick answer for the common case; False means only that
    :func:`_any_sparse` must look."""
    for arr in weights:
        if type(arr) is not NDArray:
            return False
    for arr in grads:
        if type(arr) is not NDArray:
            return False
    for arr in states:
        if arr is not None and type(arr) is not NDArray:
            return False
    return True


class _DenseView(object):
    """A dense NDArray standing for ``arr``: the array itself, the full-row values of a
    row_sparse array (written in place), or a copy of a CSR array written back by ``finish``."""

    def __init__(self, arr):
        self.arr = arr
        if arr.stype == 'default':
            self.view = arr
        elif arr.stype == 'row_sparse':
            storage = arr._data
            if not storage.is_full:
                storage.assign(rsp_from_dense(to_dense(storage), keep_all=True))
            self.view = from_xp(storage.data, arr.context)
        else:
            self.view = from_xp(to_dense(arr._data), arr.context)

    def finish(self):
        if self.arr.stype == 'csr':
            self.arr._set(self.view._data)


def _update_rows(fn, optimizer, index, weight, grad, state):
    """Run the dense update ``fn`` on the gradient's rows only and write the rows back."""
    rows, values = grad._data.indices, grad._data.data
    views = [_DenseView(a) for a in [weight] + _leaves(state)]
    subs = [from_xp(v.view._data[rows], v.view.context) for v in views]
    fn(optimizer, index, subs[0], from_xp(values, grad.context), _rebuild(state, iter(subs[1:])))
    for view, sub in zip(views, subs):
        view.view._data[rows] = sub._data
        view.finish()


def _update_dense(fn, optimizer, index, weight, grad, state):
    """Run the dense update ``fn`` on dense stand-ins of every argument."""
    views = [_DenseView(a) for a in [weight] + _leaves(state)]
    dense_grad = grad if grad.stype == 'default' else from_xp(to_dense(grad._data), grad.context)
    fn(optimizer, index, views[0].view, dense_grad,
       _rebuild(state, iter(v.view for v in views[1:])))
    for view in views:
        view.finish()


def sparse_aware(fn):
    """Wrap an optimizer's ``update`` / ``update_multi_precision`` for sparse arguments."""
    @functools.wraps(fn)
    def update(self, index, weight, grad, state):
        if isinstance(index, (list, tuple)):
            if _plainly_dense(weight, grad, state) or \
                    not _any_sparse(list(weight) + list(grad) + _leaves(list(state))):
                return fn(self, index, weight, grad, state)
            for i, w, g, s in zip(index, weight, grad, state):
                update(self, i, w, g, s)
            return None
        if not _any_sparse([weight, grad] + _leaves(state)):
            return fn(self, index, weight, grad, state)
        if lazy_rows_wanted(self, weight, grad):
            return _update_rows(fn, self, index, weight, grad, state)
        return _update_dense(fn, self, index, weight, grad, state)
    update.sparse_aware = True
    return update
