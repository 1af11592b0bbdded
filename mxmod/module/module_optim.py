"""The optimizer side of Module: choosing the kvstore, creating the optimizer, updating parameters
and saving/loading optimizer states (mixed into :class:`Module`)."""
import warnings

from .. import optimizer as opt
from ..base import MXNetError, write_file_atomic
from .kvstore_helpers import (per_device_lists, _create_kvstore, _initialize_kvstore,
                              _update_params, _update_params_on_kvstore)
from .overlap import GradientExchange
from .overlap_policy import USER_STEPS, backward_may_overlap, in_fit_step
from . import checkpointing

__all__ = ['OptimizerMixin']


class OptimizerMixin(object):
    """init_optimizer / borrow_optimizer / update / optimizer states for Module."""

    _local_update_lists = None      # (param_arrays, grad_arrays, devices, per-device lists)

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False,
                       embedding_cache=None):
        """Create the kvstore (if any) and the optimizer.

        Parameters
        ----------
        kvstore : str or KVStore, default 'local'
            One device with a non-distributed name uses no kvstore at all.
        optimizer : str or Optimizer, default 'sgd'
            A name is created with ``rescale_grad = 1/batch_size`` (unless given), the symbol
            (for ``__lr_mult__``/``__wd_mult__``) and the index -> name table.
        optimizer_params : dict or pairs, default (('learning_rate', 0.01),)
        force_init : bool, default False
        embedding_cache : dict or True, optional
            mxmod: arguments of ``kv.set_embedding_cache`` (True for its defaults), applied once
            the parameters are in the store (a distributed store with server ranks).
        """
        self._require('init_optimizer')
        self._drain_comm()
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring...')
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kv, update_on_kvstore = _create_kvstore(kvstore, len(self._context), self._arg_params)
        batch_size = self._exec_group.batch_size
        if kv and 'dist' in kv.type and '_sync' in kv.type:
            batch_size *= kv.num_workers
        rescale_grad = 1.0 / batch_size
        idx2name = self._idx2name(update_on_kvstore)
        optimizer = self._make_optimizer(optimizer, optimizer_params, rescale_grad, idx2name)
        self._optimizer = optimizer
        self._kvstore = kv
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        self._grad_exchange = None
        if self._preload_opt_states is not None:   # the counters travel with the optimizer
            checkpointing.restore_saved_position(self, self._preload_opt_states)
        if kv:
            if self._compression_params:
                kv.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kv.set_optimizer(self._optimizer)
            _initialize_kvstore(kvstore=kv, param_arrays=self._exec_group.param_arrays,
                                arg_params=self._arg_params, param_names=self._param_names,
                                update_on_kvstore=update_on_kvstore)
        if embedding_cache:
            if not kv or not hasattr(kv, 'set_embedding_cache'):
                raise MXNetError('init_optimizer: embedding_cache needs a distributed kvstore '
                                 'with server ranks (dist_sync, dist_device_sync or dist_async '
                                 'under mxmod.launch -s S), got kvstore=%r' % (kvstore,))
            kv.set_embedding_cache(**({} if embedding_cache is True else dict(embedding_cache)))
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def _idx2name(self, update_on_kvstore):
        """Update index -> parameter name: the name's position, or one index per device."""
        names = self._exec_group.param_names
        if update_on_kvstore:
            return dict(enumerate(names))
        num_ctx = len(self._context)
        return {i * num_ctx + k: name for k in range(num_ctx) for i, name in enumerate(names)}

    def _make_optimizer(self, optimizer, optimizer_params, rescale_grad, idx2name):
        if isinstance(optimizer, str):
            try:
                params = dict(optimizer_params)
            except (TypeError, ValueError):
                raise TypeError('init_optimizer: optimizer_params must be a dict or (name, value) '
                                'pairs, got %r' % (optimizer_params,)) from None
            params.setdefault('rescale_grad', rescale_grad)
            return opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name, **params)
        if not isinstance(optimizer, opt.Optimizer):
            raise TypeError('optimizer must be a name or an Optimizer, got %s'
                            % type(optimizer).__name__)
        if optimizer.rescale_grad != rescale_grad:
            warnings.warn('Optimizer created manually outside Module but rescale_grad is not '
                          'normalized to 1.0/batch_size/num_workers (%s vs. %s). Is this intended?'
                          % (optimizer.rescale_grad, rescale_grad), stacklevel=3)
        if not optimizer.idx2name:
            optimizer.idx2name = idx2name.copy()
        return optimizer

    def borrow_optimizer(self, shared_module):
        """Use the optimizer, kvstore and updater of ``shared_module`` (bucketing)."""
        if not shared_module.optimizer_initialized:
            raise MXNetError('borrow_optimizer: the shared module has no optimizer; call its '
                             'init_optimizer() first')
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self._grad_exchange = None
        self.optimizer_initialized = True

    def update(self):
        """Apply the optimizer to every parameter using the gradients of the last backward."""
        self._require('update', optimizer=True)
        self._params_dirty = True
        self._note_update()
        group = self._exec_group
        if not self._kvstore and not self._update_on_kvstore:
            # the local updater over every device's (index, gradient, weight) lists, as
            # _update_params makes them; made again when a bind or reshape replaces the arrays
            lists = self._local_update_lists
            num_device = len(self._context)
            if lists is None or lists[0] is not group.param_arrays or \
                    lists[1] is not group._grad_arrays or lists[2] != num_device:
                forget = getattr(self._updater, 'forget', None)
                if lists is not None and forget is not None:
                    forget(entry[0] for entry in lists[3])  # the last bind's: not kept alive
                lists = self._local_update_lists = (
                    group.param_arrays, group._grad_arrays, num_device,
                    per_device_lists(group.param_arrays, group._grad_arrays, num_device))
            updater = self._updater
            for indices, grads, weights in lists[3]:
                # the same tuples every step: the updater repeats its checked fused update
                updater(indices, grads, weights)
            return
        exchange = self._exchange()
        if self._update_on_kvstore:
            _update_params_on_kvstore(group.param_arrays, group._grad_arrays, self._kvstore,
                                      group.param_names, exchange=exchange)
        else:
            _update_params(group.param_arrays, group._grad_arrays, updater=self._updater,
                           num_device=len(self._context), kvstore=self._kvstore,
                           param_names=group.param_names, exchange=exchange)

    def _exchange(self):
        """The :class:`GradientExchange` of this module's executor group and kvstore (None
        without a kvstore)."""
        if not self._kvstore or not self.binded or self._exec_group is None:
            return None
        exchange = getattr(self, '_grad_exchange', None)
        if exchange is None or exchange.group is not self._exec_group:
            exchange = self._grad_exchange = GradientExchange(
                self._exec_group, self._kvstore, self._update_on_kvstore,
                self._exec_group.grad_req)
        return exchange

    def _exchange_for_backward(self):
        """The exchange when backward should start the gradient communication, else None (see
        module/overlap.py: fit's steps; a backward the user calls once this module's steps
        have shown it goes straight to update)."""
        if not self.optimizer_initialized or not self._kvstore:
            return None         # (the common one-device case: no environment read per step)
        when = backward_may_overlap()
        if when == 'user' and not self._user_steps_overlap():
            return None
        exchange = self._exchange() if when else None
        if exchange is None or not exchange.overlap:
            return None
        # a user's backward: the new weights reach the parameters only in update
        exchange.defer_pull = when == 'user'
        return exchange

    # ---- the user's own steps (see module/overlap.py) ------------------------------------
    _awaiting_update = False
    _plain_steps = 0

    def _note_forward(self):
        """A forward while a backward still waits for its update: the user's steps are not
        backward-then-update (a second batch's gradients added, input gradients only)."""
        if self._awaiting_update:
            self._plain_steps = None

    def _note_backward(self):
        if self._awaiting_update:
            self._plain_steps = None
        self._awaiting_update = 'fit' if in_fit_step() else 'user'

    def _note_update(self):
        """Count the user's own steps (fit's do not tell how the user's code will go on)."""
        if self._awaiting_update == 'user' and self._plain_steps is not None:
            self._plain_steps += 1
        self._awaiting_update = False

    def _user_steps_overlap(self):
        """Whether a backward the user calls may overlap: this module's steps so far were each
        one backward then one update (at least USER_STEPS of them, nothing in between), and
        no code outside mxmod's modules has read the gradient arrays."""
        group = self._exec_group
        return (self._plain_steps is not None and self._plain_steps >= USER_STEPS
                and group is not None and not group.grads_read)

    def _drain_comm(self):
        """Wait for gradient communication still in flight (raises its error, if any)."""
        kvstore = getattr(self, '_kvstore', None)
        channel = getattr(kvstore, '_mxmod_comm_channel', None) if kvstore else None
        if channel is not None:
            channel.drain()

    def save_optimizer_states(self, fname):
        """Write the optimizer states (from the kvstore or the local updater) to ``fname``."""
        self._require('save_optimizer_states', binded=False, params=False, optimizer=True)
        self._drain_comm()
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            write_file_atomic(fname, self._updater.get_states())

    def load_optimizer_states(self, fname):
        """Read optimizer states written by :meth:`save_optimizer_states` (or by MXNet).

        The states must belong to this network (every key one of its weights, every array the
        shape the optimizer creates for it), else an MXNetError names the parameter. When
        ``fname`` is part of a checkpoint with a manifest, the file is verified against it and
        the optimizer's update counters saved with it are restored.
        """
        self._require('load_optimizer_states', binded=False, params=False, optimizer=True)
        self._drain_comm()
        checkpointing.load_module_states(self, fname)

    def prefetch(self, data_batch, sparse_row_id_fn):
        """Start reading the row_sparse rows ``data_batch`` will need (mxmod: with a kvstore
        whose embedding cache prefetches, ``fit`` calls it for the next batch before computing
        the current one; :meth:`prepare` then completes the reads)."""
        kv = self._kvstore
        if sparse_row_id_fn is None or not kv or not self._update_on_kvstore or \
                not getattr(kv, 'prefetching', False):
            return
        for name, row_id in sparse_row_id_fn(data_batch).items():
            idx = self._exec_group.param_names.index(name)
            if getattr(self._exec_group.param_arrays[idx][0], 'stype', 'default') == 'row_sparse':
                kv.prefetch(name, row_id)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Pull the rows of row_sparse parameters the next batch needs (kvstore updates only)."""
        self._require('prepare', params=False)
        self._drain_comm()
        if sparse_row_id_fn is None:
            return
        if not self._kvstore or not self._update_on_kvstore:
            warnings.warn(UserWarning('Parameters are not updated in the KVStore. '
                                      'No need to call sparse_row_id_fn.'))
            return
        row_ids = sparse_row_id_fn(data_batch)
        if not isinstance(row_ids, dict):
            raise TypeError('sparse_row_id_fn must return a dict of name -> row ids, got %s'
                            % type(row_ids).__name__)
        for name, row_id in row_ids.items():
            idx = self._exec_group.param_names.index(name)
            values = self._exec_group.param_arrays[idx]
            if getattr(values[0], 'stype', 'default') != 'row_sparse':
                warnings.warn(UserWarning("%s.stype is not 'row_sparse'. No need to perform "
                                          "row_sparse_pull." % name))
            else:
                self._kvstore.row_sparse_pull(name, values, row_ids=row_id, priority=-idx)
