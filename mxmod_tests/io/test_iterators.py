"""NDArrayIter and CSVIter against the oracle's batches frozen in fixtures/iterators.json
(regenerate with gen_io_fixtures.py): provide_data/label, data, labels, pads, indices, resets."""
import atexit
import json
import os
import shutil
import tempfile

import numpy as np
import pytest

import mxmod as mx
from mxmod_tests.io import io_scenarios

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, 'fixtures', 'iterators.json')) as _handle:
    FROZEN = json.load(_handle)

# scenarios whose padded rows are uninitialised memory in the oracle (mxmod: zeros)
_GARBAGE_ROWS = {'csv_small_noround'}


def _builders():
    cases = dict(io_scenarios.ndarray_scenarios(mx))
    cases.update(io_scenarios.wrapper_scenarios(mx))
    csv_dir = tempfile.mkdtemp(prefix='mxmod_csviter_')
    atexit.register(shutil.rmtree, csv_dir, True)
    cases.update(io_scenarios.csv_scenarios(mx, csv_dir))
    return cases


BUILDERS = _builders()


def _check_desc(got, want):
    assert [(d.name, tuple(d.shape), np.dtype(d.dtype).name, d.layout) for d in got] == \
        [(n, tuple(s), t, l) for n, s, t, l in want]


def _check_array(got, want, rows=None):
    arr = got.asnumpy()
    assert arr.dtype.name == want['dtype']
    assert list(arr.shape) == want['shape']
    ref = np.array(want['values'], dtype=arr.dtype).reshape(arr.shape)
    np.testing.assert_array_equal(arr[:rows], ref[:rows])


def _check_batch(name, batch, want):
    # pad rows the oracle never wrote hold uninitialised memory: compare the real rows only
    rows = len(want['index']) - want['pad'] if name in _GARBAGE_ROWS else None
    assert len(batch.data) == len(want['data'])
    for got, ref in zip(batch.data, want['data']):
        _check_array(got, ref, rows)
    assert len(batch.label or []) == len(want['label'])
    for got, ref in zip(batch.label or [], want['label']):
        _check_array(got, ref, rows)
    assert batch.pad == want['pad']
    if want['index'] is None:
        assert batch.index is None
    else:
        assert np.asarray(batch.index).tolist()[:rows] == want['index'][:rows]


def _run_epoch(name, it, want_batches):
    expect_error = want_batches and 'error' in want_batches[-1]
    good = want_batches[:-1] if expect_error else want_batches
    got = 0
    try:
        for batch in it:
            assert got < len(good), 'more batches than the oracle'
            _check_batch(name, batch, good[got])
            got += 1
    except mx.MXNetError as err:
        assert expect_error, 'unexpected error %s' % err
        assert want_batches[-1]['error'].split(': ', 1)[1].split(':')[-1].strip() in str(err)
        assert got == len(good)
        return False
    assert not expect_error, 'the oracle failed here: %s' % want_batches[-1]
    assert got == len(good)
    return True


@pytest.mark.parametrize('name', sorted(FROZEN))
def test_iterator_matches_oracle(name):
    build, epochs = BUILDERS[name]
    want = FROZEN[name]
    it = build()
    _check_desc(it.provide_data, want['provide_data'])
    _check_desc(it.provide_label, want['provide_label'])
    assert len(want['epochs']) <= epochs
    for want_batches in want['epochs']:
        if not _run_epoch(name, it, want_batches):
            break
        it.reset()


def test_every_scenario_is_frozen():
    assert sorted(BUILDERS) == sorted(FROZEN)
