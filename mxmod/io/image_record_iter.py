"""ImageRecordIter (and ImageRecordUInt8Iter / ImageRecordInt8Iter): batches of images decoded
from a RecordIO file, augmented and normalized as MXNet 1.9.1's C++ iterator does.

Decoding and augmentation run in ``preprocess_threads`` worker threads (OpenCV and numpy release
the GIL, so they run in parallel); up to ``prefetch_buffer`` batches are prepared ahead of the
caller. A worker's error is raised by ``next()``; the threads end with the iterator."""
import atexit
import itertools
import threading
import weakref
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..base import MXNetError
from ..context import Context
from ..ndarray.ndarray import from_xp
from .base import DataBatch, DataDesc
from .current_batch import CurrentBatchIter
from .image_record_aug import AugmentParam
from .image_record_work import Normalizer, LabelSource, process_image
from .record_source import RecordSource

__all__ = ['ImageRecordIter', 'ImageRecordUInt8Iter', 'ImageRecordInt8Iter']

_DTYPES = {None: np.float32, 'float32': np.float32, 'float64': np.float64,
           'float16': np.float16, 'int64': np.int64, 'int32': np.int32, 'uint8': np.uint8,
           'int8': np.int8}
_LIVE = weakref.WeakSet()


def _shutdown_all():
    for it in list(_LIVE):
        it.close()


# run before concurrent.futures' own exit hook, which would first finish every queued image
try:
    threading._register_atexit(_shutdown_all)  # pylint: disable=protected-access
except AttributeError:      # pragma: no cover (Python without the hook)
    atexit.register(_shutdown_all)


class _Plan(object):
    """The order of records over epochs, with round_batch's wrap-around carried over."""

    def __init__(self, count, batch_size, round_batch, shuffle, seed):
        self.count, self.batch_size, self.round_batch = count, batch_size, round_batch
        self.rng = np.random.RandomState(111 + seed) if shuffle else None
        self.order = self._new_order()
        self.cursor = 0

    def _new_order(self):
        order = np.arange(self.count)
        if self.rng is not None:
            self.rng.shuffle(order)
        return order

    def epoch(self):
        """Yield (positions, pad) for each batch of one epoch."""
        if self.cursor >= self.count:
            self.order, self.cursor = self._new_order(), 0
        while self.cursor < self.count:
            take = self.order[self.cursor:self.cursor + self.batch_size]
            self.cursor += len(take)
            pad = self.batch_size - len(take)
            if pad and self.round_batch:
                if pad > self.count:
                    raise MXNetError('ImageRecordIter: number of input images must be bigger '
                                     'than the batch size (%d images, batch_size %d)'
                                     % (self.count, self.batch_size))
                self.order = self._new_order()
                take = np.concatenate([take, self.order[:pad]])
                self.cursor = pad
                yield take, pad
                return
            yield take, pad


_ITERATORS_MADE = itertools.count()


class ImageRecordIter(CurrentBatchIter):
    """Iterate over a RecordIO file of images (made by im2rec) in augmented batches.

    Keyword-only, MXNet's parameter names and defaults; unknown keywords are ignored, as in
    MXNet. The main ones:

    Parameters
    ----------
    path_imgrec : str
        The .rec file.
    data_shape : tuple of int
        (channels, height, width) of each output image; channels 1 decodes grayscale.
    batch_size : int
        Images per batch.
    path_imgidx : str, optional
        The .idx file; with it, parts are cut by record count and shuffling is by record.
    path_imglist : str, optional
        A .lst file whose labels replace the records' labels (looked up by record id).
    label_width : int, optional
        Labels per image (default 1; the label array is then (batch_size,)).
    shuffle : bool, optional
        Shuffle the records each epoch (default False), with ``seed``.
    resize, rand_crop, rand_mirror, mirror, max_random_scale, min_random_scale,
    max_aspect_ratio, min_aspect_ratio, max_random_area, min_random_area, random_resized_crop,
    max_rotate_angle, rotate, max_shear_ratio, max_crop_size, min_crop_size, pad, fill_value,
    inter_method, brightness, contrast, saturation, pca_noise, random_h, random_s, random_l :
        Augmentations, applied in MXNet's order (see ``aug_default``).
    mean_img, mean_r, mean_g, mean_b, mean_a, std_r, std_g, std_b, std_a, scale,
    max_random_contrast, max_random_illumination :
        Normalization ``(pixel - mean) * scale / std`` (none for dtype uint8). A ``mean_img``
        file that does not exist is computed over the data and saved there.
    round_batch : bool, optional
        Fill the last batch with images from the start (default True; ``pad`` still counts
        them, and the next epoch continues after them).
    part_index, num_parts : int, optional
        Read only part ``part_index`` of ``num_parts`` (one per worker/rank).
    preprocess_threads : int, optional
        Decoding threads (default 4).
    prefetch_buffer : int, optional
        Batches prepared ahead (default 4).
    seed_aug : int, optional
        Seed the augmentation of each image by its position, for reproducible batches.
    dtype : str, optional
        Output data type (default float32).
    data_name, label_name : str, optional
        Names in provide_data / provide_label.
    """

    def __init__(self, **kwargs):
        self._pool = None
        kwargs = dict(kwargs)
        for name in ('path_imgrec', 'data_shape', 'batch_size'):
            if name not in kwargs:
                raise MXNetError('%s: the parameter %s is required'
                                 % (type(self).__name__, name))
        super(ImageRecordIter, self).__init__(int(kwargs['batch_size']))
        if self.batch_size <= 0:
            raise MXNetError('ImageRecordIter: batch_size must be positive, got %d'
                             % self.batch_size)
        # without seed_aug each image's augmentation stream still depends only on this
        # iterator's rank among those the process created and on the image's position, so that
        # a program draws the same augmentations on every run (as MXNet's fixed per-thread seeds)
        self._stream_id = next(_ITERATORS_MADE)
        self._setup(kwargs)
        _LIVE.add(self)

    def _setup(self, kwargs):
        data_shape = tuple(int(d) for d in kwargs['data_shape'])
        if len(data_shape) != 3 or data_shape[0] not in (1, 3, 4):
            raise MXNetError('ImageRecordIter: invalid data_shape %s: expected (channels, '
                             'height, width) with 1, 3 or 4 channels' % (data_shape,))
        dtype = kwargs.get('dtype', self._default_dtype())
        if dtype not in _DTYPES:
            raise MXNetError('ImageRecordIter: unknown dtype %r (one of %s)'
                             % (dtype, ', '.join(str(k) for k in _DTYPES if k)))
        self.dtype = np.dtype(_DTYPES[dtype])
        self.data_shape = data_shape
        self.label_width = int(kwargs.get('label_width', 1))
        self.aug = AugmentParam(data_shape, kwargs)
        self.source = RecordSource(kwargs['path_imgrec'], int(kwargs.get('part_index', 0)),
                                   int(kwargs.get('num_parts', 1)), kwargs.get('path_imgidx'))
        if not len(self.source):
            raise MXNetError('ImageRecordIter: %s holds no records (for part %s of %s)'
                             % (self.source.uri, kwargs.get('part_index', 0),
                                kwargs.get('num_parts', 1)))
        self.labels = LabelSource(kwargs.get('path_imglist'), self.label_width, self.source.uri)
        self.seed_aug = kwargs.get('seed_aug')
        self.mirror = (_flag(kwargs.get('mirror')), _flag(kwargs.get('rand_mirror')))
        self._plan = _Plan(len(self.source), self.batch_size,
                           _flag(kwargs.get('round_batch', True)),
                           _flag(kwargs.get('shuffle')), int(kwargs.get('seed', 0)))
        self._threads = max(1, int(kwargs.get('preprocess_threads', 4)))
        self._prefetch = max(1, int(kwargs.get('prefetch_buffer', 4)))
        self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix='ImageRecordIter')
        self._ctx = Context('cpu', 0)
        self._image_counter = 0
        self.norm = Normalizer(kwargs, self.dtype, data_shape)
        if self.norm.needs_mean_image:
            self.norm.set_mean_image(self._compute_mean())
        label_shape = (self.batch_size,) if self.label_width == 1 else \
            (self.batch_size, self.label_width)
        self.provide_data = [DataDesc(kwargs.get('data_name', 'data'),
                                      (self.batch_size,) + data_shape, self.dtype)]
        self.provide_label = [DataDesc(kwargs.get('label_name', 'softmax_label'), label_shape,
                                       np.float32)]
        self._start_epoch()

    @staticmethod
    def _default_dtype():
        return 'float32'

    # the per-image work run in the worker threads: fn(it, position, seed, data, label, slot,
    # norm) fills data[slot] and label[slot]
    _work = staticmethod(process_image)

    def _label_buffer(self):
        """A fresh label array for one batch."""
        return np.zeros((self.batch_size, self.label_width), np.float32)

    def _flat_label(self):
        """Whether batches carry a (batch_size,) label instead of (batch_size, width)."""
        return self.label_width == 1

    def _start_epoch(self):
        self._batches = self._plan.epoch()
        self._pending = deque()
        self._current = None
        for _ in range(self._prefetch):
            self._submit_next()

    def _submit_next(self):
        """Queue the work of the next planned batch; False at the end of the epoch."""
        try:
            positions, pad = next(self._batches)
        except StopIteration:
            return False
        data = np.zeros((self.batch_size,) + self.data_shape, self.dtype)
        label = self._label_buffer()
        futures = []
        for slot, pos in enumerate(positions):
            stream = self._image_counter + slot
            seed = [int(self.seed_aug) + stream + 111] if self.seed_aug is not None \
                else [111, self._stream_id, stream]
            futures.append(self._pool.submit(self._work, self, int(pos), seed,
                                             data, label, slot, self.norm))
        self._image_counter += len(positions)
        self._pending.append((data, label, pad, futures))
        return True

    def _compute_mean(self):
        """Mean of the processed images (mean 0), saved to mean_img; MXNet's CreateMeanImg."""
        total = np.zeros(self.data_shape, np.float64)
        count = 0
        saved = self.dtype
        self.dtype = self.norm.dtype = np.dtype(np.float32)
        for data, _, _, futures in self._mean_batches():
            for fut in futures:
                fut.result()
            total += data[:len(futures)].sum(axis=0, dtype=np.float64)
            count += len(futures)
        self.dtype = self.norm.dtype = saved
        self._image_counter = 0
        mean = (total / max(count, 1)).astype(np.float32)
        self.norm.save_mean_image(mean)
        return mean

    def _mean_batches(self):
        plan = _Plan(len(self.source), self.batch_size, False, False, 0)
        self._batches = plan.epoch()
        self._pending = deque()
        while self._submit_next():
            yield self._pending.popleft()

    def reset(self):
        """Start a new epoch (after a wrapped last batch, it continues after the wrap)."""
        self._drain()
        self._start_epoch()

    def _drain(self):
        for _, _, _, futures in getattr(self, '_pending', ()):
            for fut in futures:
                fut.cancel()
            for fut in futures:
                if not fut.cancelled():
                    fut.exception()

    def iter_next(self):
        """Move to the next batch; return whether there is one."""
        if not self._pending:
            return False
        data, label, pad, futures = self._pending.popleft()
        try:
            for fut in futures:
                fut.result()
        except BaseException:
            self._drain()
            self._pending.clear()
            raise
        self._submit_next()
        if self._flat_label():
            label = label.reshape(-1)
        self._current = DataBatch(data=[from_xp(data, self._ctx)],
                                  label=[from_xp(label, self._ctx)], pad=pad,
                                  index=np.zeros(self.batch_size, np.uint64),
                                  provide_data=self.provide_data,
                                  provide_label=self.provide_label)
        return True

    def close(self):
        """Stop the worker threads and close the file."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if getattr(self, 'source', None) is not None:
            self.source.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # pylint: disable=broad-except
            pass


def _flag(value):
    if isinstance(value, str):
        return value.strip().lower() in ('1', 'true')
    return bool(value)


class ImageRecordUInt8Iter(ImageRecordIter):
    """ImageRecordIter with ``dtype='uint8'`` (no normalization); deprecated in MXNet."""

    @staticmethod
    def _default_dtype():
        return 'uint8'


class ImageRecordInt8Iter(ImageRecordIter):
    """ImageRecordIter with ``dtype='int8'`` (pixel minus rounded mean); deprecated in MXNet."""

    @staticmethod
    def _default_dtype():
        return 'int8'
