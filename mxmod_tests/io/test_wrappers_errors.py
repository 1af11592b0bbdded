"""PrefetchingIter threading (errors, shutdown), ResizeIter with bucketing iterators, and the
error paths of NDArrayIter and CSVIter. Batches are compared with the wrapped iterators'."""
import gc
import threading
import time

import numpy as np
import pytest

import mxmod as mx


class _Failing(mx.io.DataIter):
    """Yields ``good`` batches, then raises ValueError from next()."""

    def __init__(self, good):
        super(_Failing, self).__init__(2)
        self.good = good
        self.seen = 0
        self.provide_data = [mx.io.DataDesc('data', (2, 1))]
        self.provide_label = []

    def reset(self):
        self.seen = 0

    def next(self):
        self.seen += 1
        if self.seen > self.good:
            raise ValueError('broken record %d' % self.seen)
        return mx.io.DataBatch([mx.nd.full((2, 1), self.seen)], [], pad=0)


def _prefetch_threads():
    return [t for t in threading.enumerate() if t.name == 'PrefetchingIter']


def test_prefetch_matches_direct_iteration():
    data = np.random.uniform(size=(10, 3))
    direct = [b.data[0].asnumpy() for b in mx.io.NDArrayIter(data, batch_size=3)]
    piter = mx.io.PrefetchingIter(mx.io.NDArrayIter(data, batch_size=3))
    for _ in range(2):
        got = [b.data[0].asnumpy() for b in piter]
        assert len(got) == len(direct)
        for a, b in zip(got, direct):
            np.testing.assert_array_equal(a, b)
        assert piter.getpad() == 2
        piter.reset()
    assert piter.batch_size == 3


def test_prefetch_thread_error_surfaces_in_caller():
    piter = mx.io.PrefetchingIter(_Failing(2))
    assert [b.data[0].asnumpy()[0, 0] for b in (piter.next(), piter.next())] == [1, 2]
    with pytest.raises(ValueError, match='broken record 3'):
        piter.next()
    with pytest.raises(ValueError, match='broken record 3'):  # stays failed until reset
        piter.next()
    piter.reset()
    assert piter.next().data[0].asnumpy()[0, 0] == 1


def test_prefetch_threads_stop_when_dropped():
    before = len(_prefetch_threads())
    piter = mx.io.PrefetchingIter([mx.io.NDArrayIter(np.ones((4, 2)), batch_size=2),
                                   mx.io.NDArrayIter(np.ones((4, 2)), batch_size=2)],
                                  rename_data=[{'data': 'a'}, {'data': 'b'}])
    assert len(_prefetch_threads()) == before + 2
    piter.next()
    del piter
    gc.collect()
    deadline = time.time() + 5
    while len(_prefetch_threads()) > before and time.time() < deadline:
        time.sleep(0.01)
    assert len(_prefetch_threads()) == before


def test_prefetch_mismatched_iterators():
    short = mx.io.NDArrayIter(np.ones((4, 2)), batch_size=2)
    long_ = mx.io.NDArrayIter(np.ones((6, 2)), batch_size=2)
    piter = mx.io.PrefetchingIter([short, long_], rename_data=[{'data': 'a'}, {'data': 'b'}])
    piter.next()
    piter.next()
    with pytest.raises(mx.MXNetError, match='ended at different batches'):
        piter.next()
    padded = mx.io.PrefetchingIter([mx.io.NDArrayIter(np.ones((3, 2)), batch_size=2),
                                    mx.io.NDArrayIter(np.ones((4, 2)), batch_size=2)],
                                   rename_data=[{'data': 'a'}, {'data': 'b'}])
    padded.next()
    with pytest.raises(mx.MXNetError, match='different pads'):
        padded.next()
    with pytest.raises(KeyError, match='no new name'):
        mx.io.PrefetchingIter(short, rename_data=[{'other': 'x'}])


def test_resize_keeps_bucket_key_and_shapes():
    base = mx.io.NDArrayIter(np.ones((5, 2)), batch_size=2)
    base.default_bucket_key = 7
    resized = mx.io.ResizeIter(base, 4)
    assert resized.default_bucket_key == 7
    assert resized.provide_data == base.provide_data and resized.batch_size == 2
    assert [b.pad for b in resized] == [0, 0, 1, 0]
    assert resized.getpad() == 0 and resized.getindex() is None


