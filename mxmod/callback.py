"""Callbacks for ``Module.fit`` / ``score``: checkpointing, speed and metric logging, progress
bars, metric history.

Batch-end callbacks receive a ``BatchEndParam`` (``epoch``, ``nbatch``, ``eval_metric``,
``locals``); epoch-end callbacks receive ``(epoch, symbol, arg_params, aux_params)``."""
import logging
import math
import time

from .metric_history import MetricHistory

__all__ = ['module_checkpoint', 'do_checkpoint', 'log_train_metric', 'Speedometer',
           'ProgressBar', 'LogValidationMetricsCallback', 'TqdmProgressBar', 'MetricHistory']


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """Epoch-end callback saving ``mod`` every ``period`` epochs.

    Calls ``mod.save_checkpoint(prefix, epoch + 1, save_optimizer_states)`` (the third argument
    positionally, as MXNet does).

    Parameters
    ----------
    mod : BaseModule
    prefix : str
        Checkpoint file prefix.
    period : int, default 1
        Epochs between checkpoints (at least 1).
    save_optimizer_states : bool, default False

    Returns
    -------
    callable(iter_no, sym=None, arg=None, aux=None)
    """
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):  # pylint: disable=unused-argument
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    _callback.prefix = prefix      # fit(history=True) writes its files next to the checkpoints
    return _callback


def do_checkpoint(prefix, period=1):
    """Epoch-end callback writing ``prefix-symbol.json`` and ``prefix-%04d.params``.

    Every ``period`` epochs calls ``mx.model.save_checkpoint(prefix, epoch + 1, sym, arg, aux)``.

    Parameters
    ----------
    prefix : str
    period : int, default 1

    Returns
    -------
    callable(iter_no, sym, arg, aux)
    """
    from .argcheck import real_number  # pylint: disable=import-outside-toplevel
    period = int(max(1, real_number(period, 'do_checkpoint: period')))

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            from .model import save_checkpoint  # pylint: disable=import-outside-toplevel
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    _callback.prefix = prefix      # fit(history=True) writes its files next to the checkpoints
    return _callback


