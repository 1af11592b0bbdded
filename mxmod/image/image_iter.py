"""ImageIter: batches of augmented images from a RecordIO file or from image files named in a list,
with MXNet 1.9.1's last_batch_handle ('pad', 'discard', 'roll_over'), shuffling and parts."""
import os
import random

import numpy as np

from ..base import MXNetError, numeric_types
from ..context import Context
from ..io.base import DataBatch, DataIter, DataDesc
from ..ndarray.ndarray import from_xp, to_numpy
from .. import recordio
from .augmenters import CreateAugmenter
from .image import imdecode

__all__ = ['ImageIter']


def _read_list_file(path, dtype):
    table, keys = {}, []
    try:
        with open(path) as handle:
            for lineno, line in enumerate(handle, 1):
                fields = line.strip().split('\t')
                if len(fields) < 3:
                    if line.strip():
                        raise MXNetError('%s line %d: expected index<TAB>labels...<TAB>path'
                                         % (path, lineno))
                    continue
                key = int(fields[0])
                table[key] = (np.array([float(v) for v in fields[1:-1]], dtype), fields[-1])
                keys.append(key)
    except OSError as err:
        raise MXNetError('ImageIter: cannot open image list %s: %s'
                         % (path, err.strerror)) from None
    return table, keys


def _read_list(imglist, dtype):
    table, keys = {}, []
    for index, item in enumerate(imglist, 1):
        key = str(index)
        if len(item) > 2:
            label = np.array(item[:-1], dtype)
        elif isinstance(item[0], numeric_types):
            label = np.array([item[0]], dtype)
        else:
            label = np.array(item[0], dtype)
        table[key] = (label, item[-1])
        keys.append(key)
    return table, keys


