"""Inputs of the encode_sentences / BucketSentenceIter scenarios, shared by the oracle fixture
generator and the tests."""
import numpy as np

ENCODE_CASES = [
    dict(sentences=[['a', 'b', 'c'], ['b', 'c', 'd', 'a']]),
    dict(sentences=[['x', 'y'], ['z', 'x', 'w']], invalid_label=0, start_label=0),
    dict(sentences=[['a', 'b', 'c'], ['b', 'c', 'd']], vocab={'a': 1, 'b': 2, 'c': 3},
         invalid_label=-1, invalid_key='\n', start_label=0, unknown_token='UNK'),
    dict(sentences=[['p', 'q', 'r', 's', 't']], invalid_label=3, start_label=1,
         invalid_key='<eos>'),
    dict(sentences=[['m', 'n'], ['n', 'o']], unknown_token='<unk>'),
]


def _sentences(seed, count, low, high, vocab):
    rs = np.random.RandomState(seed)
    return [[int(t) for t in rs.randint(1, vocab, rs.randint(low, high + 1))]
            for _ in range(count)]


def bucket_cases():
    """Scenarios: sentences, constructor kwargs and the python/numpy seed set before
    construction."""
    return [
        dict(seed=11, sentences=_sentences(1, 40, 1, 8, 9), kwargs=dict(batch_size=3)),
        dict(seed=12, sentences=_sentences(2, 30, 2, 10, 6),
             kwargs=dict(batch_size=4, buckets=[4, 8, 6], invalid_label=0, data_name='src',
                         label_name='tgt', layout='TN')),
        dict(seed=13, sentences=_sentences(3, 25, 1, 5, 7),
             kwargs=dict(batch_size=2, buckets=[2, 3, 20, 30], dtype='int32')),
    ]
