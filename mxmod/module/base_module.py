"""BaseModule: the high-level API (fit, score, predict, parameter files) written once on top of the
intermediate API (bind, init_params, init_optimizer, forward, backward, update, ...) that
concrete modules implement."""
import logging
import time
import warnings

import numpy as np

from .. import metric
from .. import ndarray
from ..base import MXNetError
from ..context import cpu
from ..initializer import Uniform
from ..io import DataIter, DataBatch
from .param_checks import check_fit_arguments
from .fit_loop import (call_callbacks, train_epoch, end_epoch, update_metric_for,
                       batch_end_param, with_extra)
from .progress import maybe_bar, bar_output, epoch_scope, fit_history, progress_log
from .input_names import (_check_input_names, _check_names_match,  # noqa: F401
                          _parse_data_desc, check_training_labels)

__all__ = ['BaseModule']

def _as_metric(eval_metric):
    return eval_metric if isinstance(eval_metric, metric.EvalMetric) else metric.create(eval_metric)


def _limited(data_iter, num_batch):
    """Enumerate ``data_iter``, stopping after ``num_batch`` batches when given."""
    for nbatch, batch in enumerate(data_iter):
        if num_batch is not None and nbatch == num_batch:
            return
        yield nbatch, batch


class BaseModule(object):
    """The module interface: a computation with parameters that can be bound to devices, trained
    and evaluated.

    Parameters
    ----------
    logger : Logger, default logging
    """

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    def _require(self, what, binded=True, params=True, optimizer=False):
        """Raise MXNetError naming the call that is missing before ``what`` can run."""
        if binded and not self.binded:
            raise MXNetError('%s: the module is not bound; call bind() first' % what)
        if params and not self.params_initialized:
            raise MXNetError('%s: parameters are not initialized; call init_params() (or '
                             'set_params) first' % what)
        if optimizer and not self.optimizer_initialized:
            raise MXNetError('%s: the optimizer is not initialized; call init_optimizer() first'
                             % what)

    # ---- high-level API ----------------------------------------------------------------
    def forward_backward(self, data_batch):
        """Forward in training mode, then backward."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None,
              progress_bar=None):
        """Evaluate ``eval_metric`` over ``eval_data`` (padding is not removed).

        Parameters
        ----------
        eval_data : DataIter
        eval_metric : EvalMetric or str
        num_batch : int, optional
            Stop after this many batches.
        batch_end_callback, score_end_callback : callable or list, optional
            Called with a ``BatchEndParam`` after each batch / at the end.
        reset : bool, default True
            Reset ``eval_data`` first.
        epoch : int, default 0
            Passed to the callbacks.
        sparse_row_id_fn : callable, optional
        progress_bar : bool, optional
            Show a tqdm bar (default: MXMOD_PROGRESS_BAR=1/0, else when stderr is a terminal).

        Returns
        -------
        list of (str, float)
        """
        self._require('score')
        if reset:
            eval_data.reset()
        eval_metric = _as_metric(eval_metric)
        eval_metric.reset()
        bar = maybe_bar(progress_bar, 'score', data_iter=eval_data)
        callbacks = with_extra(batch_end_callback, bar)
        actual_num_batch = 0
        with bar_output(bar):
            for nbatch, eval_batch in _limited(eval_data, num_batch):
                self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
                self.forward(eval_batch, is_train=False)
                update_metric_for(self, eval_metric, eval_batch)
                call_callbacks(callbacks, batch_end_param(epoch, nbatch, eval_metric, locals()))
                actual_num_batch += 1
        if bar is not None:
            bar.close()
        if score_end_callback:
            call_callbacks(score_end_callback,
                           batch_end_param(epoch, actual_num_batch, eval_metric, locals()))
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield ``(outputs, nbatch, batch)`` per batch, outputs without the padded samples."""
        self._require('iter_predict')
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in _limited(eval_data, num_batch):
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield (outputs, nbatch, eval_batch)

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None, progress_bar=None):
        """Run inference and collect the outputs (padded samples removed).

        Parameters
        ----------
        eval_data : DataIter, NDArray or numpy.ndarray
            An array is run as one batch and its first output returned.
        num_batch : int, optional
        merge_batches : bool, default True
            Concatenate the batches' outputs along axis 0.
        reset : bool, default True
        always_output_list : bool, default False
            Return a list even for a single output.
        sparse_row_id_fn : callable, optional
        progress_bar : bool, optional

        Returns
        -------
        NDArray, list of NDArray, or (merge_batches=False) list of lists of NDArray
        """
        self._require('predict')
        if isinstance(eval_data, (ndarray.NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = ndarray.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError('eval_data must be of type NDArray or DataIter, got %s'
                             % type(eval_data).__name__)
        bar = maybe_bar(progress_bar, 'predict', data_iter=eval_data)
        output_list = []
        for outputs, nbatch, _ in self.iter_predict(eval_data, num_batch, reset, sparse_row_id_fn):
            output_list.append([out.copy() for out in outputs])
            if bar is not None:
                bar(batch_end_param(0, nbatch, None, None))
        if bar is not None:
            bar.close()
        if not output_list or not merge_batches:
            return output_list
        return _merge_batches(output_list, always_output_list)

    def fit(self, train_data, eval_data=None, eval_metric='acc',
            epoch_end_callback=None, batch_end_callback=None, kvstore='local',
            optimizer='sgd', optimizer_params=(('learning_rate', 0.01),),
            eval_end_callback=None, eval_batch_end_callback=None, initializer=Uniform(0.01),
            arg_params=None, aux_params=None, allow_missing=False,
            force_rebind=False, force_init=False, begin_epoch=0, num_epoch=None,
            validation_metric=None, monitor=None, sparse_row_id_fn=None, progress_bar=None,
            history=None):
        """Train on ``train_data`` for epochs ``[begin_epoch, num_epoch)``.

        Binds, initializes parameters and the optimizer (each a no-op when already done), then
        per epoch: trains on every batch, logs the training metric, re-syncs parameters, calls
        ``epoch_end_callback(epoch, symbol, arg_params, aux_params)``, scores ``eval_data`` and
        resets ``train_data``.

        Parameters
        ----------
        train_data : DataIter
        eval_data : DataIter, optional
        eval_metric : str or EvalMetric, default 'acc'
        epoch_end_callback, batch_end_callback : callable or list, optional
        kvstore : str or KVStore, default 'local'
        optimizer : str or Optimizer, default 'sgd'
        optimizer_params : dict or pairs, default (('learning_rate', 0.01),)
        eval_end_callback, eval_batch_end_callback : callable or list, optional
        initializer : Initializer, default Uniform(0.01)
        arg_params, aux_params : dict of str to NDArray, optional
            Initial parameter values (they win over ``initializer``).
        allow_missing, force_rebind, force_init : bool
        begin_epoch : int, default 0
        num_epoch : int
            Required.
        validation_metric : str or EvalMetric, optional
            Defaults to ``eval_metric``.
        monitor : Monitor, optional
        sparse_row_id_fn : callable, optional
        progress_bar : bool, optional
            tqdm bar per epoch with the ETA, samples/s and the metric (default: MXMOD_PROGRESS_BAR
            =1/0, else when stderr is a terminal; rank 0 only). Without a bar and without
            ``batch_end_callback``, a Speedometer line is logged every 50 batches
            (``MXMOD_PROGRESS_LOG=N``: every N, ``0``: never; ``batch_end_callback=[]``: none).
        history : MetricHistory, str or True, optional
            Record each epoch's metrics, learning rate and time in ``<prefix>-history.csv``,
            ``.json`` and ``.png`` (see :class:`mxmod.callback.MetricHistory`); True puts them next
            to the checkpoints of a ``do_checkpoint`` epoch-end callback.
        """
        if num_epoch is None:
            raise ValueError('please specify number of epochs (fit(..., num_epoch=N))')
        check_fit_arguments(train_data, num_epoch, begin_epoch, locals())
        check_training_labels(self._symbol, getattr(self, 'label_names', None),
                              getattr(train_data, 'provide_label', None))
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        validation_metric = eval_metric if validation_metric is None else validation_metric
        eval_metric = _as_metric(eval_metric)
        bar = maybe_bar(progress_bar, 'Epoch', data_iter=train_data)
        history = fit_history(history, epoch_end_callback)
        callbacks = with_extra(with_extra(with_extra(batch_end_callback, bar), history),
                               progress_log(batch_end_callback, bar, train_data))
        if history is not None:
            epoch_end_callback = with_extra(epoch_end_callback, history.epoch_end)
            eval_end_callback = with_extra(eval_end_callback, history.eval_end)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            with epoch_scope(bar, history, epoch, last=epoch == num_epoch - 1):
                name_values = train_epoch(self, epoch, train_data, eval_metric, callbacks,
                                          monitor, sparse_row_id_fn)
            end_epoch(self, epoch, tic, name_values, epoch_end_callback)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric, score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch,
                                 progress_bar=progress_bar)
                for name, val in res:
                    self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, val)
            train_data.reset()

    # ---- symbol and shapes (abstract) -----------------------------------------------------
    @property
    def data_names(self):
        """Names of the data inputs."""
        raise NotImplementedError()

    @property
    def output_names(self):
        """Names of the outputs."""
        raise NotImplementedError()

    @property
    def data_shapes(self):
        """DataDesc of the data inputs (bound shapes)."""
        raise NotImplementedError()

    @property
    def label_shapes(self):
        """DataDesc of the labels (None when there are none)."""
        raise NotImplementedError()

    @property
    def output_shapes(self):
        """(name, shape) of the outputs."""
        raise NotImplementedError()

    @property
    def symbol(self):
        """The symbol of the module."""
        return self._symbol

    # ---- parameters ---------------------------------------------------------------------
    def get_params(self):
        """Return ``(arg_params, aux_params)``: dicts of name to CPU NDArray."""
        raise NotImplementedError()

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the parameters (given values first, ``initializer`` for the rest)."""
        raise NotImplementedError()

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter values (``init_params`` without an initializer)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def save_params(self, fname):
        """Save parameters to ``fname`` with ``arg:``/``aux:`` prefixed names."""
        from ..model import params_bytes  # pylint: disable=import-outside-toplevel
        from ..atomic_io import write_file_atomic  # pylint: disable=import-outside-toplevel
        arg_params, aux_params = self.get_params()
        write_file_atomic(fname, params_bytes(arg_params, aux_params, 'save_params'))

    def load_params(self, fname):
        """Load parameters saved by :meth:`save_params` and assign them."""
        from ..model import split_params  # pylint: disable=import-outside-toplevel
        arg_params, aux_params = split_params(ndarray.load(fname), fname)
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context=True):
        """States of a stateful module; the base module has none."""
        self._require('get_states')
        if merge_multi_context:
            raise MXNetError('get_states(merge_multi_context=True) is not supported')
        return []

    def set_states(self, states=None, value=None):
        """Set states of a stateful module; the base module has none."""
        self._require('set_states')
        if states or value:
            raise MXNetError('this module has no states to set')

    def install_monitor(self, mon):
        """Install a Monitor on the executors."""
        raise NotImplementedError()

    # ---- computation (abstract) ---------------------------------------------------------
    def prefetch(self, data_batch, sparse_row_id_fn):
        """Start reading the rows ``data_batch`` will need (an embedding cache that prefetches);
        here a no-op."""

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare for ``data_batch`` (switch bucket, pull row_sparse rows); here a no-op."""
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning('sparse_row_id_fn is not invoked for BaseModule.'))

    def forward(self, data_batch, is_train=None):
        """Forward computation."""
        raise NotImplementedError()

    def backward(self, out_grads=None):
        """Backward computation."""
        raise NotImplementedError()

    def get_outputs(self, merge_multi_context=True):
        """Outputs of the last forward."""
        raise NotImplementedError()

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the inputs from the last backward."""
        raise NotImplementedError()

    def update(self):
        """Update the parameters with the optimizer."""
        raise NotImplementedError()

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` on the last outputs."""
        raise NotImplementedError()

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Allocate executors for the given input shapes."""
        raise NotImplementedError()

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Set up the optimizer and kvstore."""
        raise NotImplementedError()


def _merge_batches(output_list, always_output_list):
    num_outputs = len(output_list[0])
    if any(len(out) != num_outputs for out in output_list):
        raise MXNetError('Cannot merge batches, as num of outputs is not the same in '
                         'mini-batches. Maybe bucketing is used?')
    merged = [ndarray.concat(*[out[i] for out in output_list], dim=0) for i in range(num_outputs)]
    if num_outputs == 1 and not always_output_list:
        return merged[0]
    return merged
