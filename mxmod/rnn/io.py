"""Text data for recurrent models: ``encode_sentences`` (tokens to integer ids) and
``BucketSentenceIter`` (language-model batches grouped into length buckets, for BucketingModule)."""
import bisect
import random

import numpy as np

from .. import ndarray
from ..argcheck import positive_int
from ..io import DataIter, DataBatch, DataDesc

__all__ = ['encode_sentences', 'BucketSentenceIter']


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key='\n', start_label=0,
                     unknown_token=None):
    """Map each token of each sentence to an integer id, growing the vocabulary as needed.

    Parameters
    ----------
    sentences : list of list of str
        Tokenized sentences.
    vocab : dict of str to int, optional
        Existing vocabulary. When given, unknown tokens are an error unless ``unknown_token``
        is set. When None a new vocabulary ``{invalid_key: invalid_label}`` is started.
    invalid_label : int, default -1
        Id reserved for ``invalid_key``; new ids skip it.
    invalid_key : str, default '\\n'
        Token of the reserved id (end of sentence).
    start_label : int, default 0
        First id given to a new token.
    unknown_token : str, optional
        Token that every unknown word is mapped to (it gets an id on first use).

    Returns
    -------
    result : list of list of int
        The encoded sentences.
    vocab : dict of str to int
        The (possibly extended) vocabulary.
    """
    next_id = start_label
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    result = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise KeyError('Unknown token %r: it is not in the given vocab and no '
                                   'unknown_token was set' % (word,))
                if next_id == invalid_label:
                    next_id += 1
                if unknown_token:
                    word = unknown_token
                vocab[word] = next_id
                next_id += 1
            coded.append(vocab[word])
        result.append(coded)
    return result, vocab


def _default_buckets(sentences, batch_size):
    """Every length that at least ``batch_size`` sentences have."""
    counts = np.bincount([len(s) for s in sentences])
    return [length for length, count in enumerate(counts) if count >= batch_size]


def _fill_buckets(sentences, buckets, invalid_label, dtype):
    """Pad each sentence into the smallest bucket that holds it; returns the non-empty buckets,
    their (n, length) arrays and how many sentences were too long."""
    rows = [[] for _ in buckets]
    discarded = 0
    for sent in sentences:
        slot = bisect.bisect_left(buckets, len(sent))
        if slot == len(buckets):
            discarded += 1
            continue
        row = np.full((buckets[slot],), invalid_label, dtype=dtype)
        row[:len(sent)] = sent
        rows[slot].append(row)
    kept = [(length, np.asarray(r, dtype=dtype)) for length, r in zip(buckets, rows) if r]
    return [k for k, _ in kept], [d for _, d in kept], discarded


class BucketSentenceIter(DataIter):
    """Language-model batches grouped by sentence length: the label of each step is the next
    token, padded with ``invalid_label``.

    Parameters
    ----------
    sentences : list of list of int
        Encoded sentences.
    batch_size : int
    buckets : list of int, optional
        Bucket lengths; by default every length occurring at least ``batch_size`` times.
        Sentences longer than the largest bucket are discarded.
    invalid_label : int, default -1
        Padding value (also the label after the last token).
    data_name : str, default 'data'
    label_name : str, default 'softmax_label'
    dtype : str, default 'float32'
    layout : {'NT', 'TN'}, default 'NT'
        (batch, time) or (time, batch).
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1, data_name='data',
                 label_name='softmax_label', dtype='float32', layout='NT'):
        super().__init__()
        if layout.find('N') not in (0, 1):
            raise ValueError('Invalid layout %r: must be NT (batch major) or TN (time major)'
                             % (layout,))
        batch_size = positive_int(batch_size, 'BucketSentenceIter: batch_size')
        buckets = sorted(buckets) if buckets else _default_buckets(sentences, batch_size)
        buckets, self.data, discarded = _fill_buckets(sentences, buckets, invalid_label, dtype)
        # MXNet prints this line (to stdout) on every construction; kept for its users' logs
        print('WARNING: discarded %d sentences longer than the largest bucket.' % discarded)
        if not buckets:
            raise ValueError('BucketSentenceIter: no sentence fits any bucket (%d sentences, '
                             'batch_size %d)' % (len(sentences), batch_size))
        self.batch_size = batch_size
        self.buckets = buckets
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.nddata = []
        self.ndlabel = []
        self.major_axis = layout.find('N')
        self.layout = layout
        self.default_bucket_key = max(buckets)
        self.provide_data = [self._desc(data_name, self.default_bucket_key)]
        self.provide_label = [self._desc(label_name, self.default_bucket_key)]
        self.idx = [(i, j) for i, bucket in enumerate(self.data)
                    for j in range(0, len(bucket) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.reset()

    def _desc(self, name, length):
        shape = (self.batch_size, length) if self.major_axis == 0 else (length, self.batch_size)
        return DataDesc(name=name, shape=shape, layout=self.layout)

    def reset(self):
        """Shuffle the batch order (python ``random``) and the sentences inside each bucket
        (``numpy.random``), and start again."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for bucket in self.data:
            np.random.shuffle(bucket)
        self.nddata = []
        self.ndlabel = []
        for bucket in self.data:
            label = np.empty_like(bucket)
            label[:, :-1] = bucket[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(bucket, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        """The next batch, with its ``bucket_key`` and its own provide_data/provide_label."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape,
                                                 layout=self.layout)])
