"""mx.io.LibSVMIter against MXNet 1.9.1: the batches, pads, indices and epochs MXNet gave for the
same files (recorded with the oracle; re-checked live when it is present), parts of a file, label
files, CSR layout, and errors naming the file."""
import json
import os
import subprocess

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError

ORACLE = '/tmp/mxnet-ref/bin/python'
DATA = '1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n'
LABELS = '0 0:1 3:2\n0 1:3\n0\n0 2:1 4:4\n'
SEVEN = ''.join('%d %d:%d\n' % (i, (i - 1) % 3, i) for i in range(1, 8))
# what MXNet 1.9.1 returned for DATA with batch_size=3 over three epochs (reset between them):
# (epoch, dense data, labels, pad, index)
MXNET_EPOCHS = [
    (0, [[0.5, 0, 1.2], [0, 0, 0], [0.6, 2.4, 1.2]], [1, -2, -3], 0, [0, 1, 2]),
    (0, [[0, 0, -1.2], [0.5, 0, 1.2], [0, 0, 0]], [4, 1, -2], 2, [3, 0, 1]),
    (1, [[0.6, 2.4, 1.2], [0, 0, -1.2], [0.5, 0, 1.2]], [-3, 4, 1], 1, [2, 3, 0]),
    (2, [[0, 0, 0], [0.6, 2.4, 1.2], [0, 0, -1.2]], [-2, -3, 4], 0, [1, 2, 3]),
]
# labels of SEVEN read in parts (num_parts, part_index) -> labels, as MXNet split them
MXNET_PARTS = {(2, 0): [1, 2, 3, 4], (2, 1): [5, 6, 7], (3, 0): [1, 2, 3], (3, 1): [4, 5],
               (3, 2): [6, 7]}


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (('data.t', DATA), ('label.t', LABELS), ('seven.t', SEVEN)):
        paths[name] = str(tmp_path / name)
        with open(paths[name], 'w') as out:
            out.write(text)
    return paths


def _epochs(it, epochs):
    seen = []
    for epoch in range(epochs):
        for batch in it:
            assert batch.data[0].stype == 'csr'
            seen.append((epoch, batch.data[0].asnumpy().tolist(), batch.label[0].asnumpy().tolist(),
                         batch.pad, [int(i) for i in batch.index]))
        it.reset()
    return seen


