"""Batch splitting and merging across devices: slices frozen from MXNet 1.9.1's
_split_input_slice, loading along batch axes, merging and group2ctxs normalization."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.module.batch_split import (_split_input_slice, _load_general, _merge_multi_context,
                                      _prepare_group2ctxs)

# (batch_size, workload, slices or the error) as returned by MXNet 1.9.1
MXNET_SLICES = [
    (5, [1, 1], [[0, 2], [2, 5]]), (3, [1, 1], [[0, 2], [2, 3]]),
    (10, [1, 1, 1], [[0, 3], [3, 6], [6, 10]]), (7, [1, 2], [[0, 2], [2, 7]]),
    (8, [1, 1, 1, 1], [[0, 2], [2, 4], [4, 6], [6, 8]]), (9, [0.5, 1.5], [[0, 2], [2, 9]]),
    (11, [3, 1, 1], [[0, 7], [7, 9], [9, 11]]), (2, [1, 1, 1], 'ValueError'),
    (6, [1, 1, 1, 1], 'ValueError'), (13, [2, 2, 1, 1], [[0, 4], [4, 8], [8, 10], [10, 13]]),
    (1, [1], [[0, 1]]),
]


@pytest.mark.parametrize('batch_size,workload,expected', MXNET_SLICES)
def test_split_input_slice_matches_mxnet(batch_size, workload, expected):
    if expected == 'ValueError':
        with pytest.raises(ValueError, match='Too many slices'):
            _split_input_slice(batch_size, workload)
    else:
        got = _split_input_slice(batch_size, workload)
        assert [[s.start, s.stop] for s in got] == expected


def test_load_general_slices_along_axis():
    src = mx.nd.array(np.arange(24).reshape(2, 6, 2))
    dsts = [(slice(0, 2), mx.nd.zeros((2, 2, 2))),
            (slice(2, 6), mx.nd.zeros((2, 4, 2), ctx=mx.cpu(1)))]
    _load_general([src], [dsts], [1])
    np.testing.assert_array_equal(dsts[0][1].asnumpy(), src.asnumpy()[:, 0:2])
    np.testing.assert_array_equal(dsts[1][1].asnumpy(), src.asnumpy()[:, 2:6])
    whole = [(slice(0, 1), mx.nd.zeros((2, 6, 2))), (slice(1, 2), mx.nd.zeros((2, 6, 2)))]
    _load_general([src], [whole], [-1])
    for _, dst in whole:
        np.testing.assert_array_equal(dst.asnumpy(), src.asnumpy())


def test_merge_multi_context():
    parts = [mx.nd.ones((2, 3)), mx.nd.ones((1, 3), ctx=mx.cpu(1)) * 2]
    merged = _merge_multi_context([parts], [0])[0]
    np.testing.assert_array_equal(merged.asnumpy(), np.array([[1] * 3, [1] * 3, [2] * 3]))
    assert merged.context == mx.cpu(0)
    single = [mx.nd.ones((2, 3))]
    assert _merge_multi_context([single], [0])[0] is single[0]
    assert _merge_multi_context([parts], [-1])[0] is parts[0]
    tnc = [mx.nd.ones((3, 2, 4)), mx.nd.zeros((3, 2, 4))]
    assert _merge_multi_context([tnc], [1])[0].shape == (3, 4, 4)


def test_prepare_group2ctxs_forms():
    c0, c1, c2 = mx.cpu(0), mx.cpu(1), mx.cpu(2)
    assert _prepare_group2ctxs(None, 2) == [None, None]
    assert _prepare_group2ctxs({'a': c1}, 2) == [{'a': c1}, {'a': c1}]
    assert _prepare_group2ctxs({'a': [c1]}, 2) == [{'a': c1}, {'a': c1}]
    assert _prepare_group2ctxs({'a': [c1, c2]}, 2) == [{'a': c1}, {'a': c2}]
    assert _prepare_group2ctxs([{'a': c0}, {'a': c1}], 2) == [{'a': c0}, {'a': c1}]
    with pytest.raises(ValueError):
        _prepare_group2ctxs({'a': [c0, c1, c2]}, 2)
    with pytest.raises(ValueError):
        _prepare_group2ctxs([{'a': c0}], 2)
