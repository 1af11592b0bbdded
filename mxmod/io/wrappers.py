"""Iterators that wrap other iterators: ResizeIter (fixed number of batches per epoch) and
PrefetchingIter (reads ahead in background threads)."""
import threading

from ..base import MXNetError
from .base import DataBatch, DataDesc, DataIter

__all__ = ['ResizeIter', 'PrefetchingIter']


class _CurrentBatchIter(DataIter):
    """A DataIter whose getdata/getlabel/getindex/getpad read ``self.current_batch``."""

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class ResizeIter(_CurrentBatchIter):
    """Make an iterator yield exactly ``size`` batches per epoch.

    The wrapped iterator is reset and read again when it runs out before ``size`` batches.

    Parameters
    ----------
    data_iter : DataIter
        The iterator to resize.
    size : int
        Batches per epoch.
    reset_internal : bool, optional
        Whether ``reset`` also resets ``data_iter`` (default True).
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super(ResizeIter, self).__init__()
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, 'default_bucket_key'):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        """Start a new epoch of ``size`` batches."""
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        """Fetch the next batch of the wrapped iterator (restarting it when exhausted)."""
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True


class _Prefetcher(object):
    """One wrapped iterator and the thread reading it ahead, one batch at a time.

    The thread holds only this object (not the PrefetchingIter), so dropping the
    PrefetchingIter stops the threads."""

    def __init__(self, data_iter):
        self.data_iter = data_iter
        self.ready = threading.Event()
        self.taken = threading.Event()
        self.taken.set()
        self.running = True
        self.batch = None
        self.error = None
        self.thread = threading.Thread(target=_prefetch_loop, args=(self,),
                                       name='PrefetchingIter', daemon=True)
        self.thread.start()

    def request(self):
        """Let the thread read the next batch."""
        self.ready.clear()
        self.taken.set()

    def stop(self):
        self.running = False
        self.taken.set()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join()


def _prefetch_loop(slot):
    """Thread body: wait until the last batch is taken, read the next one, signal it is ready."""
    while True:
        slot.taken.wait()
        slot.taken.clear()
        if not slot.running:
            return
        try:
            slot.batch, slot.error = slot.data_iter.next(), None
        except StopIteration:
            slot.batch, slot.error = None, None
        except BaseException as err:  # pylint: disable=broad-except
            slot.batch, slot.error = None, err  # re-raised in the caller's thread
        slot.ready.set()


def _renamed(descs, renames):
    if renames is None:
        return descs
    out = []
    for desc in descs:
        name = desc[0]
        if name not in renames:
            raise KeyError('PrefetchingIter: no new name for %r in rename map %s' % (name, renames))
        dtype = desc.dtype if isinstance(desc, DataDesc) else DataDesc(*desc).dtype
        out.append(DataDesc(renames[name], desc[1], dtype))
    return out


class PrefetchingIter(_CurrentBatchIter):
    """Read batches of one or more iterators ahead, in one background thread per iterator.

    Batches of several iterators are joined: their data (and labels) are concatenated as lists.
    An exception raised while reading in a thread is raised again by ``next()``.

    Parameters
    ----------
    iters : DataIter or list of DataIter
        The iterators to read ahead.
    rename_data : list of dict, optional
        For the i-th iterator, a map ``{old_name: new_name}`` for every entry of its provide_data.
    rename_label : list of dict, optional
        Likewise for provide_label.
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super(PrefetchingIter, self).__init__()
        self._slots = []
        if not isinstance(iters, list):
            iters = [iters]
        if not iters:
            raise ValueError('PrefetchingIter needs at least one iterator')
        self.n_iter = len(iters)
        self.iters = iters
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.current_batch = None
        self._slots = [_Prefetcher(it) for it in iters]

    def __del__(self):
        for slot in getattr(self, '_slots', []):
            slot.stop()

    @property
    def provide_data(self):
        """Data descriptions of all iterators, renamed by ``rename_data``."""
        renames = self.rename_data or [None] * self.n_iter
        return sum([_renamed(it.provide_data, r) for r, it in zip(renames, self.iters)], [])

    @property
    def provide_label(self):
        """Label descriptions of all iterators, renamed by ``rename_label``."""
        renames = self.rename_label or [None] * self.n_iter
        return sum([_renamed(it.provide_label, r) for r, it in zip(renames, self.iters)], [])

    def reset(self):
        """Wait for the pending reads, reset every iterator and start reading again."""
        for slot in self._slots:
            slot.ready.wait()
        for data_iter in self.iters:
            data_iter.reset()
        for slot in self._slots:
            slot.request()

    def iter_next(self):
        """Take the read-ahead batches (raising a reader thread's exception, if any)."""
        for slot in self._slots:
            slot.ready.wait()
        for slot in self._slots:
            if slot.error is not None:
                raise slot.error
        batches = [slot.batch for slot in self._slots]
        if batches[0] is None:
            if any(batch is not None for batch in batches):
                raise MXNetError('PrefetchingIter: the iterators ended at different batches')
            return False
        if any(batch.pad != batches[0].pad for batch in batches):
            raise MXNetError('PrefetchingIter: the iterators gave different pads %s'
                             % [batch.pad for batch in batches])
        self.current_batch = DataBatch(sum([list(b.data) for b in batches], []),
                                       sum([list(b.label or []) for b in batches], []),
                                       batches[0].pad, batches[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        for slot in self._slots:
            slot.request()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration
