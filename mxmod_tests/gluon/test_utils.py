"""gluon.utils against numpy: split_data (even and uneven, any axis), split_and_load onto
contexts, clip_global_norm (dense and row_sparse, the non-finite warning), check_sha1 and
download (with requests mocked, as MXNet's tests do)."""
import hashlib
import os
import warnings
from unittest import mock

import numpy as np
import pytest

import mxmod as mx
from mxmod.gluon import utils


def test_split_data_even_uneven_and_axis():
    data = mx.nd.array(np.arange(30).reshape(5, 6))
    parts = utils.split_data(data, 2, batch_axis=1)
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts], axis=1),
                                  data.asnumpy())
    assert [p.shape for p in parts] == [(5, 3), (5, 3)]
    uneven = utils.split_data(data, 3, even_split=False)
    assert [p.shape[0] for p in uneven] == [2, 2, 1]
    with pytest.raises(ValueError, match='cannot be evenly split into 3 slices along axis 0'):
        utils.split_data(data, 3)


def test_split_and_load_places_pieces():
    parts = utils.split_and_load(np.arange(8).reshape(4, 2), [mx.cpu(0), mx.cpu(1)])
    assert [p.context for p in parts] == [mx.cpu(0), mx.cpu(1)]
    np.testing.assert_array_equal(parts[1].asnumpy(), [[4, 5], [6, 7]])
    single = utils.split_and_load(mx.nd.ones((3, 2)), [mx.cpu(2)])
    assert len(single) == 1 and single[0].context == mx.cpu(2)


@pytest.mark.parametrize('stype', ['default', 'row_sparse'])
def test_clip_global_norm(stype):
    values = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((3, 2), np.float32)]
    arrays = [mx.nd.array(v).tostype(stype) for v in values]
    norm = utils.clip_global_norm(arrays, 2.0)
    total = np.sqrt(sum((v ** 2).sum() for v in values))
    assert norm == pytest.approx(total, rel=1e-6)
    for arr, value in zip(arrays, values):
        np.testing.assert_allclose(arr.asnumpy(), value * 2.0 / (total + 1e-8), rtol=1e-6)
    small = [mx.nd.ones((2,)) * 0.1]
    utils.clip_global_norm(small, 5.0, check_isfinite=False)
    np.testing.assert_allclose(small[0].asnumpy(), [0.1, 0.1], rtol=1e-6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        result = utils.clip_global_norm([mx.nd.array([1.0, np.nan])], 1.0)
    assert np.isnan(result)
    assert [str(w.message) for w in caught] == ['nan or inf is detected. Clipping results '
                                                'will be undefined.']


class _Response(object):
    status_code = 200

    def __init__(self, content):
        self._content = content

    def iter_content(self, chunk_size):
        for start in range(0, len(self._content), chunk_size):
            yield self._content[start:start + chunk_size]


def test_download_and_check_sha1(tmp_path):
    content = b'MOCK CONTENT' * 200
    digest = hashlib.sha1(content).hexdigest()
    target = str(tmp_path / 'file.txt')
    with mock.patch('requests.get', mock.Mock(return_value=_Response(content))) as get:
        assert utils.download('http://example.invalid/file.txt', path=target,
                              sha1_hash=digest) == target
        assert utils.download('http://example.invalid/file.txt', path=target,
                              sha1_hash=digest) == target    # present: not fetched again
    assert get.call_count == 1
    assert utils.check_sha1(target, digest) and not utils.check_sha1(target, '0' * 40)
    assert sorted(os.listdir(str(tmp_path))) == ['file.txt']
    failing = mock.Mock(side_effect=ConnectionError('offline'))
    with mock.patch('requests.get', failing), pytest.raises(ConnectionError, match='offline'):
        utils.download('http://example.invalid/other.txt', path=str(tmp_path), retries=2)
    assert failing.call_count == 2
