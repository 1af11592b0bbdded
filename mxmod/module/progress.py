"""What fit/score/predict show and record besides MXNet's log lines: the tqdm progress bar
(``mx.callback.TqdmProgressBar``) and the metric history (``mx.callback.MetricHistory``).

The bar is on by default when standard error is a terminal and off otherwise (then only the
logging, as MXNet's Speedometer writes it, reaches the output). ``progress_bar=True/False`` on
fit/score/predict, or ``MXMOD_PROGRESS_BAR=1/0`` for every call, forces it on or off. In a
distributed job only rank 0 draws it. While a bar is drawn, log lines are written through tqdm
so that a Speedometer line and the bar do not overwrite each other.

Without the bar (standard error not a terminal: a log file, a batch job), ``fit`` given no
``batch_end_callback`` logs a Speedometer line every 50 batches (``mx.callback.Speedometer(
batch_size, 50)``'s ``Epoch[0] Batch [50-100]\tSpeed: ... samples/sec\taccuracy=...``) so that a
long epoch shows progress; ``MXMOD_PROGRESS_LOG=N`` logs every N batches, ``0`` never, and
``batch_end_callback=[]`` asks for no batch-end logging at all."""
import contextlib
import os
import sys

from ..io import NDArrayIter, PrefetchingIter, ResizeIter
from ..profiler.trace import process_rank

__all__ = ['progress_enabled', 'maybe_bar', 'bar_output', 'batches_per_epoch', 'fit_history',
           'epoch_scope', 'progress_log', 'PROGRESS_LOG_EVERY']

# batches between the log lines of fit without a bar and without batch-end callbacks
PROGRESS_LOG_EVERY = 50

_ON, _OFF = ('1', 'true', 'yes', 'on'), ('0', 'false', 'no', 'off')


def progress_enabled(progress_bar):
    """Whether to draw a bar: ``progress_bar`` when given, else ``MXMOD_PROGRESS_BAR`` (1/0),
    else whether standard error is a terminal; never on ranks other than 0."""
    if process_rank()[0] != 0:
        return False
    if progress_bar is not None:
        return bool(progress_bar)
    setting = os.environ.get('MXMOD_PROGRESS_BAR', '').strip().lower()
    if setting in _ON:
        return True
    if setting in _OFF:
        return False
    isatty = getattr(sys.stderr, 'isatty', None)
    return bool(isatty and isatty())


def batches_per_epoch(data_iter):
    """The number of batches an epoch of ``data_iter`` has, when it can be known in advance."""
    if isinstance(data_iter, NDArrayIter):
        full, rest = divmod(data_iter.num_data, data_iter.batch_size)
        if data_iter.last_batch_handle == 'pad':
            return full + (1 if rest else 0)
        return full if data_iter.last_batch_handle == 'discard' else None
    if isinstance(data_iter, ResizeIter):
        return data_iter.size
    if isinstance(data_iter, PrefetchingIter):
        return batches_per_epoch(data_iter.iters[0]) if data_iter.iters else None
    positions = getattr(data_iter, 'idx', None)   # BucketSentenceIter: one entry per batch
    if isinstance(positions, list) and hasattr(data_iter, 'curr_idx'):
        return len(positions)
    return None


def maybe_bar(progress_bar, desc, refresh_every=10, data_iter=None):
    """A ``TqdmProgressBar`` labelled ``desc`` (expecting ``data_iter``'s batches) when enabled,
    else None."""
    if not progress_enabled(progress_bar):
        return None
    from ..callback import TqdmProgressBar  # pylint: disable=import-outside-toplevel
    bar = TqdmProgressBar(desc=desc, refresh_every=refresh_every)
    if data_iter is not None:
        bar.expected = batches_per_epoch(data_iter)
    return bar


def _progress_log_every():
    """``MXMOD_PROGRESS_LOG``: batches between log lines (unset: 50; 0 or off: none)."""
    raw = os.environ.get('MXMOD_PROGRESS_LOG', '').strip().lower()
    if raw in ('', 'true', 'yes', 'on'):
        return PROGRESS_LOG_EVERY
    if raw in ('false', 'no', 'off'):
        return 0
    try:
        every = int(raw)
    except ValueError:
        every = -1
    if every < 0:
        raise ValueError('MXMOD_PROGRESS_LOG must be a number of batches (0: no progress lines), '
                         'got %r' % raw)
    return every


def _batch_size(data_iter):
    """Samples per batch of ``data_iter``: its batch_size, else its first input's batch axis;
    None when it describes neither (an iterator-like object without provide_data)."""
    size = getattr(data_iter, 'batch_size', None)
    if isinstance(size, int) and size > 0:
        return size
    from ..io import DataDesc  # pylint: disable=import-outside-toplevel
    try:
        desc = data_iter.provide_data[0]
        shape = tuple(desc.shape) if hasattr(desc, 'shape') else tuple(desc[1])
        axis = max(DataDesc.get_batch_axis(getattr(desc, 'layout', None)), 0)
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None
    return int(shape[axis]) if len(shape) > axis else 1


def progress_log(batch_end_callback, bar, data_iter):
    """The ``mx.callback.Speedometer`` that fit adds when neither ``batch_end_callback`` nor a
    bar shows progress (rank 0 only; ``MXMOD_PROGRESS_LOG`` sets the interval, 0 turns it off),
    else None."""
    if batch_end_callback is not None or bar is not None or process_rank()[0] != 0:
        return None
    every = _progress_log_every()
    if not every:
        return None
    size = _batch_size(data_iter)
    if size is None:
        return None
    from ..callback import Speedometer  # pylint: disable=import-outside-toplevel
    return Speedometer(size, every)


def bar_output(bar):
    """A scope in which log lines go through tqdm while ``bar`` (if any) is drawn."""
    if bar is None:
        return contextlib.nullcontext()
    from tqdm.contrib.logging import logging_redirect_tqdm  # pylint: disable=import-outside-toplevel
    return logging_redirect_tqdm()


@contextlib.contextmanager
def epoch_scope(bar, history, epoch, last=False):
    """One training epoch of fit (``last``: the final one): the history's clock starts, log lines
    go through tqdm, and the bar is closed at the end."""
    if history is not None:
        history.epoch_begin(epoch, last)
    try:
        with bar_output(bar):
            yield
    finally:
        if bar is not None:
            bar.close()


def fit_history(history, epoch_end_callback):
    """The ``MetricHistory`` that fit's ``history`` argument asks for, or None.

    ``history`` is a MetricHistory, a file prefix (``'run/mlp'`` writes ``run/mlp-history.csv``
    ...), or True: next to the checkpoints of a ``do_checkpoint``/``module_checkpoint`` callback
    in ``epoch_end_callback``."""
    if history is None or history is False:
        return None
    from ..callback import MetricHistory  # pylint: disable=import-outside-toplevel
    if isinstance(history, MetricHistory):
        return history
    if history is True:
        callbacks = epoch_end_callback if isinstance(epoch_end_callback, (list, tuple)) \
            else [epoch_end_callback]
        prefixes = [getattr(c, 'prefix', None) for c in callbacks if c is not None]
        prefixes = [p for p in prefixes if p]
        if not prefixes:
            raise ValueError('fit(history=True) writes the history next to the checkpoints, but '
                             'no epoch_end_callback is a mx.callback.do_checkpoint or '
                             'module_checkpoint; pass history=PREFIX instead')
        return MetricHistory(prefixes[0])
    if isinstance(history, str):
        return MetricHistory(history)
    raise TypeError('fit: history must be a MetricHistory, a file prefix or True, got %s'
                    % type(history).__name__)