class ImageIter(DataIter):
    """Iterate over images from a .rec file (``path_imgrec``, with ``path_imgidx`` for shuffling
    and parts) or from files named in a .lst file / ``imglist`` under ``path_root``.

    Parameters
    ----------
    batch_size : int
    data_shape : tuple of int
        (3, height, width) of each output image.
    label_width : int, optional
    path_imgrec, path_imglist, path_root, path_imgidx : str, optional
    shuffle : bool, optional
    part_index, num_parts : int, optional
    aug_list : list of Augmenter, optional
        Default: ``CreateAugmenter(data_shape, **kwargs)``.
    imglist : list, optional
        ``[label(s)..., path]`` items.
    data_name, label_name : str, optional
    dtype : {'float32', 'float64', 'int32', 'int64'}
        Label type.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
    kwargs :
        Passed to ``CreateAugmenter``.
    """

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle=False,
                 part_index=0, num_parts=1, aug_list=None, imglist=None, data_name='data',
                 label_name='softmax_label', dtype='float32', last_batch_handle='pad',
                 **kwargs):
        super(ImageIter, self).__init__(batch_size)
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise MXNetError('ImageIter needs path_imgrec, path_imglist or imglist')
        if dtype not in ('int32', 'float32', 'int64', 'float64'):
            raise MXNetError('ImageIter: %s label not supported' % dtype)
        if last_batch_handle not in ('pad', 'discard', 'roll_over'):
            raise MXNetError("ImageIter: last_batch_handle must be 'pad', 'discard' or "
                             "'roll_over', got %r" % (last_batch_handle,))
        self.imgrec, self.imgidx = self._open_rec(path_imgrec, path_imgidx)
        self.imglist, keys = None, None
        if path_imglist:
            self.imglist, keys = _read_list_file(path_imglist, dtype)
        elif isinstance(imglist, list):
            self.imglist, keys = _read_list(imglist, dtype)
        self.path_root = path_root
        self.check_data_shape(data_shape)
        self.provide_data = [DataDesc(data_name, (batch_size,) + tuple(data_shape))]
        self.provide_label = [DataDesc(label_name, (batch_size, label_width) if label_width > 1
                                       else (batch_size,))]
        self.data_shape, self.label_width, self.shuffle = tuple(data_shape), label_width, shuffle
        self.seq = self._sequence(keys, shuffle, num_parts, path_imgidx)
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise MXNetError('ImageIter: part_index %d not in [0, %d)'
                                 % (part_index, num_parts))
            share = len(self.seq) // num_parts
            self.seq = self.seq[part_index * share:(part_index + 1) * share]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = self._cache_label = self._cache_idx = None
        self.reset()

    @staticmethod
    def _open_rec(path_imgrec, path_imgidx):
        if not path_imgrec:
            return None, None
        if path_imgidx:
            rec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, 'r')
            return rec, list(rec.keys)
        return recordio.MXRecordIO(path_imgrec, 'r'), None

    def _sequence(self, keys, shuffle, num_parts, path_imgidx):
        if self.imgrec is None:
            return keys
        if shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise MXNetError('ImageIter: shuffle and num_parts > 1 need path_imgidx for '
                                 'a .rec file')
            return self.imgidx
        return None

    def reset(self):
        """Start a new epoch (keeping a rolled-over partial batch)."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != 'roll_over' or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """Start a new epoch and drop rolled-over data."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = self._cache_label = self._cache_idx = None

    def next_sample(self):
        """(label, encoded image bytes) of the next image; StopIteration at the end."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is None:
            payload = self.imgrec.read()
            if payload is None:
                if self.last_batch_handle != 'discard':
                    self.imgrec.reset()
                raise StopIteration
            header, img = recordio.unpack(payload)
            return header.label, img
        if self.cur >= self.num_image:
            if self.last_batch_handle != 'discard':
                self.cur = 0
            raise StopIteration
        idx = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is not None:
            header, img = recordio.unpack(self.imgrec.read_idx(idx))
            return (header.label if self.imglist is None else self.imglist[idx][0]), img
        label, fname = self.imglist[idx]
        return label, self.read_image(fname)

    def _batchify(self, batch_data, batch_label, start=0):
        i = start
        try:
            while i < self.batch_size:
                label, raw = self.next_sample()
                data = self.augmentation_transform(self.imdecode(raw))
                batch_data[i] = to_numpy(self.postprocess_data(data).asnumpy())
                batch_label[i] = np.reshape(label, batch_label.shape[1:])
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self):
        """Return the next DataBatch."""
        if self._cache_data is not None:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data, batch_label = self._new_batch()
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == 'discard':
                raise StopIteration
            if self.last_batch_handle == 'roll_over' and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = \
                    batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == 'pad':
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        ctx = Context('cpu', 0)
        return DataBatch([from_xp(batch_data, ctx)], [from_xp(batch_label, ctx)], pad=pad)

    def _new_batch(self):
        """Empty (data, label) host buffers of one batch."""
        return (np.zeros((self.batch_size,) + self.data_shape, np.float32),
                np.empty(self.provide_label[0].shape, np.float32))

    def check_data_shape(self, data_shape):
        """Raise ValueError unless data_shape is (3, H, W)."""
        if len(data_shape) != 3:
            raise ValueError('data_shape should have length 3, with dimensions CxHxW')
        if data_shape[0] != 3:
            raise ValueError('This iterator expects inputs to have 3 channels.')

    def check_valid_image(self, data):
        """Raise RuntimeError for an empty image."""
        if len(data[0].shape) == 0:
            raise RuntimeError('Data shape is wrong')

    def imdecode(self, s):
        """Decode image bytes; the error names the image that failed."""
        try:
            return imdecode(s)
        except Exception as err:  # pylint: disable=broad-except
            if self.seq is not None and self.num_image:
                idx = self.seq[(self.cur % self.num_image) - 1]
            else:
                idx = self.cur - 1
            what = ('filename: %s' % self.imglist[idx][1]) if self.imglist is not None \
                else ('index: %s' % idx)
            raise MXNetError('Broken image %s, %s' % (what, err)) from None

    def read_image(self, fname):
        """The bytes of image file ``fname`` (under path_root)."""
        path = os.path.join(self.path_root, fname) if self.path_root else fname
        try:
            with open(path, 'rb') as handle:
                return handle.read()
        except OSError as err:
            raise MXNetError('ImageIter: cannot read image %s: %s' % (path, err.strerror)) \
                from None

    def augmentation_transform(self, data):
        """Apply the augmenters to one decoded image."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """HWC → CHW."""
        return datum.transpose((2, 0, 1))
