"""MNISTIter: batches from MNIST's idx-ubyte image and label files, as MXNet 1.9.1's C++ iterator
gives them (pixels / 256, shuffled once at load time, the last incomplete batch dropped)."""
import gzip
import struct

import numpy as np

from ..base import MXNetError
from ..context import Context
from ..ndarray.ndarray import from_xp
from .base import DataBatch, DataDesc
from .current_batch import CurrentBatchIter

__all__ = ['MNISTIter']


def _open(path):
    try:
        handle = open(path, 'rb')
    except OSError as err:
        raise MXNetError('MNISTIter: cannot open %s: %s' % (path, err.strerror)) from None
    if handle.read(2) == b'\x1f\x8b':
        handle.close()
        return gzip.open(path, 'rb')
    handle.seek(0)
    return handle


def _part(count, num_parts, part_index):
    if not (num_parts > 0 and 0 <= part_index < num_parts):
        raise MXNetError('MNISTIter: part_index %d must be in [0, num_parts=%d)'
                         % (part_index, num_parts))
    return (int(float(count) / num_parts * part_index),
            int(float(count) / num_parts * (part_index + 1)))


def read_idx(path, num_parts=1, part_index=0):
    """The array in an idx-ubyte file (images: (n, rows, cols); labels: (n,)), one part of it."""
    with _open(path) as handle:
        head = handle.read(4)
        if len(head) < 4 or head[:2] != b'\0\0' or head[2] != 8:
            raise MXNetError('MNISTIter: %s is not an idx-ubyte file (magic %r)' % (path, head))
        ndim = head[3]
        dims = struct.unpack('>%dI' % ndim, handle.read(4 * ndim))
        data = np.frombuffer(handle.read(), np.uint8)
    size = int(np.prod(dims))
    if data.size < size:
        raise MXNetError('MNISTIter: %s is truncated: its header promises %s values, it holds %d'
                         % (path, dims, data.size))
    start, end = _part(dims[0], num_parts, part_index)
    return data[:size].reshape(dims)[start:end]


class MNISTIter(CurrentBatchIter):
    """Iterate over MNIST in batches (keyword arguments, unknown ones ignored as in MXNet).

    Parameters
    ----------
    image : str
        The images file (``train-images-idx3-ubyte``; gzip accepted).
    label : str
        The labels file.
    batch_size : int, optional
        Default 128; the last incomplete batch is dropped.
    shuffle : bool, optional
        Shuffle once when loading (default True), with ``seed``.
    flat : bool, optional
        Batches of (batch, rows*cols) instead of (batch, 1, rows, cols).
    seed : int, optional
    silent : bool, optional
        Accepted for compatibility.
    num_parts, part_index : int, optional
        Read only this part of the data.
    data_name, label_name : str, optional
    """

    def __init__(self, image='./train-images-idx3-ubyte', label='./train-labels-idx1-ubyte',
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False, num_parts=1,
                 part_index=0, data_name='data', label_name='softmax_label', **kwargs):
        super(MNISTIter, self).__init__(int(batch_size))
        images = read_idx(image, int(num_parts), int(part_index))
        labels = read_idx(label, int(num_parts), int(part_index))
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise MXNetError('MNISTIter: %s holds %s images but %s holds %s labels'
                             % (image, images.shape, label, labels.shape))
        images = images.astype(np.float32) * np.float32(1.0 / 256.0)
        labels = labels.astype(np.float32)
        if _true(shuffle):
            order = np.random.RandomState(111 + int(seed)).permutation(len(labels))
            images, labels = images[order], labels[order]
        rows, cols = images.shape[1:]
        self._images = images.reshape(len(images), rows * cols) if _true(flat) \
            else images.reshape(len(images), 1, rows, cols)
        self._labels = labels
        self._loc = 0
        self._current = None
        self._ctx = Context('cpu', 0)
        self.provide_data = [DataDesc(data_name, (self.batch_size,) + self._images.shape[1:])]
        self.provide_label = [DataDesc(label_name, (self.batch_size,))]

    def reset(self):
        """Start again from the first batch (same order)."""
        self._loc = 0

    def iter_next(self):
        """Move to the next batch; return whether there is one."""
        end = self._loc + self.batch_size
        if end > len(self._labels):
            return False
        data = from_xp(self._images[self._loc:end].copy(), self._ctx)
        label = from_xp(self._labels[self._loc:end].copy(), self._ctx)
        self._current = DataBatch([data], [label], pad=0, index=None,
                                  provide_data=self.provide_data,
                                  provide_label=self.provide_label)
        self._loc = end
        return True


def _true(value):
    if isinstance(value, str):
        return value.strip().lower() in ('1', 'true')
    return bool(value)
