"""Module: a Symbol bound to one or more devices, with its parameters, optimizer and kvstore."""
import logging
import warnings

from .. import context as ctx
from ..argcheck import context_list
from ..symbol.var_names import check_bindable
from ..base import MXNetError
from ..io import DataDesc
from ..ndarray import zeros
from .base_module import BaseModule, _check_input_names, _parse_data_desc
from .executor_group import DataParallelExecutorGroup
from .module_optim import OptimizerMixin
from .module_params import ParamsMixin
from . import checkpointing
from . import param_checks

__all__ = ['Module']


def _batch_data_shapes(data_batch):
    """Shapes of the batch's data; a list of per-device batches counts as their concatenation."""
    if not isinstance(data_batch, list):
        return tuple(d.shape for d in data_batch.data)
    if not data_batch:
        raise MXNetError('forward got an empty list of data batches')
    shapes = []
    for i, first in enumerate(data_batch[0].data):
        if any(db.data[i].shape != first.shape for db in data_batch):
            raise MXNetError('All data batches in a list need to have the same shape; input %d '
                             'has shapes %s' % (i, [db.data[i].shape for db in data_batch]))
        shapes.append((len(data_batch) * first.shape[0],) + tuple(first.shape[1:]))
    return tuple(shapes)


class Module(ParamsMixin, OptimizerMixin, BaseModule):
    """A module over one Symbol, data-parallel over ``context``.

    Parameters
    ----------
    symbol : Symbol
    data_names : list of str, default ('data',)
    label_names : list of str or None, default ('softmax_label',)
    logger : Logger, default logging
    context : Context or list of Context, default cpu()
    work_load_list : list of number, optional
        Relative batch share per context (default equal).
    fixed_param_names : list of str, optional
        Parameters that are not updated.
    state_names : list of str, optional
        Inputs that are states (e.g. RNN begin states), set with :meth:`set_states`.
    group2ctxs : dict or list, optional
        ctx_group -> Context mapping for model parallelism.
    compression_params : dict, optional
        Gradient compression for the kvstore, e.g. ``{'type': '2bit', 'threshold': 0.5}``.
    """
    # (data descriptors, their shapes) and (label descriptors, labels read but not bound): what
    # forward and backward check on every call, recomputed when a bind or reshape replaces them
    _bound_shapes = None
    _labels_missing = None

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=ctx.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        super(Module, self).__init__(logger=logger)
        self._context = context_list(context, 'Module: context')
        work_load_list = [1] * len(self._context) if work_load_list is None else work_load_list
        if len(work_load_list) != len(self._context):
            raise ValueError('work_load_list has %d entries for %d contexts'
                             % (len(work_load_list), len(self._context)))
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        check_bindable(symbol, 'Module')
        self._symbol = symbol
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, 'data', True)
        _check_input_names(symbol, label_names, 'label', False)
        _check_input_names(symbol, state_names, 'state', True)
        _check_input_names(symbol, fixed_param_names, 'fixed_param', True)
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in symbol.list_arguments() if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()
        self._arg_params = None
        self._aux_params = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # ---- checkpoints ----------------------------------------------------------------
    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """Create a Module from ``prefix-symbol.json`` and ``prefix-%04d.params``.

        The files are checked against the checkpoint's manifest (when mxmod wrote it), so a set
        torn by an interrupted save raises :class:`mxmod.checkpoint.TornCheckpointError`. The
        parameters are set when the module is bound; with ``load_optimizer_states`` the
        ``prefix-%04d.states`` file (checked now) is loaded by ``init_optimizer``, together with
        the optimizer's update counters, so that ``fit(begin_epoch=epoch)`` resumes exactly (see
        :mod:`mxmod.module.checkpointing` for what else a resumed run needs). ``kwargs`` go to
        Module.
        """
        return checkpointing.load_module_checkpoint(Module, prefix, epoch, load_optimizer_states,
                                                    kwargs)

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and optionally ``.states``.

        The files are written as one save with ``prefix-%04d.manifest.json`` (their sizes and
        hashes, and the optimizer's update counters for an exact resume); MXNet ignores the
        manifest and loads the other files as its own.
        """
        checkpointing.save_module_checkpoint(self, prefix, epoch, save_optimizer_states,
                                             remove_amp_cast)
        logging.info('Saved checkpoint to "%s-%04d.params"', prefix, epoch)
        if save_optimizer_states:
            logging.info('Saved optimizer state to "%s-%04d.states"', prefix, epoch)

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._grad_exchange = None
        self._data_shapes = None
        self._label_shapes = None

    # ---- names and shapes ------------------------------------------------------------
    @property
    def data_names(self):
        """Names of the data inputs."""
        return self._data_names

    @property
    def label_names(self):
        """Names of the labels."""
        return self._label_names

    @property
    def output_names(self):
        """Names of the outputs."""
        return self._output_names

    @property
    def data_shapes(self):
        """DataDesc of the bound data inputs."""
        self._require('data_shapes', params=False)
        return self._data_shapes

    @property
    def label_shapes(self):
        """DataDesc of the bound labels (None without labels)."""
        self._require('label_shapes', params=False)
        return self._label_shapes

    @property
    def output_shapes(self):
        """(name, shape) of the outputs at the bound batch size."""
        self._require('output_shapes', params=False)
        return self._exec_group.get_output_shapes()

    # ---- binding ---------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind executors on the contexts for the given input shapes.

        Parameters
        ----------
        data_shapes, label_shapes : list of DataDesc or (name, shape)
        for_training : bool, default True
        inputs_need_grad : bool, default False
        force_rebind : bool, default False
        shared_module : Module, optional
            A bound, initialized module whose parameters and memory are shared (bucketing).
        grad_req : str, list or dict, default 'write'
        """
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if not for_training and inputs_need_grad:
            raise MXNetError('inputs_need_grad=True requires for_training=True')
        data_descs, label_descs = _parse_data_desc(self.data_names, self.label_names,
                                                   data_shapes, label_shapes)
        _check_labels_are_inputs(self._symbol, label_descs, self.data_names, self.label_names)
        shared_group = self._shared_group(shared_module)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes, self._label_shapes = data_descs, label_descs
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, data_descs, label_descs,
            self._param_names, for_training, inputs_need_grad, shared_group, logger=self.logger,
            fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            group2ctxs=self._group2ctxs, state_names=self._state_names)
        self._total_exec_bytes = self._exec_group._total_exec_bytes
        self._attach_params(shared_module)
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def _shared_group(self, shared_module):
        if shared_module is None:
            return None
        if not isinstance(shared_module, Module) or not shared_module.binded or \
                not shared_module.params_initialized:
            raise MXNetError('shared_module must be a bound Module with initialized parameters')
        if len(shared_module._exec_group.execs) < len(self._context):
            raise MXNetError('shared_module has %d executors; this module needs %d'
                             % (len(shared_module._exec_group.execs), len(self._context)))
        return shared_module._exec_group

    def _attach_params(self, shared_module):
        """Share, restore or create the module's CPU parameter dicts after binding."""
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            group = self._exec_group
            param_checks.check_given(
                {n: a[0] for n, a in zip(self._param_names, group.param_arrays)},
                {n: a[0] for n, a in zip(self._aux_names, group.aux_arrays)},
                self._arg_params, self._aux_params)
            group.set_params(self._arg_params, self._aux_params)
        else:
            group = self._exec_group
            self._arg_params = {name: zeros(arrs[0].shape, dtype=arrs[0].dtype,
                                            stype=getattr(arrs[0], 'stype', 'default'))
                                for name, arrs in zip(self._param_names, group.param_arrays)}
            self._aux_params = {name: zeros(arrs[0].shape, dtype=arrs[0].dtype)
                                for name, arrs in zip(self._aux_names, group.aux_arrays)}

    def reshape(self, data_shapes, label_shapes=None):
        """Rebind the executors for new input shapes (memory shared with the first binding)."""
        self._require('reshape', params=False)
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # ---- computation -------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Forward computation; reshapes first when the batch's data shapes differ from the bound
        ones. ``data_batch`` may be any object with ``data`` (and ``label``), or a list of
        per-device batches."""
        self._require('forward')
        self._drain_comm()
        self._note_forward()
        data_batch = param_checks.checked_batch(data_batch, self._data_names,
                                                len(self._label_shapes or []))
        new_shapes = _batch_data_shapes(data_batch)
        bound = self._data_shapes
        cached = self._bound_shapes
        if cached is None or cached[0] is not bound:
            cached = self._bound_shapes = (bound, tuple(d.shape for d in bound))
        if cached[1] != new_shapes:
            self.reshape(*self._descs_for(data_batch, new_shapes))
        first = data_batch[0] if isinstance(data_batch, list) else data_batch
        self._forward_had_labels = bool(getattr(first, 'label', None))
        self._exec_group.forward(data_batch, is_train)

    def _descs_for(self, data_batch, new_shapes):
        provide_data = getattr(data_batch, 'provide_data', None)
        if provide_data:
            data_descs = provide_data
        else:
            data_descs = [DataDesc(d.name, shape, d.dtype, d.layout)
                          for d, shape in zip(self._data_shapes, new_shapes)]
        provide_label = getattr(data_batch, 'provide_label', None)
        label = getattr(data_batch, 'label', None)
        if provide_label:
            label_descs = provide_label
        elif label and self._label_shapes:
            label_descs = [DataDesc(d.name, arr.shape, d.dtype, d.layout)
                           for d, arr in zip(self._label_shapes, label)]
        else:
            label_descs = None
        return data_descs, label_descs

    def backward(self, out_grads=None):
        """Backward computation (``out_grads`` for outputs that are not losses)."""
        self._require('backward')
        self._check_labels_fed()
        self._note_backward()
        exchange = self._exchange_for_backward()
        if exchange is None:
            started = getattr(self, '_grad_exchange', None)
            if started is not None:
                started.cancel()
            self._exec_group.backward(out_grads=out_grads)
            return
        exchange.begin_backward()
        try:
            self._exec_group.backward(out_grads=out_grads)
        finally:
            exchange.end_backward()

    def _check_labels_fed(self):
        """Training without labels is allowed, as in MXNet (keras-mxnet feeds a target through
        its own variables), but warned about once per module and cause: a network that reads a
        label not bound (label_shapes) or not given with the batch trains against zeros or the
        labels of an earlier batch."""
        read = getattr(self, '_labels_read', None)
        if read is None:
            args = set(self._symbol.list_arguments())
            read = self._labels_read = [n for n in self._label_names if n in args]
        if not read:
            return
        label_shapes = self._label_shapes
        known = self._labels_missing
        if known is None or known[0] is not label_shapes:
            bound = [d.name for d in label_shapes or []]
            known = self._labels_missing = (label_shapes, [n for n in read if n not in bound])
        missing = known[1]
        if missing:
            self._warn_once(
                'unbound', 'backward: the network reads the label %s, but the module was bound '
                'without it (label_shapes=%s), so the loss compares with whatever that input '
                'holds (zeros unless set); to train on labels, bind with label_shapes=[(%r, '
                'shape)] and give them in each DataBatch'
                % (', '.join(repr(n) for n in missing), self._label_shapes, missing[0]))
        elif not getattr(self, '_forward_had_labels', True):
            self._warn_once(
                'unfed', 'backward: the last forward got a DataBatch without labels, but the '
                'network reads the label %s, so the loss uses the labels of an earlier batch; '
                'give them as DataBatch(data, label)' % ', '.join(repr(n) for n in read))

    def _warn_once(self, cause, message):
        warned = self.__dict__.setdefault('_label_warnings', set())
        if cause not in warned:
            warned.add(cause)
            warnings.warn(message, UserWarning, stacklevel=4)

    def get_outputs(self, merge_multi_context=True):
        """Outputs of the last forward (merged over devices unless merge_multi_context=False)."""
        self._require('get_outputs')
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        self._require('get_input_grads')
        if not self.inputs_need_grad:
            raise MXNetError('get_input_grads: bind the module with inputs_need_grad=True')
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        """State arrays per device (``merge_multi_context`` must be False)."""
        self._require('get_states')
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the states from per-device arrays or a scalar ``value``."""
        self._require('set_states')
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the last outputs, once per device."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install a Monitor on every executor."""
        self._require('install_monitor', params=False)
        self._exec_group.install_monitor(mon)


def _check_labels_are_inputs(symbol, label_descs, data_names, label_names):
    """Every bound label must be an input of the network (else nothing could receive it)."""
    if not label_descs:
        return
    args = symbol.list_arguments()
    for desc in label_descs:
        if desc.name not in args:
            unlisted = [a for a in args if a not in data_names
                        and (a in label_names or 'label' in a)]
            raise MXNetError(
                'bind: the label %r (of label_shapes) is not an input of the network%s; its '
                'inputs are %s; give labels under the name the network reads (e.g. '
                'NDArrayIter(..., label_name=...), Module(..., label_names=...))'
                % (desc.name, ", which reads the label %s" % ', '.join(repr(a) for a in unlisted)
                   if unlisted else '', args))
