"""DataDesc, DataBatch and the DataIter base against outputs of MXNet 1.9.1 (strings copied
from the oracle's output)."""
import pickle

import numpy as np
import pytest

import mxmod as mx


def test_datadesc_tuple_and_attributes():
    desc = mx.io.DataDesc('x', (2, 3), np.int32, 'NTC')
    assert repr(desc) == "DataDesc[x,(2, 3),<class 'numpy.int32'>,NTC]"
    assert str(desc) == repr(desc)
    name, shape = desc
    assert (name, shape) == ('x', (2, 3))
    assert desc == ('x', (2, 3))
    assert desc == mx.io.DataDesc('x', (2, 3))  # dtype and layout do not take part
    assert desc != mx.io.DataDesc('x', (2, 4))
    assert mx.io.DataDesc('y', (1,)).dtype is np.float32
    assert mx.io.DataDesc('y', (1,)).layout == 'NCHW'


def test_datadesc_pickles_with_dtype_and_layout():
    desc = pickle.loads(pickle.dumps(mx.io.DataDesc('x', (2, 3), np.int32, 'NTC')))
    assert repr(desc) == "DataDesc[x,(2, 3),<class 'numpy.int32'>,NTC]"


def test_datadesc_helpers():
    assert mx.io.DataDesc.get_batch_axis('TNC') == 1
    assert mx.io.DataDesc.get_batch_axis(None) == 0
    assert mx.io.DataDesc.get_batch_axis('CHW') == -1
    descs = mx.io.DataDesc.get_list([('a', (1, 2)), ('b', (3,))], [('b', np.int64), ('a', np.float16)])
    assert repr(descs) == ("[DataDesc[a,(1, 2),<class 'numpy.float16'>,NCHW], "
                           "DataDesc[b,(3,),<class 'numpy.int64'>,NCHW]]")
    assert repr(mx.io.DataDesc.get_list([('a', (1, 2))], None)) == \
        "[DataDesc[a,(1, 2),<class 'numpy.float32'>,NCHW]]"


def test_databatch_str_and_fields():
    batch = mx.io.DataBatch([mx.nd.ones((2, 3))], label=[], pad=0)
    assert str(batch) == 'DataBatch: data shapes: [(2, 3)] label shapes: None'
    batch = mx.io.DataBatch([mx.nd.ones((2, 3)), mx.nd.ones((7, 8))], [mx.nd.ones((4, 5))],
                            pad=1, index=np.arange(2), bucket_key=5,
                            provide_data=[('data', (2, 3))], provide_label=[('l', (4, 5))])
    assert str(batch) == 'DataBatch: data shapes: [(2, 3), (7, 8)] label shapes: [(4, 5)]'
    assert (batch.pad, batch.bucket_key, batch.provide_data) == (1, 5, [('data', (2, 3))])
    with pytest.raises(TypeError, match='list of NDArrays'):
        mx.io.DataBatch(mx.nd.ones((2, 3)))
    with pytest.raises(TypeError, match='label'):
        mx.io.DataBatch([mx.nd.ones((2, 3))], label=mx.nd.ones((2,)))


def test_dataiter_base_is_empty():
    it = mx.io.DataIter(5)
    assert it.batch_size == 5
    assert (it.getpad(), it.getindex(), it.getdata(), it.getlabel()) == (None, None, None, None)
    assert not it.iter_next()
    with pytest.raises(StopIteration):
        it.next()
    assert list(it) == []
    assert not hasattr(it, 'provide_data')


class _Countdown(mx.io.DataIter):
    """A subclass written the MXNet way: iter_next/getdata/... and provide_data assignment."""

    def __init__(self, count):
        super(_Countdown, self).__init__(2)
        self.count = count
        self.left = count
        self.provide_data = [mx.io.DataDesc('data', (2,))]
        self.provide_label = []

    def reset(self):
        self.left = self.count

    def iter_next(self):
        self.left -= 1
        return self.left >= 0

    def getdata(self):
        return [mx.nd.full((2,), self.left)]

    def getlabel(self):
        return []

    def getpad(self):
        return 0


def test_dataiter_subclass_protocol():
    it = _Countdown(3)
    values = [batch.data[0].asnumpy()[0] for batch in it]
    assert values == [2, 1, 0]
    assert it.provide_data == [('data', (2,))]
    it.reset()
    assert next(it).pad == 0 and next(it).index is None
