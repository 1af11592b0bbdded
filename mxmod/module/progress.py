"""An optional tqdm progress bar for fit/score/predict, used as an ordinary batch-end callback.

Off by default; turn it on with ``progress_bar=True`` on fit/score/predict, or for every call
with the environment variable ``MXMOD_PROGRESS_BAR=1``."""
import os

__all__ = ['progress_enabled', 'ProgressBar']


def progress_enabled(progress_bar):
    """Resolve ``progress_bar`` (None -> the MXMOD_PROGRESS_BAR environment variable)."""
    if progress_bar is None:
        return os.environ.get('MXMOD_PROGRESS_BAR', '0') not in ('0', '', 'false', 'False')
    return bool(progress_bar)


class ProgressBar(object):
    """A tqdm bar advanced once per batch; shows the metric every ``refresh_every`` batches.

    Parameters
    ----------
    desc : str
        Text in front of the bar (e.g. ``'Epoch 3'``).
    total : int, optional
        Number of batches when known.
    refresh_every : int, default 20
        Batches between metric refreshes (reading a metric costs a device sync).
    """

    def __init__(self, desc, total=None, refresh_every=20):
        from tqdm.auto import tqdm  # pylint: disable=import-outside-toplevel
        self._bar = tqdm(total=total, desc=desc, unit='batch', leave=True, dynamic_ncols=True)
        self._refresh_every = max(1, int(refresh_every))

    def __call__(self, param):
        """Batch-end callback: advance by one batch."""
        self._bar.update(1)
        if param.eval_metric is not None and (param.nbatch + 1) % self._refresh_every == 0:
            self.show_metric(param.eval_metric)

    def show_metric(self, eval_metric):
        """Display the metric's current (local) values."""
        values = eval_metric.get_name_value()
        self._bar.set_postfix({name: '%.4f' % value for name, value in values}, refresh=False)

    def close(self, eval_metric=None):
        """Show the final metric values and close the bar."""
        if eval_metric is not None:
            self.show_metric(eval_metric)
        self._bar.close()


def maybe_bar(progress_bar, desc, total=None):
    """A :class:`ProgressBar` when enabled, else None."""
    return ProgressBar(desc, total) if progress_enabled(progress_bar) else None
