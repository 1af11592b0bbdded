"""The optional tqdm progress bar of fit/score/predict: ``mx.callback.TqdmProgressBar`` added as
one more batch-end callback.

Off by default; turn it on with ``progress_bar=True`` on fit/score/predict, or for every call
with the environment variable ``MXMOD_PROGRESS_BAR=1``. In a distributed job only rank 0 (as
``mxmod.launch`` sets ``MXMOD_RANK``) draws it."""
import os

__all__ = ['progress_enabled', 'maybe_bar']


def progress_enabled(progress_bar):
    """Resolve ``progress_bar`` (None -> the MXMOD_PROGRESS_BAR environment variable); never on
    ranks other than 0."""
    if os.environ.get('MXMOD_RANK', '0') != '0':
        return False
    if progress_bar is None:
        return os.environ.get('MXMOD_PROGRESS_BAR', '0') not in ('0', '', 'false', 'False')
    return bool(progress_bar)


def maybe_bar(progress_bar, desc, refresh_every=10):
    """A ``TqdmProgressBar`` labelled ``desc`` when enabled, else None."""
    if not progress_enabled(progress_bar):
        return None
    from ..callback import TqdmProgressBar  # pylint: disable=import-outside-toplevel
    return TqdmProgressBar(desc=desc, refresh_every=refresh_every)
