"""NDArrayIter: batches from in-memory arrays, with MXNet 1.9.1's last-batch handling."""
import numpy as np

from ..argcheck import positive_int, ArgumentValueError
from ..base import MXNetError
from .base import DataBatch, DataDesc, DataIter
from .utils import (_init_data, _getdata_by_idx, _slice_along_batch_axis, _concat_along,
                    _tile_first_axis)

__all__ = ['NDArrayIter']

_LAST_BATCH_MODES = ('pad', 'discard', 'roll_over')


def _check_lengths(data, label, layout):
    """Every data and label array holds at least as many examples as the first data array along
    the axis batches are sliced from (the layout's 'N'; the last axis without one). Longer ones
    are accepted, as in MXNet, which only reads their first entries."""
    axis = layout.find('N')
    arrays = [('data', name, arr) for name, arr in data] + \
        [('label', name, arr) for name, arr in label]
    for kind, name, arr in arrays:
        if not -arr.ndim <= axis < arr.ndim:
            raise ArgumentValueError('NDArrayIter: %s %r of shape %s has no batch axis %d '
                                     '(layout %r)' % (kind, name, tuple(arr.shape), axis, layout))
    first_name, first = data[0]
    count = first.shape[axis]
    for kind, name, arr in arrays:
        if arr.shape[axis] < count:
            raise ArgumentValueError(
                'NDArrayIter: %s %r has %d examples but data %r has %d; every data and label '
                'array needs one entry per example (batch axis %d of layout %r)'
                % (kind, name, arr.shape[axis], first_name, count, axis, layout))