def test_ndarrayiter_input_errors():
    with pytest.raises(ValueError, match='needs input data'):
        mx.io.NDArrayIter(None)
    with pytest.raises(TypeError, match='Input must be'):
        mx.io.NDArrayIter(5)
    with pytest.raises(ValueError, match='last_batch_handle'):
        mx.io.NDArrayIter(np.ones((2, 2)), last_batch_handle='wrap')
    it = mx.io.NDArrayIter(np.ones((4, 2)), batch_size=2)
    list(it)
    with pytest.raises(mx.MXNetError, match='reset'):
        it.getdata()


def test_ndarrayiter_keeps_context_and_lists_of_lists():
    it = mx.io.NDArrayIter({'b': [[1, 2], [3, 4]], 'a': mx.nd.ones((2, 2), ctx=mx.cpu(1))},
                           batch_size=2)
    batch = it.next()
    assert [d.name for d in it.provide_data] == ['a', 'b']
    assert batch.data[0].context == mx.cpu(1)
    np.testing.assert_array_equal(batch.data[1].asnumpy(), [[1, 2], [3, 4]])


def test_csviter_errors(tmp_path):
    data = tmp_path / 'd.csv'
    data.write_text('1,2,3\n4,5\n')
    with pytest.raises(mx.MXNetError, match=r'd.csv line 2 has 2 values, but data_shape \(3,\)'):
        mx.io.CSVIter(data_csv=str(data), data_shape=(3,), batch_size=1)
    with pytest.raises(mx.MXNetError, match='nope.csv'):
        mx.io.CSVIter(data_csv=str(tmp_path / 'nope.csv'), data_shape=(3,), batch_size=1)
    data.write_text('1,2\n3,4\n')
    with pytest.raises(mx.MXNetError, match='float64 is not supported'):
        mx.io.CSVIter(data_csv=str(data), data_shape=(2,), batch_size=1, dtype='float64')
    label = tmp_path / 'l.csv'
    label.write_text('1\n')
    with pytest.raises(mx.MXNetError, match='l.csv has 1 rows for 2 data rows'):
        mx.io.CSVIter(data_csv=str(data), data_shape=(2,), batch_size=1, label_csv=str(label))
    with pytest.raises(TypeError):
        mx.io.CSVIter(str(data), (2,), 1)  # keyword-only, as in MXNet
    with pytest.raises(mx.MXNetError, match='bigger than batch size'):
        mx.io.CSVIter(data_csv=str(data), data_shape=(2,), batch_size=5)


def test_csviter_parsing_and_getters(tmp_path):
    """Parsing rules measured on the oracle: blank lines and empty fields skipped, trailing
    commas and spaces ignored, the numeric prefix of a field kept, directories read in order."""
    folder = tmp_path / 'parts'
    folder.mkdir()
    (folder / 'b.csv').write_text(' 3 ,4,\r\n\n')
    (folder / 'a.csv').write_text('1,,2\n')
    (folder / 'c.txt').write_text('0x10,inf\n')
    it = mx.io.CSVIter(data_csv=str(folder), data_shape=(2,), batch_size=3)
    batch = it.next()
    np.testing.assert_array_equal(batch.data[0].asnumpy(), [[1, 2], [3, 4], [0, np.inf]])
    np.testing.assert_array_equal(it.getdata().asnumpy(), batch.data[0].asnumpy())
    assert it.getlabel().shape == (3,) and it.getpad() == 0
    assert it.getindex().dtype == np.uint64 and it.getindex().tolist() == [0, 1, 2]
    ints = tmp_path / 'i.csv'
    ints.write_text('1.7,-2.7\n3000000000,99999999999\n')
    got = mx.io.CSVIter(data_csv=str(ints), data_shape=(2,), batch_size=2, dtype='int32').next()
    assert got.data[0].asnumpy().tolist() == [[1, -2], [-1294967296, 1215752191]]