def log_train_metric(period, auto_reset=False):
    """Batch-end callback logging ``Iter[epoch] Batch[n] Train-<name>=<value>`` every
    ``period`` batches.

    Parameters
    ----------
    period : int
    auto_reset : bool, default False
        Reset the metric's local tally after each log.

    Returns
    -------
    callable(param)
    """
    def _callback(param):
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info('Iter[%d] Batch[%d] Train-%s=%f', param.epoch, param.nbatch,
                             name, value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer(object):
    """Batch-end callback logging throughput and the training metric every ``frequent`` batches.

    Parameters
    ----------
    batch_size : int
        Samples per batch (for samples/sec).
    frequent : int, default 50
        Batches between log lines.
    auto_reset : bool, default True
        Reset the metric's local tally after each line (so each line covers the last
        ``frequent`` batches: ``Batch [a-b]``).
    """

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        from .argcheck import positive_int  # pylint: disable=import-outside-toplevel
        self.batch_size = positive_int(batch_size, 'Speedometer: batch_size')
        self.frequent = positive_int(frequent, 'Speedometer: frequent')
        self.init = False
        self.tic = 0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:
            self.init = False  # a new epoch started
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        try:
            speed = self.frequent * self.batch_size / (time.time() - self.tic)
        except ZeroDivisionError:
            speed = float('inf')
        if param.eval_metric is None:
            logging.info('Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec', param.epoch, count, speed)
        else:
            name_value = param.eval_metric.get_name_value()
            fields = '\t%s=%f' * len(name_value)
            flat = sum(name_value, ())
            if self.auto_reset:
                param.eval_metric.reset_local()
                logging.info('Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec' + fields,
                             param.epoch, count - self.frequent, count, speed, *flat)
            else:
                logging.info('Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec' + fields,
                             param.epoch, count, speed, *flat)
        self.tic = time.time()


class ProgressBar(object):
    """Batch-end callback logging a text bar ``[====----] 50%`` of the epoch's progress.

    Parameters
    ----------
    total : int
        Batches per epoch.
    length : int, default 80
        Characters of the bar.
    """

    def __init__(self, total, length=80):
        self.bar_len = length
        self.total = total

    def __call__(self, param):
        count = param.nbatch
        filled_len = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        prog_bar = '=' * filled_len + '-' * (self.bar_len - filled_len)
        logging.info('[%s] %s%s\r', prog_bar, percents, '%')


class LogValidationMetricsCallback(object):
    """Callback logging ``Epoch[n] Validation-<name>=<value>`` for each metric value."""

    def __call__(self, param):
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info('Epoch[%d] Validation-%s=%f', param.epoch, name, value)


class TqdmProgressBar(object):
    """Batch-end callback drawing a tqdm bar per epoch: batches done of the total (with the ETA
    when the total is known), samples per second and the running metric values.

    Usable with ``fit`` (``batch_end_callback=``), ``score`` and ``predict``. A new bar starts
    when the epoch changes or the batch counter goes back; the finished one is closed (when
    ``total`` is given, as soon as it is full). Without ``total``, the number of batches of an
    epoch is taken as the total of the next one.

    Parameters
    ----------
    total : int, optional
        Batches per epoch (None: an open-ended counter for the first epoch).
    desc : str, default 'Epoch'
        Bar label; the epoch number is appended as ``'Epoch[3]'``.
    leave : bool, default True
        Keep finished bars on screen.
    refresh_every : int, default 1
        Batches between refreshes of the values after the bar.
    batch_size : int, optional
        Samples per batch, for samples/s when the batches themselves are not at hand.
    **tqdm_kwargs
        Passed to ``tqdm.tqdm`` (e.g. ``file``, ``ncols``, ``disable``).
    """

    def __init__(self, total=None, desc='Epoch', leave=True, refresh_every=1, batch_size=None,
                 **tqdm_kwargs):
        try:
            from tqdm import tqdm  # pylint: disable=import-outside-toplevel
        except ImportError as err:
            raise ImportError('TqdmProgressBar needs tqdm: pip install tqdm (%s)' % err) from err
        self._tqdm = tqdm
        self.total = total
        self.expected = total       # this epoch's total: given, or the last epoch's count
        self.desc = desc
        self.leave = leave
        self.refresh_every = max(1, int(refresh_every))
        self.batch_size = batch_size
        self.tqdm_kwargs = dict(tqdm_kwargs, unit=tqdm_kwargs.get('unit', 'batch'))
        self.bar = None
        self._epoch = None
        self._last = -1
        self._samples = 0
        self._start = None

    def _open(self, epoch):
        self.close()
        self._epoch = epoch
        self._last = -1
        self._samples = 0
        self._start = time.time()
        self.bar = self._tqdm(total=self.expected, desc='%s[%d]' % (self.desc, epoch),
                              leave=self.leave, **self.tqdm_kwargs)

    def _batch_samples(self, param):
        local_vars = getattr(param, 'locals', None) or {}
        batch = local_vars.get('data_batch', local_vars.get('eval_batch'))
        data = getattr(batch, 'data', None)
        if data:
            return int(data[0].shape[0])
        return self.batch_size

    def _postfix(self, param):
        fields = []
        elapsed = time.time() - self._start
        if self._samples and elapsed > 0:
            fields.append(('samples/s', '%.1f' % (self._samples / elapsed)))
        metric = getattr(param, 'eval_metric', None)
        if metric is not None:
            fields += [(name, '%.4f' % value) for name, value in metric.get_name_value()]
        return fields

    def __call__(self, param):
        epoch, nbatch = getattr(param, 'epoch', 0) or 0, param.nbatch
        if self.bar is None or epoch != self._epoch or nbatch <= self._last:
            self._open(epoch)
        self.bar.update(nbatch - self._last)
        self._last = nbatch
        self._samples += self._batch_samples(param) or 0
        last = self.expected is not None and nbatch + 1 >= self.expected
        if last or (nbatch + 1) % self.refresh_every == 0:
            fields = self._postfix(param)
            if fields:
                self.bar.set_postfix_str(', '.join('%s=%s' % kv for kv in fields), refresh=False)
        if last and self.total is not None:
            self.close()

    def close(self):
        """Close the current bar (also usable at the end of an epoch); its number of batches
        becomes the expected total of the next epoch when no total was given."""
        if self.bar is not None:
            if self.total is None and self._last >= 0:
                self.expected = self._last + 1
            self.bar.close()
            self.bar = None
