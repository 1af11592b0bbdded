"""The pieces of ``BaseModule.fit``: one training epoch, the epoch-end bookkeeping and callback
dispatch. Order of events per batch (MXNet's): monitor.tic, forward_backward, update,
update_metric (labels read while the batch is still the iterator's current one), fetch and
prepare the next batch, monitor.toc_print, batch-end callbacks."""
import time

from ..base import as_list
from ..profiler.hooks import span
from ..profiler.state import PROFILER
from .overlap_policy import fit_step

__all__ = ['call_callbacks', 'train_epoch', 'end_epoch', 'update_metric_for', 'batch_end_param',
           'with_extra']


def with_extra(callbacks, extra):
    """``callbacks`` (None, one or a list) as a list, with ``extra`` appended when not None."""
    result = [] if callbacks is None else as_list(callbacks)
    return result + [extra] if extra is not None else (callbacks if callbacks is not None else [])


def batch_end_param(epoch, nbatch, eval_metric, local_vars):
    """``mx.model.BatchEndParam(epoch, nbatch, eval_metric, locals)``."""
    from ..model import BatchEndParam  # pylint: disable=import-outside-toplevel
    return BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric, locals=local_vars)


def call_callbacks(callbacks, *args):
    """Call one callback or each of a list of callbacks with ``args``."""
    if callbacks is None:
        return
    for callback in as_list(callbacks):
        callback(*args)


def update_metric_for(module, eval_metric, data_batch):
    """Update ``eval_metric`` with a batch (a list of per-device batches is pre-sliced)."""
    if isinstance(data_batch, list):
        module.update_metric(eval_metric, [db.label for db in data_batch], pre_sliced=True)
    else:
        module.update_metric(eval_metric, data_batch.label)


def _next_prepared(module, data_iter, sparse_row_id_fn):
    """The next batch, already passed to ``module.prepare``; None at the end of the data."""
    try:
        batch = next(data_iter)
    except StopIteration:
        return None
    module.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
    return batch


def _profiled_step(module, eval_metric, data_batch):
    """One training step with its parts recorded by the profiler."""
    kind = type(module).__name__
    with span('Module', kind + '.forward_backward'), fit_step(module):
        module.forward_backward(data_batch)
    with span('Module', kind + '.update'):
        module.update()
    with span('Module', kind + '.update_metric'):
        update_metric_for(module, eval_metric, data_batch)


def train_epoch(module, epoch, train_data, eval_metric, batch_end_callback, monitor,
                sparse_row_id_fn):
    """Train one pass over ``train_data``; return the metric's global (name, value) pairs."""
    eval_metric.reset()
    data_iter = iter(train_data)
    next_data_batch = next(data_iter)
    nbatch = 0
    name_values = []
    kv = getattr(module, '_kvstore', None)
    early = sparse_row_id_fn is not None and bool(getattr(kv, 'prefetching', False))
    while next_data_batch is not None:
        data_batch = next_data_batch
        if early:
            # the embedding cache reads the next batch's rows while this one computes
            try:
                upcoming = next(data_iter)
            except StopIteration:
                upcoming = None
            if upcoming is not None:
                module.prefetch(upcoming, sparse_row_id_fn)
        if monitor is not None:
            monitor.tic()
        if PROFILER.api:
            _profiled_step(module, eval_metric, data_batch)
        else:
            with fit_step(module):
                module.forward_backward(data_batch)
            module.update()
            update_metric_for(module, eval_metric, data_batch)
        if early:
            if upcoming is not None:
                module.prepare(upcoming, sparse_row_id_fn=sparse_row_id_fn)
            next_data_batch = upcoming
        else:
            next_data_batch = _next_prepared(module, data_iter, sparse_row_id_fn)
        if monitor is not None:
            monitor.toc_print()
        if next_data_batch is None:
            name_values = eval_metric.get_global_name_value()
        if batch_end_callback:
            call_callbacks(batch_end_callback, batch_end_param(epoch, nbatch, eval_metric,
                                                               dict(locals(), self=module)))
        nbatch += 1
    return name_values


def end_epoch(module, epoch, tic, name_values, epoch_end_callback):
    """Log the epoch's training metric and time, re-sync parameters, call epoch-end callbacks."""
    for name, val in name_values:
        module.logger.info('Epoch[%d] Train-%s=%f', epoch, name, val)
    module.logger.info('Epoch[%d] Time cost=%.3f', epoch, time.time() - tic)
    arg_params, aux_params = module.get_params()
    module.set_params(arg_params, aux_params)
    call_callbacks(epoch_end_callback, epoch, module.symbol, arg_params, aux_params)
