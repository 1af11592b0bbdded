"""CSVIter: batches read from CSV files, with MXNet 1.9.1's last-batch and reset semantics.

MXNet runs CSV parsing, batching and prefetching in C++; this is the same pipeline in Python:
rows are parsed when the iterator is built, and a batch loader fills one reusable batch buffer
(so with ``round_batch=False`` the padded rows of the last batch still hold the batch before it,
exactly as MXNet returns them)."""
import os
import re

import numpy as np

from ..base import MXNetError
from ..context import Context
from ..ndarray.ndarray import from_xp
from .base import DataBatch, DataDesc, DataIter

__all__ = ['CSVIter']

_DTYPES = {None: np.float32, 'float32': np.float32, 'int32': np.int32, 'int64': np.int64}
_FLOAT_PREFIX = re.compile(r'[+-]?(?:inf(?:inity)?|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)',
                           re.IGNORECASE)
_INT_PREFIX = re.compile(r'[+-]?\d+')


def _csv_files(path):
    """The files behind ``path``: the file itself, or every file of a directory, sorted."""
    if os.path.isdir(path):
        names = sorted(os.listdir(path))
        return [os.path.join(path, n) for n in names if os.path.isfile(os.path.join(path, n))]
    if not os.path.exists(path):
        raise MXNetError('CSVIter: cannot open %r: no such file or directory' % path)
    return [path]


def _parse_field(text, is_float):
    """Value of one CSV field: its longest numeric prefix (None when it has none)."""
    try:
        return float(text) if is_float else int(text)
    except ValueError:
        match = (_FLOAT_PREFIX if is_float else _INT_PREFIX).match(text)
        if match is None:
            return None
        return float(match.group(0)) if is_float else int(match.group(0))


def _read_rows(path, dtype, width, shape_name):
    """Parse every non-empty line of the csv file(s) at ``path`` into a (rows, width) array."""
    is_float = np.dtype(dtype).kind == 'f'
    rows = []
    for fname in _csv_files(path):
        with open(fname, 'r') as handle:
            for lineno, line in enumerate(handle, 1):
                fields = [f.strip() for f in line.split(',')]
                if not any(fields):
                    continue
                values = [_parse_field(f, is_float) for f in fields if f]
                values = [v for v in values if v is not None]
                if len(values) != width:
                    raise MXNetError('CSVIter: %s line %d has %d values, but %s needs %d'
                                     % (fname, lineno, len(values), shape_name, width))
                rows.append(values)
    if not rows:
        return np.zeros((0, width), dtype=dtype)
    wide = np.array(rows, dtype=np.float64 if is_float else np.int64)
    return wide.astype(dtype)


class _BatchLoader(object):
    """Groups rows into batches in one reused buffer, as MXNet's C++ BatchLoader does."""

    def __init__(self, sources, batch_size, round_batch):
        self.sources = sources
        self.num_rows = sources[0].shape[0]
        self.batch_size = batch_size
        self.round_batch = round_batch
        self.buffers = [np.zeros((batch_size,) + src.shape[1:], src.dtype) for src in sources]
        self.index = np.zeros(batch_size, np.uint64)
        self.pos = 0
        self.overflow = 0

    def before_first(self):
        # after a wrapped batch the next epoch goes on from where the wrap stopped
        if not self.round_batch or self.overflow == 0:
            self.pos = 0
        else:
            self.overflow = 0

    def _copy_row(self, top):
        for buf, src in zip(self.buffers, self.sources):
            buf[top] = src[self.pos]
        self.index[top] = self.pos
        self.pos += 1

    def next(self):
        """Fill the buffer with the next batch; return its pad count, or None at the end."""
        if self.overflow:
            return None
        top = 0
        while top < self.batch_size and self.pos < self.num_rows:
            self._copy_row(top)
            top += 1
        if top == self.batch_size:
            return 0
        if top == 0:
            return None
        if not self.round_batch:
            return self.batch_size - top
        self.pos = 0
        while top < self.batch_size:
            if self.pos >= self.num_rows:
                raise MXNetError('CSVIter: number of input must be bigger than batch size '
                                 '(%d rows, batch_size %d)' % (self.num_rows, self.batch_size))
            self._copy_row(top)
            top += 1
            self.overflow += 1
        return self.overflow