class NDArrayIter(DataIter):
    """Iterate over NDArrays or numpy arrays in batches.

    Parameters
    ----------
    data : array, list of arrays or dict of str to array
        The inputs. numpy arrays (and anything else that is not an NDArray) are converted with
        ``mx.nd.array`` (float32). A single array is named ``data_name``; a list of several is
        named ``_0_<data_name>``, ``_1_<data_name>``, ...; dict entries are sorted by name.
    label : array, list of arrays or dict of str to array, optional
        The labels, named likewise from ``label_name``.
    batch_size : int
        Examples per batch.
    shuffle : bool, optional
        Shuffle the examples (``numpy.random.shuffle``) at construction and at every reset.
        As in MXNet, shuffled arrays become float32.
    last_batch_handle : {'pad', 'discard', 'roll_over'}, optional
        'pad' fills the last batch with examples from the beginning (``pad`` counts them);
        'discard' drops an incomplete last batch; 'roll_over' keeps it and completes it with the
        first examples of the next epoch (that batch reports the carried examples as ``pad``).
    data_name, label_name : str, optional
        Default input names.
    layout : str, optional
        Layout of the arrays; ``N`` marks the batch axis.
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False,
                 last_batch_handle='pad', data_name='data',
                 label_name='softmax_label', layout='NCHW'):
        batch_size = positive_int(batch_size, 'NDArrayIter: batch_size')
        super(NDArrayIter, self).__init__(batch_size)
        if last_batch_handle not in _LAST_BATCH_MODES:
            raise ValueError('last_batch_handle must be one of %s, got %r'
                             % (_LAST_BATCH_MODES, last_batch_handle))
        if not isinstance(layout, str):
            raise TypeError('NDArrayIter: layout must be a string such as \'NCHW\', got %r'
                            % (layout,))
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        _check_lengths(self.data, self.label, layout)
        if any(arr.stype != 'default' for _, arr in self.data + self.label) and \
                last_batch_handle != 'discard':
            raise NotImplementedError('`NDArrayIter` only supports ``CSRNDArray`` with '
                                      '`last_batch_handle` set to `discard`.')
        self.idx = np.arange(self.data[0][1].shape[0])
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = batch_size
        self.cursor = -self.batch_size
        self.num_data = self.idx.shape[0]
        self.layout = layout
        self._cache_data = None
        self._cache_label = None
        self.reset()
        self.data_list = [arr for _, arr in self.data] + [arr for _, arr in self.label]
        self.num_source = len(self.data_list)

    def _describe(self, named_arrays):
        axis = self.layout.find('N')
        descs = []
        for name, arr in named_arrays:
            shape = tuple(arr.shape[:axis]) + (self.batch_size,) + tuple(arr.shape[axis + 1:])
            descs.append(DataDesc(name, shape, arr.dtype, layout=self.layout))
        return descs

    @property
    def provide_data(self):
        """Name, batch shape, dtype and layout of each data input."""
        return self._describe(self.data)

    @property
    def provide_label(self):
        """Name, batch shape, dtype and layout of each label input."""
        return self._describe(self.label)

    def hard_reset(self):
        """Go back to the start, dropping any examples carried over by 'roll_over'."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        """Go back to the start (reshuffling when ``shuffle``); with 'roll_over' an incomplete
        last batch is carried into the next epoch."""
        if self.shuffle:
            self._shuffle_data()
        if self.last_batch_handle == 'roll_over' and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            # the next epoch starts by completing the carried batch
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        """Advance the cursor by one batch; return whether it still points into the data."""
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        """Return the next DataBatch (an incomplete last batch ends the epoch unless padded)."""
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[self.layout.find('N')] != self.batch_size:
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _getdata(self, data_source, start=None, end=None):
        """Slice ``[start, end)`` of every array in ``data_source`` along the batch axis."""
        start = 0 if start is None else start
        if end is None:
            end = data_source[0][1].shape[0] if data_source else 0
        axis = self.layout.find('N')
        return [_slice_along_batch_axis(arr, slice(start, end), axis) for _, arr in data_source]

    def _concat(self, first_data, second_data):
        """Join two lists of arrays pairwise along the batch axis."""
        if not first_data or not second_data:
            return first_data if first_data else second_data
        if len(first_data) != len(second_data):
            raise MXNetError('NDArrayIter: data sources differ in count (%d vs %d)'
                             % (len(first_data), len(second_data)))
        axis = self.layout.find('N')
        return [_concat_along(a, b, axis) for a, b in zip(first_data, second_data)]

    def _tile(self, data, repeats):
        return [_tile_first_axis(arr, repeats) for arr in data] if data else []

    def _batchify(self, data_source):
        """Assemble the current batch of ``data_source`` (data or label)."""
        if self.cursor >= self.num_data:
            raise MXNetError('NDArrayIter: the epoch is over (cursor %d >= %d examples); '
                             'call reset()' % (self.cursor, self.num_data))
        if self.last_batch_handle == 'roll_over' and -self.batch_size < self.cursor < 0:
            return self._rolled_over_batch(data_source)
        if self.last_batch_handle == 'pad' and self.cursor + self.batch_size > self.num_data:
            try:
                return self._padded_batch(data_source)
            except MemoryError:
                raise MXNetError('NDArrayIter: cannot pad %d examples to a batch of batch_size=%d'
                                 ': out of memory' % (self.num_data, self.batch_size)) from None
        end = min(self.cursor + self.batch_size, self.num_data)
        return self._getdata(data_source, self.cursor, end)

    def _rolled_over_batch(self, data_source):
        """First batch of an epoch after 'roll_over': carried examples + the first new ones."""
        if self._cache_data is None and self._cache_label is None:
            raise MXNetError('NDArrayIter: no examples were carried over from the previous epoch '
                             '(iterate with next() to the end of the epoch before reset())')
        cached = self._cache_data if self._cache_data is not None else self._cache_label
        fresh = self._getdata(data_source, end=self.cursor + self.batch_size)
        if self._cache_data is not None:
            self._cache_data = None
        else:
            self._cache_label = None
        return self._concat(cached, fresh)

    def _padded_batch(self, data_source):
        """Last batch with 'pad': the remaining examples, then examples from the start."""
        pad = self.batch_size - self.num_data + self.cursor
        first = self._getdata(data_source, start=self.cursor)
        if pad > self.num_data:
            second = self._tile(self._getdata(data_source, end=self.num_data), pad // self.num_data)
            if pad % self.num_data:
                second = self._concat(second, self._getdata(data_source, end=pad % self.num_data))
        else:
            second = self._getdata(data_source, end=pad)
        return self._concat(first, second)

    def getdata(self):
        """Return the data arrays of the current batch."""
        return self._batchify(self.data)

    def getlabel(self):
        """Return the label arrays of the current batch."""
        return self._batchify(self.label)

    def getpad(self):
        """Return the pad count of the current batch: the padded examples with 'pad', the
        carried examples in the first batch after 'roll_over', else 0."""
        if self.last_batch_handle == 'pad' and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == 'roll_over' and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        np.random.shuffle(self.idx)
        self.data = _getdata_by_idx(self.data, self.idx)
        self.label = _getdata_by_idx(self.label, self.idx)
