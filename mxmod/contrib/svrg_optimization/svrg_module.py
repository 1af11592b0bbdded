"""``SVRGModule``: a Module trained with stochastic variance-reduced gradients (Johnson & Zhang,
2013), with MXNet 1.9.1's ``mx.contrib.svrg_optimization.svrg_module.SVRGModule`` API.

Every ``update_freq`` epochs the full gradient (the mean of the batch gradients over the whole
data set) is computed at a snapshot of the weights, by an auxiliary Module that keeps the
snapshot. Each training step then uses ``g(w) - g(snapshot) + full`` on the current batch in
place of ``g(w)``: the auxiliary Module runs the same batch forward and backward at the snapshot.

As MXNet's: the full-gradient sums are never reset between snapshots (each new full gradient
adds to the previous one before the division by the number of batches), and with a kvstore the
``<param>_full`` keys are initialised to zeros and pulled into the device parameters when the
store updates; results therefore match MXNet's training runs step for step."""
import logging
import time

from ... import context as ctx
from ... import metric as metric_mod
from ... import ndarray as nd
from ...base import as_list
from ...model import BatchEndParam, _create_kvstore
from ...module.module import Module
from ...optimizer import create
from .svrg_optimizer import _SVRGOptimizer

__all__ = ['SVRGModule']