def _close(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g[0] == w[0] and g[3:] == w[3:]
        np.testing.assert_allclose(g[1], w[1], rtol=1e-6)
        np.testing.assert_allclose(g[2], w[2], rtol=1e-6)


def test_batches_epochs_and_round_batch_as_mxnet(files):
    it = mx.io.LibSVMIter(data_libsvm=files['data.t'], data_shape=(3,), batch_size=3)
    assert it.provide_data[0].name == 'data' and it.provide_data[0].shape == (3, 3)
    assert it.provide_label[0].name == 'softmax_label' and it.provide_label[0].shape == (3,)
    _close(_epochs(it, 3), MXNET_EPOCHS)


def test_csr_layout_and_label_file(files):
    batch = mx.io.LibSVMIter(data_libsvm=files['data.t'], data_shape=(3,), batch_size=2).next()
    csr = batch.data[0]
    np.testing.assert_array_equal(csr.indices.asnumpy(), [0, 2])
    np.testing.assert_array_equal(csr.indptr.asnumpy(), [0, 2, 2])
    assert csr.indices.dtype == np.int64 and csr.data.dtype == np.float32
    it = mx.io.LibSVMIter(data_libsvm=files['data.t'], data_shape=(3,), batch_size=2,
                          label_libsvm=files['label.t'], label_shape=(5,))
    assert it.provide_label[0].shape == (2, 5)
    labels = [b.label[0] for b in it]
    assert all(lab.stype == 'csr' for lab in labels)
    np.testing.assert_array_equal(np.vstack([lab.asnumpy() for lab in labels]),
                                  [[1, 0, 0, 2, 0], [0, 3, 0, 0, 0], [0] * 5, [0, 0, 1, 0, 4]])


def test_getdata_getlabel_return_one_ndarray_as_mxnet(files):
    # MXNet's LibSVMIter is a C++ iterator: getdata()/getlabel() give the current batch's one
    # NDArray (not a list), getindex() a uint64 numpy array (MXNet 1.9.1, tutorial csr.md)
    it = mx.io.LibSVMIter(data_libsvm=files['data.t'], data_shape=(3,), batch_size=3)
    assert it.iter_next()
    data, label = it.getdata(), it.getlabel()
    assert isinstance(data, mx.nd.sparse.CSRNDArray) and data.shape == (3, 3)
    assert isinstance(label, mx.nd.NDArray) and label.stype == 'default' and label.shape == (3,)
    np.testing.assert_allclose(label.asnumpy(), [1, -2, -3])
    assert it.getindex().dtype == np.uint64 and it.getindex().tolist() == [0, 1, 2]
    assert it.getpad() == 0
    for batch in it:  # the batch still holds lists, and getdata() is its first entry
        assert isinstance(batch.data, list) and it.getdata() is batch.data[0]
        assert it.getlabel() is batch.label[0]


@pytest.mark.parametrize('parts', sorted(MXNET_PARTS))
def test_parts_split_the_bytes_as_mxnet(files, parts):
    it = mx.io.LibSVMIter(data_libsvm=files['seven.t'], data_shape=(3,), batch_size=1,
                          num_parts=parts[0], part_index=parts[1])
    assert [b.label[0].asnumpy()[0] for b in it] == MXNET_PARTS[parts]


def test_larger_file_equals_scipy(tmp_path):
    rs = np.random.RandomState(0)
    dense = rs.rand(50, 20) * (rs.rand(50, 20) < 0.2)
    labels = rs.randint(0, 2, 50)
    path = str(tmp_path / 'big.t')
    with open(path, 'w') as out:
        for lab, row in zip(labels, dense):
            out.write('%d %s\n' % (lab, ' '.join('%d:%r' % (j, float(v)) for j, v in enumerate(row) if v)))
    it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(20,), batch_size=7)
    got = [(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad) for b in it]
    assert [g[2] for g in got] == [0] * 7 + [6]
    rows = np.concatenate([g[0] for g in got])[:50]
    np.testing.assert_allclose(rows, dense.astype(np.float32), rtol=1e-7)
    np.testing.assert_array_equal(np.concatenate([g[1] for g in got])[:50], labels)


def test_errors_name_the_file_and_the_problem(files, tmp_path):
    with pytest.raises(MXNetError, match='nofile.t'):
        mx.io.LibSVMIter(data_libsvm=str(tmp_path / 'nofile.t'), data_shape=(3,), batch_size=2)
    with pytest.raises(MXNetError, match='feature index 2, outside the 2 columns'):
        mx.io.LibSVMIter(data_libsvm=files['data.t'], data_shape=(2,), batch_size=2)
    with pytest.raises(MXNetError, match='label_shape'):
        mx.io.LibSVMIter(data_libsvm=files['data.t'], data_shape=(3,), batch_size=2,
                         label_libsvm=files['label.t'])
    with pytest.raises(MXNetError, match='round_batch'):
        mx.io.LibSVMIter(data_libsvm=files['data.t'], data_shape=(3,), batch_size=2,
                         round_batch=False)
    bad = str(tmp_path / 'bad.t')
    with open(bad, 'w') as out:
        out.write('1 0:1\n1 x:2\n')
    with pytest.raises(MXNetError, match='line 2'):
        mx.io.LibSVMIter(data_libsvm=bad, data_shape=(3,), batch_size=1)
    with pytest.raises(MXNetError, match='bigger than batch size'):
        list(mx.io.LibSVMIter(data_libsvm=files['data.t'], data_shape=(3,), batch_size=9))


@pytest.mark.oracle
@pytest.mark.skipif(not os.path.exists(ORACLE), reason='needs the MXNet 1.9.1 oracle')
def test_recorded_outputs_are_mxnets(files):
    script = ('import json, mxnet as mx\n'
              'it = mx.io.LibSVMIter(data_libsvm=%r, data_shape=(3,), batch_size=3)\n'
              'out = []\n'
              'for e in range(3):\n'
              '    for b in it:\n'
              '        out.append((e, b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(),'
              ' b.pad, [int(i) for i in b.index]))\n'
              '    it.reset()\n'
              'print(json.dumps(out))\n' % files['data.t'])
    res = subprocess.run([ORACLE, '-c', script], capture_output=True, text=True, timeout=300)
    _close([tuple(x) for x in json.loads(res.stdout.strip().splitlines()[-1])], MXNET_EPOCHS)
