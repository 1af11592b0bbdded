"""SequentialModule: modules chained so that each one's outputs are the next one's data."""
import copy
import logging

from ..base import MXNetError
from ..initializer import Uniform
from .base_module import BaseModule

__all__ = ['SequentialModule']


class SequentialModule(BaseModule):
    """A chain of modules run one after the other.

    Parameters
    ----------
    logger : Logger, default logging
    """
    META_TAKE_LABELS = 'take_labels'
    META_AUTO_WIRING = 'auto_wiring'

    def __init__(self, logger=logging):
        super(SequentialModule, self).__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {SequentialModule.META_TAKE_LABELS, SequentialModule.META_AUTO_WIRING}

    def add(self, module, **kwargs):
        """Append ``module``; options ``take_labels=True`` (feed it the labels) and
        ``auto_wiring=True`` (rename the previous outputs to its data names). Returns self."""
        for key in kwargs:
            if key not in self._meta_keys:
                raise ValueError('Unknown meta "%s", a typo? Known: %s'
                                 % (key, sorted(self._meta_keys)))
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = False
        self.params_initialized = False
        self.optimizer_initialized = False
        return self

    def _takes_labels(self, i):
        return bool(self._metas[i].get(SequentialModule.META_TAKE_LABELS, False))

    @property
    def data_names(self):
        """Data names of the first module."""
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        """Output names of the last module."""
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        """Data shapes of the first module."""
        self._require('data_shapes', params=False)
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        """Label shapes (None when no module takes labels)."""
        self._require('label_shapes', params=False)
        return self._label_shapes

    @property
    def output_shapes(self):
        """Output shapes of the last module."""
        self._require('output_shapes', params=False)
        return self._modules[-1].output_shapes

    def get_params(self):
        """Union of the modules' parameters."""
        self._require('get_params')
        arg_params, aux_params = {}, {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return (arg_params, aux_params)

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize every module; parameter names must be unique across modules.

        Each module receives the whole ``arg_params``/``aux_params`` and takes its own names
        out of them (the others are extra to it), with ``allow_extra`` passed on as given.
        """
        if self.params_initialized and not force_init:
            return
        self._require('init_params', params=False)
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=allow_extra)
        owners = ({}, {})
        for i, module in enumerate(self._modules):
            for known, names in zip(owners, module.get_params()):
                for name in names:
                    if name in known:
                        raise MXNetError('Duplicated parameter names: name "%s" in layer %d (%s) '
                                         'is already used in layer %d (%s).'
                                         % (name, i, type(module), known[name],
                                            type(self._modules[known[name]])))
                    known[name] = i
        self.params_initialized = True

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind each module on the previous one's output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if inputs_need_grad and not for_training:
            raise MXNetError('inputs_need_grad=True requires for_training=True')
        if shared_module is not None:
            raise MXNetError('Shared module is not supported by SequentialModule')
        if not self._modules:
            raise MXNetError('Attempting to bind an empty SequentialModule; add() modules first')
        self._label_shapes = label_shapes
        shapes = data_shapes
        for i, module in enumerate(self._modules):
            if self._metas[i].get(SequentialModule.META_AUTO_WIRING, False):
                if len(module.data_names) != len(shapes):
                    raise MXNetError('auto_wiring: layer %d has data names %s but receives %d '
                                     'inputs' % (i, module.data_names, len(shapes)))
                shapes = [(name, shape) for name, (_, shape) in zip(module.data_names, shapes)]
            module.bind(data_shapes=shapes,
                        label_shapes=label_shapes if self._takes_labels(i) else None,
                        for_training=for_training,
                        inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            shapes = module.output_shapes
        if not any(self._takes_labels(i) for i in range(len(self._modules))):
            self._label_shapes = None
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.binded = True

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Initialize the optimizer of every module."""
        self._require('init_optimizer')
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring.')
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None):
        """Forward through the chain, each module's outputs becoming the next one's data."""
        self._require('forward')
        data_batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(data_batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            data_batch.data = module.get_outputs()
            if hasattr(data_batch, 'provide_data'):
                names = [x[0] for x in module.output_shapes]
                data_batch.provide_data = [(name, x.shape) for name, x in
                                           zip(names, data_batch.data)]

    def backward(self, out_grads=None):
        """Backward from the last module to the first, passing input gradients down."""
        self._require('backward')
        for i in reversed(range(len(self._modules))):
            self._modules[i].backward(out_grads=out_grads)
            if i > 0:
                out_grads = self._modules[i].get_input_grads()

    def update(self):
        """Update every module."""
        self._require('update', optimizer=True)
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        """Outputs of the last module."""
        self._require('get_outputs')
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Input gradients of the first module."""
        self._require('get_input_grads')
        if not self.inputs_need_grad:
            raise MXNetError('get_input_grads: bind with inputs_need_grad=True')
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with every module that takes labels."""
        self._require('update_metric')
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install ``mon`` on every module."""
        self._require('install_monitor', params=False)
        for module in self._modules:
            module.install_monitor(mon)
