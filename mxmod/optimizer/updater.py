"""The Updater: applies an optimizer to (index, grad, weight) triples and owns the states.

This is what KVStore and Module call for each update; it creates states lazily, groups updates by
dtype in chunks of ``optimizer.aggregate_num`` (MXNet's aggregated SGD), and saves/loads its
states in MXNet's pickle format (see :mod:`.pickling`)."""
import numpy as np

from ..base import MXNetError
from ..context import device_scope
from ..ndarray.ndarray import NDArray
from ..profiler.hooks import traced
from . import fused
from .pickling import dumps, load_states
from .state_keys import alias_key, copy_state

__all__ = ['Updater', 'get_updater']


# Repeats kept per updater: one per device and per module sharing it (BucketingModule's buckets)
_MAX_REPEATS = 64


class Updater(object):
    """Apply ``optimizer`` to weights, keeping one state per index.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer to apply.
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0
        # fused.Repeat of recent fused calls with tuple arguments, by id of the index tuple
        # (one per module sharing this updater, as BucketingModule's buckets do)
        self._repeats = {}

    @traced('Optimizer', lambda updater: type(updater.optimizer).__name__ + '.update')
    def __call__(self, index, grad, weight):
        """Update ``weight`` in place from ``grad``.

        Parameters
        ----------
        index : int, str or list
            Key(s) of the weight(s); bytes keys are decoded.
        grad : NDArray or list of NDArray
        weight : NDArray or list of NDArray
        """
        repeat = self._repeats.get(id(index))
        if repeat is not None and index is repeat.index and grad is repeat.grad and \
                weight is repeat.weight and repeat.holds():
            repeat.run()
            return
        given = (index, grad, weight)
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
        else:
            indices, grads, weights = [index], [grad], [weight]
        if len(indices) != len(grads) or len(indices) != len(weights):
            raise ValueError('Updater: %d indices, %d gradients and %d weights; expected as many '
                             'of each' % (len(indices), len(grads), len(weights)))
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)  # pylint: disable=protected-access
        synced = self.states_synced
        # plain: every weight and gradient a dense NDArray, the weights on one host context
        # with one dtype (the aggregated update then needs no grouping)
        first = weights[0] if weights else None
        plain = type(first) is NDArray and first._ctx.device_typeid != 2
        if plain:
            ctx, dtype = first._ctx, first._data.dtype
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                idx = indices[i] = idx.decode('utf-8')
            grad, weight = grads[i], weights[i]
            if type(grad) is not NDArray or type(weight) is not NDArray:
                _check_pair(idx, grad, weight)
                plain = False
            else:
                gdata, wdata = grad._data, weight._data
                if gdata.shape != wdata.shape or gdata.dtype != wdata.dtype:
                    _check_pair(idx, grad, weight)
                if plain and (wdata.dtype != dtype or
                              (weight._ctx is not ctx and weight._ctx != ctx)):
                    plain = False
            if synced.get(idx) is not True:
                self._ensure_state(idx, weight)
        if self.aggregate_updates:
            if plain and fused.sgd_applies(self.optimizer, first) and \
                    fused.sgd_update(self, indices, weights, grads, self.optimizer.aggregate_num):
                repeat = fused.Repeat.make(self, *given, device_id=first._ctx.device_id)
                if repeat is not None:
                    if len(self._repeats) >= _MAX_REPEATS:   # the oldest goes
                        del self._repeats[next(iter(self._repeats))]
                    self._repeats[id(index)] = repeat
                return
            self._aggregated(indices, weights, grads, plain)
        else:
            for idx, w, g in zip(indices, weights, grads):
                with device_scope(w.context):
                    self.optimizer.update_multi_precision(idx, w, g, self.states[idx])

    def forget(self, index_tuples):
        """Drop the repeated updates kept for these index tuples (their caller made new ones:
        a module bound again), and with them the arrays they hold."""
        for index in index_tuples:
            repeat = self._repeats.get(id(index))
            if repeat is not None and repeat.index is index:
                del self._repeats[id(index)]

    def _ensure_state(self, idx, weight):
        if idx not in self.states:
            alias = alias_key(self.states, idx, self.optimizer.idx2name)
            with device_scope(weight.context):
                if alias is not None:   # loaded from a checkpoint with the other key layout
                    self.states[idx] = copy_state(self.states[alias], weight.context)
                else:
                    self.states[idx] = self.optimizer.create_state_multi_precision(idx, weight)
            self.states_synced[idx] = True
        elif not self.states_synced[idx]:
            self.states[idx] = self.sync_state_context(self.states[idx], weight.context)
            self.states_synced[idx] = True

    def _aggregated(self, indices, weights, grads, plain=False):
        size = self.optimizer.aggregate_num
        if plain:
            # one group (the common case): its chunks, without the grouping
            states = self.states
            update = self.optimizer.update_multi_precision
            for start in range(0, len(indices), size):
                idx = indices[start:start + size]
                update(idx, weights[start:start + size], grads[start:start + size],
                       [states[i] for i in idx])
            return
        by_dtype = {}
        for entry in zip(indices, weights, grads):
            by_dtype.setdefault((entry[1].context, entry[1].dtype), []).append(entry)
        for (ctx, _), entries in by_dtype.items():
            for start in range(0, len(entries), size):
                chunk = entries[start:start + size]
                idx, ws, gs = zip(*chunk)
                with device_scope(ctx):
                    self.optimizer.update_multi_precision(list(idx), list(ws), list(gs),
                                                          [self.states[i] for i in idx])

    def sync_state_context(self, state, context):
        """Return ``state`` with every NDArray in it moved to ``context``.

        Parameters
        ----------
        state : NDArray, tuple, list or None
        context : Context
        """
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states, source=None):
        """Load states pickled by :meth:`get_states` (by mxmod or MXNet).

        Only the classes such pickles contain can be created; anything else (and any damaged
        pickle) raises an MXNetError before the current states are touched.

        Parameters
        ----------
        states : bytes
            A pickled states dict, or a pickled ``(states, optimizer)`` pair.
        source : str, optional
            Where the bytes came from (a file name), for error messages.
        """
        states, optimizer = load_states(states, source)
        self.states = states
        if optimizer is not None:
            self.optimizer = optimizer
        # MXNet keeps the old flag here (and loops forever when the loaded optimizer does not
        # aggregate); follow the optimizer actually loaded instead.
        self.aggregate_updates = self.optimizer.aggregate_num > 0
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer=False):
        """Pickle the states (and the optimizer when ``dump_optimizer``) in MXNet's format.

        Parameters
        ----------
        dump_optimizer : bool, optional
            Also save the optimizer (learning rate, schedule, update counts...).

        Returns
        -------
        bytes
        """
        return dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def _check_pair(idx, grad, weight):
    """Raise MXNetError unless ``grad`` has the shape and dtype of ``weight``."""
    if grad.shape != weight.shape:
        raise MXNetError('Updater: the gradient of %r has shape %s, its weight %s'
                         % (idx, grad.shape, weight.shape))
    if grad.dtype != weight.dtype:
        raise MXNetError('Updater: the gradient of %r is %s, its weight %s; MXNet does '
                         'not cast: give both one dtype'
                         % (idx, np.dtype(grad.dtype).name, np.dtype(weight.dtype).name))


def get_updater(optimizer):
    """Return an :class:`Updater` for ``optimizer`` (what a KVStore calls to update).

    Parameters
    ----------
    optimizer : Optimizer

    Returns
    -------
    Updater
    """
    return Updater(optimizer)