class CSVIter(DataIter):
    """Iterate over a CSV file (or a directory of them) in batches.

    Every line is one example of ``data_shape``; labels come from ``label_csv`` (one line per
    example) or are all 0. Arguments are keyword-only, as in MXNet.

    Parameters
    ----------
    data_csv : str
        The data CSV file or a directory of CSV files (read in name order).
    data_shape : tuple of int
        Shape of one example.
    label_csv : str, optional
        The label CSV file or directory; ``'NULL'`` (default) means every label is 0.
    label_shape : tuple of int, optional
        Shape of one label (default ``(1,)``).
    batch_size : int
        Examples per batch.
    round_batch : bool, optional
        If True (default) the last batch is completed with examples from the beginning, and
        the next epoch after ``reset()`` continues after them; if False the last batch is
        padded (``pad`` says how many rows to ignore) and every epoch starts at the first row.
    prefetch_buffer : int, optional
        Accepted for compatibility (batches are read on demand).
    ctx : {'cpu', 'gpu'}, optional
        Accepted for compatibility; batches are on cpu(0) as in MXNet.
    dtype : {None, 'float32', 'int32', 'int64'}, optional
        Element type to parse into (None means float32).
    data_name, label_name : str, optional
        Names in provide_data / provide_label.
    """

    def __init__(self, *, data_csv, data_shape, batch_size, label_csv='NULL', label_shape=(1,),
                 round_batch=True, prefetch_buffer=4, ctx='gpu', dtype=None,
                 data_name='data', label_name='softmax_label'):
        super(CSVIter, self).__init__(int(batch_size))
        if dtype not in _DTYPES:
            raise MXNetError('%s is not supported for CSVIter (use float32, int32 or int64)'
                             % dtype)
        if self.batch_size <= 0:
            raise ValueError('CSVIter: batch_size must be positive, got %r' % (batch_size,))
        dtype = _DTYPES[dtype]
        data_shape, label_shape = tuple(data_shape), tuple(label_shape)
        data = _read_rows(data_csv, dtype, int(np.prod(data_shape)),
                          'data_shape %s' % (data_shape,))
        data = data.reshape((-1,) + data_shape)
        labels = self._read_labels(label_csv, label_shape, dtype, data.shape[0])
        self._loader = _BatchLoader([data, labels], self.batch_size, bool(round_batch))
        self._ctx = Context('cpu', 0)
        self._current = None
        self.first_batch = None
        if not self._load():
            raise MXNetError('CSVIter: %s holds no rows' % data_csv)
        self.first_batch = self._current
        first_data, first_label = self.first_batch.data[0], self.first_batch.label[0]
        self.provide_data = [DataDesc(data_name, first_data.shape, first_data.dtype)]
        self.provide_label = [DataDesc(label_name, first_label.shape, first_label.dtype)]

    @staticmethod
    def _read_labels(label_csv, label_shape, dtype, num_rows):
        if label_csv is None or label_csv == 'NULL':
            return np.zeros((num_rows, 1), dtype=dtype)  # MXNet's placeholder label is (1,)
        labels = _read_rows(label_csv, dtype, int(np.prod(label_shape)),
                            'label_shape %s' % (label_shape,))
        if labels.shape[0] < num_rows:
            raise MXNetError("CSVIter: Data CSV's row is smaller than the number of rows in "
                             "label_csv: %s has %d rows for %d data rows"
                             % (label_csv, labels.shape[0], num_rows))
        return labels[:num_rows].reshape((num_rows,) + label_shape)

    def reset(self):
        """Start a new epoch (see ``round_batch`` for where it starts)."""
        self.first_batch = None
        self._loader.before_first()

    def _load(self):
        """Read the next batch from the loader into ``_current``; False at the end."""
        pad = self._loader.next()
        if pad is None:
            return False
        data, label = (from_xp(buf.copy(), self._ctx) for buf in self._loader.buffers)
        if label.ndim > 1 and label.shape[1] == 1:  # MXNet hands labels out flattened
            label = from_xp(label.handle.reshape(-1)[:label.shape[0]].copy(), self._ctx)
        self._current = DataBatch(data=[data], label=[label], pad=pad,
                                  index=self._loader.index.copy())
        return True

    def iter_next(self):
        """Move to the next batch; return whether there is one."""
        if self.first_batch is not None:
            self._current, self.first_batch = self.first_batch, None
            return True
        return self._load()

    def next(self):
        """Return the next DataBatch."""
        if self.iter_next():
            return self._current
        raise StopIteration

    def getdata(self):
        """The data NDArray of the current batch."""
        return self._current.data[0]

    def getlabel(self):
        """The label NDArray of the current batch."""
        return self._current.label[0]

    def getindex(self):
        """Row numbers (uint64) of the examples in the current batch."""
        return self._current.index

    def getpad(self):
        """Number of padding rows at the end of the current batch."""
        return self._current.pad
