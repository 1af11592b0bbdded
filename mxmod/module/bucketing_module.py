"""BucketingModule: one Module per bucket key (e.g. sequence length), all sharing the parameters,
gradients and optimizer of the default bucket's module."""
import logging
import warnings

from .. import context as ctx
from ..argcheck import context_list
from ..base import MXNetError
from ..executor import inference_cache
from ..executor.bind import paused_gc
from ..initializer import Uniform
from ..name import NameManager
from .base_module import BaseModule, _check_input_names
from .module import Module

__all__ = ['BucketingModule']


class BucketingModule(BaseModule):
    """A module that switches between symbols generated per bucket key.

    Parameters
    ----------
    sym_gen : callable
        ``sym_gen(bucket_key) -> (symbol, data_names, label_names)``.
    default_bucket_key : hashable
        Key of the default bucket; it should be the largest one (its memory is shared).
    logger : Logger, default logging
    context, work_load_list, fixed_param_names, state_names, group2ctxs, compression_params :
        As for :class:`Module`, used by every bucket.
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging,
                 context=ctx.cpu(), work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super(BucketingModule, self).__init__(logger=logger)
        if default_bucket_key is None:
            raise ValueError('BucketingModule needs default_bucket_key')
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, list(data_names or []), 'data', True)
        _check_input_names(symbol, list(label_names or []), 'label', False)
        _check_input_names(symbol, state_names, 'state', True)
        _check_input_names(symbol, fixed_param_names, 'fixed_param', True)
        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        context_list(context, 'BucketingModule: context')
        self._context = context
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._inference = inference_cache.InferenceCache()    # shared by the buckets' binds
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _reset_bind(self):
        self.binded = False
        self._inference = inference_cache.InferenceCache()
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _call_sym_gen(self, *args, **kwargs):
        """Call sym_gen in a fresh NameManager so automatic names are the same for every bucket."""
        with NameManager():
            return self._sym_gen(*args, **kwargs)

    def _new_module(self, bucket_key):
        symbol, data_names, label_names = self._call_sym_gen(bucket_key)
        return Module(symbol, data_names, label_names, logger=self.logger, context=self._context,
                      work_load_list=self._work_load_list,
                      fixed_param_names=self._fixed_param_names, state_names=self._state_names,
                      group2ctxs=self._group2ctxs, compression_params=self._compression_params)

    # ---- names and shapes ---------------------------------------------------------------
    @property
    def data_names(self):
        """Data names of the current bucket (of the default bucket before binding)."""
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self):
        """Output names of the current bucket (of the default bucket before binding)."""
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        """Data shapes of the current bucket."""
        self._require('data_shapes', params=False)
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        """Label shapes of the current bucket."""
        self._require('label_shapes', params=False)
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        """Output shapes of the current bucket."""
        self._require('output_shapes', params=False)
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        """The current bucket's symbol."""
        self._require('symbol', params=False)
        return self._curr_module.symbol

    # ---- parameters -----------------------------------------------------------------------
    def get_params(self):
        """Parameters (shared by every bucket) on CPU."""
        self._require('get_params', binded=False)
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter values (see :meth:`Module.set_params`)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init)
            return
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. '
                          'set_params call ignored.', stacklevel=2)
            return
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                     force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the parameters through the current bucket (silently once only)."""
        if self.params_initialized and not force_init:
            return
        self._require('init_params', params=False)
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        """States of the current bucket."""
        self._require('get_states')
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the states of the current bucket."""
        self._require('set_states')
        self._curr_module.set_states(states, value)

    # ---- binding and buckets ------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind the default bucket (parameters already set are kept across a re-bind)."""
        params = self.get_params() if self.params_initialized else None
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if shared_module is not None:
            raise MXNetError('shared_module for BucketingModule is not supported')
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        module = self._buckets.get(self._default_bucket_key)
        if module is None:
            module = self._new_module(self._default_bucket_key)
        with inference_cache.active(self._inference):
            module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                        force_rebind=False, shared_module=None, grad_req=self._grad_req)
        self.binded = True
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if params is not None:
            self.set_params(*params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key`` current, creating and binding its module (sharing the default
        bucket's memory, optimizer and grad_req) the first time."""
        self._require('switch_bucket', params=False)
        module = self._buckets.get(bucket_key)
        if module is None:
            with paused_gc():
                module = self._new_module(bucket_key)
                self._bind_shared(module, data_shapes, label_shapes)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        elif not module.binded:
            with paused_gc():
                self._bind_shared(module, data_shapes, label_shapes)
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    def _bind_shared(self, module, data_shapes, label_shapes):
        with inference_cache.active(self._inference):
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=self._buckets[self._default_bucket_key],
                        grad_req=self._grad_req)

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Create the optimizer on the current bucket; every other bucket borrows it."""
        self._require('init_optimizer')
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring.')
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for mod in self._buckets.values():
            if mod is not self._curr_module:
                mod.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    # ---- computation ------------------------------------------------------------------------
    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare the batch's bucket, then switch back to the current one."""
        self._require('prepare')
        original = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch, is_train=None):
        """Switch to ``data_batch.bucket_key`` (using its provide_data/provide_label), forward."""
        self._require('forward')
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        """Backward on the current bucket."""
        self._require('backward')
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        """Update the shared parameters."""
        self._require('update', optimizer=True)
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        """Outputs of the current bucket."""
        self._require('get_outputs')
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Input gradients of the current bucket."""
        self._require('get_input_grads')
        if not self.inputs_need_grad:
            raise MXNetError('get_input_grads: bind the module with inputs_need_grad=True')
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the current bucket's outputs."""
        self._require('update_metric')
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install ``mon`` on every bucket, including buckets created later."""
        self._require('install_monitor', params=False)
        self._monitor = mon
        for mod in self._buckets.values():
            mod.install_monitor(mon)

    # ---- checkpoints ----------------------------------------------------------------------------
    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Write ``prefix-%04d.params``, one ``prefix-<key>-symbol.json`` per bucket and the
        int32 list of bucket keys ``prefix.buckets``, as one save with a manifest (see
        :mod:`mxmod.checkpoint`)."""
        if not self._buckets:
            raise MXNetError('Empty BucketingModule cannot be saved; bind it first')
        from .checkpointing import save_bucketing_checkpoint  # pylint: disable=import-outside-toplevel
        save_bucketing_checkpoint(self, prefix, epoch, remove_amp_cast)

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """Create a BucketingModule from files written by :meth:`save_checkpoint` (verified
        against the checkpoint's manifest when there is one)."""
        if sym_gen is None or default_bucket_key is None:
            raise ValueError('BucketingModule.load needs sym_gen and default_bucket_key')
        from .checkpointing import load_bucketing_files  # pylint: disable=import-outside-toplevel
        sym_dict, arg_params, aux_params = load_bucketing_files(prefix, epoch)
        return BucketingModule._from_symbols(sym_dict, sym_gen, default_bucket_key, arg_params,
                                             aux_params, per_key_names=True, **kwargs)

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None,
                  aux_params=None, **kwargs):
        """Create a BucketingModule from a dict of bucket key -> Symbol and parameter dicts."""
        for name, value in (('sym_dict', sym_dict), ('arg_params', arg_params),
                            ('aux_params', aux_params), ('default_bucket_key', default_bucket_key)):
            if value is None:
                raise ValueError('%s needs to be provided for BucketingModule.load_dict' % name)
        return BucketingModule._from_symbols(sym_dict, sym_gen, default_bucket_key, arg_params,
                                             aux_params, per_key_names=False, **kwargs)

    @staticmethod
    def _from_symbols(sym_dict, sym_gen, default_bucket_key, arg_params, aux_params,
                      per_key_names, **kwargs):
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key, symbol in sym_dict.items():
            _, data_names, label_names = sym_gen(key if per_key_names else default_bucket_key)
            mod._buckets[key] = Module(symbol, data_names, label_names, **kwargs)
        if default_bucket_key not in mod._buckets:
            raise MXNetError('default bucket %r is not among the loaded buckets %s'
                             % (default_bucket_key, sorted(mod._buckets)))
        mod._curr_module = mod._buckets[default_bucket_key]
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod
