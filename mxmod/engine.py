"""``mx.engine``: the bulk-execution settings of MXNet 1.9.1's engine.

MXNet's engine can bundle up to ``size`` consecutive operators into one scheduled task.
mxmod runs every operator at once, in order, on the calling thread, so there is nothing to
bundle: the setting is kept (per thread, as MXNet keeps it) and returned, and results are the
same for every size, as they are in MXNet."""
import threading

from .base import MXNetError, integer_types

__all__ = ['set_bulk_size', 'bulk']

_STATE = threading.local()


def set_bulk_size(size):
    """Set the maximum number of operators bundled into one bulk (0: no bulking).

    Parameters
    ----------
    size : int
        At least 0.

    Returns
    -------
    int
        The previous size.
    """
    if isinstance(size, bool) or not isinstance(size, integer_types):
        raise MXNetError('set_bulk_size: size must be an int, got %r' % (size,))
    if size < 0:
        raise MXNetError('set_bulk_size: size must be >= 0, got %d' % size)
    previous = getattr(_STATE, 'size', 0)
    _STATE.size = int(size)
    return previous


class _BulkScope(object):
    """``with`` scope that sets the bulk size and restores the previous one on exit."""

    def __init__(self, size):
        self._size = size
        self._old_size = None

    def __enter__(self):
        self._old_size = set_bulk_size(self._size)
        return self

    def __exit__(self, ptype, value, trace):
        set_bulk_size(self._old_size)


def bulk(size):
    """A scope in which up to ``size`` operators are bundled (see the module notes)::

        with mx.engine.bulk(10):
            x = mx.nd.zeros((1,))
            for _ in range(100):
                x += 1
    """
    return _BulkScope(size)
