"""encode_sentences and BucketSentenceIter against MXNet 1.9.1's frozen outputs (io_cases.py,
fixtures/io.json): vocabularies, buckets, discarded sentences, batch order and contents under
fixed seeds, provide_data/provide_label, two epochs with reset."""
import contextlib
import io
import json
import os
import random

import numpy as np
import pytest

import mxmod as mx

from . import io_cases

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, 'fixtures', 'io.json')) as _f:
    FROZEN = json.load(_f)


@pytest.mark.parametrize('k', range(len(io_cases.ENCODE_CASES)))
def test_encode_sentences_matches_mxnet(k):
    case = {key: (dict(val) if isinstance(val, dict) else val)
            for key, val in io_cases.ENCODE_CASES[k].items()}
    coded, vocab = mx.rnn.encode_sentences(**case)
    assert coded == FROZEN['encode'][k]['coded']
    assert vocab == FROZEN['encode'][k]['vocab']


def test_encode_sentences_unknown_token_error():
    with pytest.raises(KeyError, match="'z'"):
        mx.rnn.encode_sentences([['a', 'z']], vocab={'a': 0})


def descs(items):
    return [[d.name, list(d.shape), d.layout] for d in items]


@pytest.mark.parametrize('k', range(len(io_cases.bucket_cases())))
def test_bucket_sentence_iter_matches_mxnet(k):
    case = io_cases.bucket_cases()[k]
    want = FROZEN['bucket'][k]
    random.seed(case['seed'])
    np.random.seed(case['seed'])
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        it = mx.rnn.BucketSentenceIter(case['sentences'], **case['kwargs'])
    assert text.getvalue() == want['stdout']
    assert it.buckets == want['buckets']
    assert it.default_bucket_key == want['default_bucket_key']
    assert descs(it.provide_data) == want['provide_data']
    assert descs(it.provide_label) == want['provide_label']
    dtype = np.dtype(case['kwargs'].get('dtype', 'float32'))
    for epoch in want['epochs']:
        got = list(it)
        assert len(got) == len(epoch)
        for batch, ref in zip(got, epoch):
            assert batch.bucket_key == ref['bucket_key'] and batch.pad == ref['pad']
            assert batch.data[0].dtype == dtype
            np.testing.assert_array_equal(batch.data[0].asnumpy(), ref['data'])
            np.testing.assert_array_equal(batch.label[0].asnumpy(), ref['label'])
            assert descs(batch.provide_data) == ref['provide_data']
            assert descs(batch.provide_label) == ref['provide_label']
        it.reset()


def test_bucket_sentence_iter_errors():
    with pytest.raises(ValueError, match='layout'):
        mx.rnn.BucketSentenceIter([[1, 2]] * 4, 2, layout='TC')
    with pytest.raises(ValueError, match='no sentence fits'):
        with contextlib.redirect_stdout(io.StringIO()):
            mx.rnn.BucketSentenceIter([[1, 2, 3]] * 4, 2, buckets=[2])