class SVRGModule(Module):
    """A Module whose updates follow the SVRG rule.

    Parameters
    ----------
    symbol, data_names, label_names, logger, context, work_load_list, fixed_param_names,
    state_names, group2ctxs, compression_params
        As :class:`mxnet.module.Module`.
    update_freq : int
        Compute the full gradients every ``update_freq`` epochs (a positive int; required).
    """

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=ctx.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None, update_freq=None):
        super(SVRGModule, self).__init__(
            symbol, data_names=data_names, label_names=label_names, logger=logger,
            context=context, work_load_list=work_load_list, fixed_param_names=fixed_param_names,
            state_names=state_names, group2ctxs=group2ctxs,
            compression_params=compression_params)
        if not isinstance(update_freq, int) or isinstance(update_freq, bool):
            raise TypeError('update_freq in SVRGModule must be an integer (how many epochs '
                            'apart the full gradients are computed), got %r' % (update_freq,))
        if update_freq <= 0:
            raise ValueError('update_freq in SVRGModule must be a positive integer, got %d'
                             % update_freq)
        self.update_freq = update_freq
        self._mod_aux = Module(symbol, data_names, label_names, logger, context, work_load_list,
                               fixed_param_names, state_names, group2ctxs, compression_params)
        self._param_dict = None
        self._ctx_len = len(self._context)

    # ---- binding: both modules -----------------------------------------------------------
    def _reset_bind(self):
        super(SVRGModule, self)._reset_bind()
        self._mod_aux._reset_bind()

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind this module, and for training the auxiliary (snapshot) module as well."""
        super(SVRGModule, self).bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                                     force_rebind, shared_module, grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                               force_rebind, shared_module, grad_req)

    def reshape(self, data_shapes, label_shapes=None):
        """Reshape both modules."""
        super(SVRGModule, self).reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare both modules for ``data_batch``."""
        super(SVRGModule, self).prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)

    # ---- optimizer ---------------------------------------------------------------------------
    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Install an ``_SVRGOptimizer`` around ``optimizer``; with a kvstore, add a
        ``<param>_full`` key per parameter where the full gradients are summed."""
        params = self.get_params()[0]
        self._param_dict = [{name: nd.zeros(value.shape, ctx=self._context[i])
                             for name, value in params.items()} for i in range(self._ctx_len)]
        wrapper = self._create_optimizer(_SVRGOptimizer.__name__, optimizer, kvstore,
                                         optimizer_params)
        super(SVRGModule, self).init_optimizer(kvstore=kvstore, optimizer=wrapper,
                                               optimizer_params=optimizer_params,
                                               force_init=force_init)
        if self._kvstore:
            group = self._exec_group
            for idx, on_devices in enumerate(group.param_arrays):
                name = group.param_names[idx]
                self._kvstore.init(name + '_full', nd.zeros(self._arg_params[name].shape))
                if self._update_on_kvstore:
                    self._kvstore.pull(name + '_full', on_devices, priority=-idx)

    def _create_optimizer(self, optimizer, default_opt, kvstore, optimizer_params):
        """The ``_SVRGOptimizer``: Module.init_optimizer's rescaling and index -> name table,
        with one more index per parameter for its ``_full`` key."""
        kv, update_on_kvstore = _create_kvstore(kvstore, self._ctx_len, self._arg_params)
        batch_size = self._exec_group.batch_size
        if kv and 'dist' in kv.type and '_sync' in kv.type:
            batch_size *= kv.num_workers
        names = self._exec_group.param_names
        if update_on_kvstore:
            idx2name = dict(enumerate(names))
        else:
            idx2name = {i * self._ctx_len + k: name for k in range(self._ctx_len)
                        for i, name in enumerate(names)}
        for name in self._param_dict[0]:
            idx2name[max(idx2name) + 1] = name + '_full'
        params = dict(optimizer_params)
        params.setdefault('rescale_grad', 1.0 / batch_size)
        params['default_optimizer'] = default_opt
        params['param_idx2name'] = idx2name
        return create(optimizer, **params)

    # ---- one step ----------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Forward on this module; in training (``is_train=True``) on the snapshot as well."""
        super(SVRGModule, self).forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Backward on this module and, when bound, on the snapshot."""
        super(SVRGModule, self).backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self):
        """Replace each gradient by ``g(w) - g(snapshot) + full``, then update."""
        self._update_svrg_gradients()
        super(SVRGModule, self).update()

    def _exchange_for_backward(self):
        # the gradients change between backward and update: a kvstore must not take them while
        # backward runs (mxmod's overlapped communication), only in update, as in MXNet
        return None

    def _svrg_grads_update_rule(self, g_curr_batch_curr_weight, g_curr_batch_special_weight,
                                g_special_weight_all_batch):
        """In place: each ``current - snapshot + full``; returns the first list."""
        for index, grad in enumerate(g_curr_batch_curr_weight):
            grad -= g_curr_batch_special_weight[index]
            grad += g_special_weight_all_batch[index]
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self):
        group, aux = self._exec_group, self._mod_aux._exec_group
        for dev in range(self._ctx_len):
            for index, name in enumerate(group.param_names):
                group.grad_arrays[index][dev] = self._svrg_grads_update_rule(
                    group.grad_arrays[index][dev], aux.grad_arrays[index][dev],
                    self._param_dict[dev][name])

    # ---- full gradients ----------------------------------------------------------------------
    def update_full_grads(self, train_data):
        """Snapshot the weights into the auxiliary module and average its gradients over every
        batch of ``train_data`` (with a kvstore, summed over devices and workers there)."""
        names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        train_data.reset()
        nbatch, padding = 0, 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for dev in range(self._ctx_len):
                sums = self._param_dict[dev]
                for index, name in enumerate(names):
                    grads = self._mod_aux._exec_group.grad_arrays[index][dev]
                    sums[name] = nd.broadcast_add(sums[name], grads)
            padding = batch.pad
        true_num_batch = nbatch - padding / train_data.batch_size
        for name in names:
            averages = []
            for dev in range(self._ctx_len):
                self._param_dict[dev][name] /= true_num_batch
                averages.append(self._param_dict[dev][name])
            if self._kvstore:
                self._accumulate_kvstore(name, averages)

    def _accumulate_kvstore(self, key, value):
        """Sum the full gradients of every device and worker in the store's ``_full`` key."""
        self._kvstore.push(key + '_full', value)
        self._kvstore._barrier()  # pylint: disable=protected-access
        self._kvstore.pull(key + '_full', value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key, value):
        """Each device's full gradient: the store's sum divided by the number of devices."""
        for dev in range(self._ctx_len):
            self._param_dict[dev][key] = value[dev] / self._ctx_len

    # ---- training loop -----------------------------------------------------------------------
    def fit(self, train_data, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', optimizer='sgd',
            optimizer_params=(('learning_rate', 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=None, arg_params=None, aux_params=None,
            allow_missing=False, force_rebind=False, force_init=False, begin_epoch=0,
            num_epoch=None, validation_metric=None, monitor=None, sparse_row_id_fn=None):
        """Train as :meth:`Module.fit` does, computing the full gradients every
        ``update_freq`` epochs (MXNet's own loop: a log line per epoch, no progress bar)."""
        if num_epoch is None:
            raise ValueError('SVRGModule.fit: please specify number of epochs (num_epoch)')
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=_uniform() if initializer is None else initializer,
                         arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric_mod.EvalMetric):
            eval_metric = metric_mod.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            self._train_epoch(epoch, train_data, eval_metric, batch_end_callback, monitor,
                              sparse_row_id_fn)
            self.logger.info('Epoch[%d] Time cost=%.3f', epoch, time.time() - tic)
            arg, aux = self.get_params()        # the devices' parameters averaged
            self.set_params(arg, aux)
            for callback in as_list(epoch_end_callback or []):
                callback(epoch, self.symbol, arg, aux)
            if eval_data:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, val)

    def _train_epoch(self, epoch, train_data, eval_metric, batch_end_callback, monitor,
                     sparse_row_id_fn):
        eval_metric.reset()
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)
        train_data.reset()
        batches = iter(train_data)
        following = next(batches)
        nbatch, last = 0, False
        while not last:
            batch = following
            if monitor is not None:
                monitor.tic()
            self.forward_backward(batch)
            self.update()
            if isinstance(batch, list):
                self.update_metric(eval_metric, [b.label for b in batch], pre_sliced=True)
            else:
                self.update_metric(eval_metric, batch.label)
            try:
                following = next(batches)
                self.prepare(following, sparse_row_id_fn=sparse_row_id_fn)
            except StopIteration:
                last = True
            if monitor is not None:
                monitor.toc_print()
            for callback in as_list(batch_end_callback or []):
                callback(BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                       locals=locals()))
            nbatch += 1
        for name, val in eval_metric.get_name_value():
            self.logger.info('Epoch[%d] Train-%s=%f', epoch, name, val)


def _uniform():
    from ...initializer import Uniform  # pylint: disable=import-outside-toplevel
    return Uniform(0.01)
