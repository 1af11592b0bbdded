"""Base of the iterators that stand in for MXNet's C++ ones (ImageRecordIter, MNISTIter): their
``getdata``/``getlabel`` return the current batch's single data/label NDArray, as MXDataIter's
do, and ``next`` returns the batch ``iter_next`` prepared in ``_current``."""
from .base import DataIter

__all__ = ['CurrentBatchIter']


class CurrentBatchIter(DataIter):
    """A DataIter whose ``iter_next`` stores the batch in ``self._current``."""

    _current = None

    def next(self):
        """Return the next DataBatch."""
        if self.iter_next():
            return self._current
        raise StopIteration

    def getdata(self):
        """Data NDArray of the current batch."""
        return self._current.data[0]

    def getlabel(self):
        """Label NDArray of the current batch."""
        return self._current.label[0]

    def getindex(self):
        """Index array of the current batch (None when unknown)."""
        return self._current.index

    def getpad(self):
        """Number of padding examples at the end of the current batch."""
        return self._current.pad
