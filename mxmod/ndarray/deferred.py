"""Errors an operator met while computing arrays, carried by those arrays until one is read (as
MXNet's engine defers them): each array that carries an error raises it at its first read, and
``waitall`` raises the first one no read has raised yet."""
from .ndarray import NDArray

__all__ = ['raise_deferred', 'defer_error', 'raise_unraised', 'carry_error', 'pending_error']


class _PendingError(object):
    """One operator's error, shared by every array that carries it: raised once, by whichever
    of them is read first (MXNet's engine shares one exception among the variables it reached,
    and clears it when it is thrown)."""
    __slots__ = ('error',)

    def __init__(self, error):
        self.error = error


def raise_deferred(array):
    """Raise the error an operator met while computing ``array`` (see DeferredOpError), unless
    it was raised already."""
    holder = getattr(array, '_exc', None)
    if holder is not None:
        array._exc = None
        err, holder.error = holder.error, None
        if err is not None:
            raise err


# errors not raised yet, in the order operators met them: ``waitall`` raises the first and
# forgets them all, as MXNet's engine does with its global exception references
_UNRAISED = []


def defer_error(arrays, err):
    """Make each of ``arrays`` carry ``err`` (an exception, or the holder of one taken from
    :func:`pending_error`) until it is read."""
    holder = err if isinstance(err, _PendingError) else _PendingError(err)
    if holder is not err:
        _UNRAISED[:] = [h for h in _UNRAISED if h.error is not None]
        _UNRAISED.append(holder)
    for arr in arrays:
        if isinstance(arr, NDArray):
            arr._exc = holder


def raise_unraised():
    """For ``waitall``: raise the first error an operator met that no read has raised yet;
    every other pending error is dropped (reading those arrays afterwards raises nothing)."""
    first = next((h.error for h in _UNRAISED if h.error is not None), None)
    for holder in _UNRAISED:
        holder.error = None
    del _UNRAISED[:]
    if first is not None:
        raise first


def carry_error(source, result):
    """``result`` (computed from ``source`` by an NDArray method, not an operator) carries the
    error ``source`` carries, as every value an engine operation derives from it does in MXNet;
    returns ``result``."""
    holder = getattr(source, '_exc', None)
    if holder is not None and holder.error is not None:
        result._exc = holder
    return result


def pending_error(arrays):
    """The not yet raised error carried by one of ``arrays`` (its holder), or None."""
    for arr in arrays:
        holder = getattr(arr, '_exc', None)
        if holder is not None and holder.error is not None:
            return holder
    return None
