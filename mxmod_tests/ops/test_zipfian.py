"""Zipfian candidate sampling: _sample_unique_zipfian (distinct classes per row and the number of
draws needed) and mx.nd/mx.sym.contrib.rand_zipfian, checked against the distribution
P(c) = log((c + 2) / (c + 1)) / log(range_max + 1) and MXNet 1.9.1's conventions."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError


@pytest.fixture(autouse=True)
def _fresh_names():
    """Symbols made here get their own name counters (later tests expect fresh ones)."""
    with mx.name.NameManager():
        yield


def _zipf_probs(range_max, base):
    c = np.arange(range_max, dtype=np.float64)
    return np.log((c + 2) / (c + 1)) / np.log(base)


def test_unique_rows_are_distinct_and_in_range():
    mx.random.seed(5)
    classes, tries = mx.nd._internal._sample_unique_zipfian(793472, shape=(4, 8192))
    assert classes.dtype == np.int64 and tries.dtype == np.int64
    assert classes.shape == (4, 8192) and tries.shape == (4,)
    arr = classes.asnumpy()
    for row in arr:
        assert np.unique(row).size == 8192
    assert arr.min() >= 0 and arr.max() < 793472
    # MXNet's test: about 16k draws are needed (reference count from PyTorch's sampler)
    assert np.all((tries.asnumpy() > 14500) & (tries.asnumpy() < 17000))


def test_unique_full_range_takes_every_class():
    classes, tries = mx.nd._internal._sample_unique_zipfian(20, shape=(3, 20))
    np.testing.assert_array_equal(np.sort(classes.asnumpy(), axis=1),
                                  np.tile(np.arange(20), (3, 1)))
    assert np.all(tries.asnumpy() >= 20)


def test_unique_first_draw_follows_the_log_uniform_law():
    # one sample per row is a plain draw: round(exp(u log R)) - 1, u ~ U[0, 1); its law is
    # P(c) = log((c + 1.5) / (c + 0.5)) / log(R), the ends clipped to [1, R)
    mx.random.seed(9)
    range_max = 10
    classes, tries = mx.nd._internal._sample_unique_zipfian(range_max, shape=(40000, 1))
    assert np.all(tries.asnumpy() == 1)
    freq = np.bincount(classes.asnumpy().ravel(), minlength=range_max) / 40000.0
    edges = np.concatenate([[1.0], np.arange(range_max - 1) + 1.5, [range_max]])
    want = np.diff(np.log(edges)) / np.log(range_max)
    np.testing.assert_allclose(freq, want, atol=0.01)


def test_unique_symbol_outputs_and_inference():
    sym = mx.sym._internal._sample_unique_zipfian(range_max=100, shape=(2, 5))
    assert sym.list_outputs() == ['%s_output0' % sym.name, '%s_output1' % sym.name]
    assert sym.infer_shape() == ([], [(2, 5), (2,)], [])
    assert sym.infer_type()[1] == [np.int64, np.int64]
    out = sym.bind(mx.cpu(), {}).forward()
    assert out[0].shape == (2, 5) and out[1].shape == (2,)


def test_unique_refuses_more_samples_than_classes():
    with pytest.raises(MXNetError, match='cannot exceed'):
        mx.nd._internal._sample_unique_zipfian(5, shape=(2, 6))


def _check_counts(sampled, count_true, count_sampled, true_classes, num_sampled, range_max):
    expect = _zipf_probs(range_max, range_max + 1) * num_sampled
    np.testing.assert_allclose(count_sampled, expect[sampled], rtol=1e-12)
    np.testing.assert_allclose(count_true, expect[true_classes], rtol=1e-12)


def test_rand_zipfian_ndarray_and_symbol():
    num_sampled, range_max = 1000, 20
    true_classes = mx.nd.array([0, 3, 7, 19, 2], dtype='int32')
    sampled, cnt_true, cnt_sampled = mx.nd.contrib.rand_zipfian(true_classes, num_sampled,
                                                                range_max)
    assert sampled.dtype == np.int64 and cnt_true.dtype == np.float64
    s = sampled.asnumpy()
    assert s.shape == (num_sampled,) and s.min() >= 0 and s.max() < range_max
    _check_counts(s, cnt_true.asnumpy(), cnt_sampled.asnumpy(), true_classes.asnumpy(),
                  num_sampled, range_max)
    outputs = mx.sym.Group(list(mx.sym.contrib.rand_zipfian(mx.sym.var('true_classes'),
                                                            num_sampled, range_max)))
    exe = outputs.bind(mx.cpu(), {'true_classes': true_classes})
    sampled, cnt_true, cnt_sampled = [o.asnumpy() for o in exe.forward()]
    assert sampled.dtype == np.int64 and cnt_sampled.dtype == np.float64
    _check_counts(sampled, cnt_true, cnt_sampled, true_classes.asnumpy(), num_sampled, range_max)


def test_rand_zipfian_symbol_needs_a_symbol():
    with pytest.raises(TypeError, match='Symbol'):
        mx.sym.contrib.rand_zipfian(mx.nd.array([1]), 10, 5)


def test_symbol_astype_is_cast():
    with mx.name.NameManager():
        sym = mx.sym.var('a').astype('int64')
    assert sym.name == 'cast0'
    assert sym.infer_type(a=np.float32)[1] == [np.int64]
