"""Sparse NDArrays against numpy/scipy: creation, conversion, layout checks, arithmetic storage
types, .params files written by MXNet 1.9.1 (fixtures) and pickling."""
import os
import pickle

import numpy as np
import pytest
import scipy.sparse as spsp

import mxmod as mx
from mxmod.ndarray.sparse import CSRNDArray, RowSparseNDArray

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures')


def _dense(shape=(6, 5), density=0.4, seed=0):
    rng = np.random.RandomState(seed)
    return (rng.rand(*shape) * (rng.rand(*shape) < density)).astype(np.float32)


def test_csr_holds_only_nonzeros():
    dense = _dense()
    csr = mx.nd.array(dense).tostype('csr')
    ref = spsp.csr_matrix(dense)
    assert isinstance(csr, CSRNDArray) and csr.stype == 'csr'
    np.testing.assert_array_equal(csr.data.asnumpy(), ref.data)
    np.testing.assert_array_equal(csr.indices.asnumpy(), ref.indices)
    np.testing.assert_array_equal(csr.indptr.asnumpy(), ref.indptr)
    assert csr.indices.dtype == np.int64
    np.testing.assert_array_equal(csr.asnumpy(), dense)
    np.testing.assert_array_equal(csr.asscipy().toarray(), dense)


def test_row_sparse_holds_only_nonzero_rows():
    dense = _dense((7, 3))
    dense[[1, 4]] = 0
    rsp = mx.nd.array(dense).tostype('row_sparse')
    rows = np.nonzero(dense.any(axis=1))[0]
    assert isinstance(rsp, RowSparseNDArray)
    np.testing.assert_array_equal(rsp.indices.asnumpy(), rows)
    np.testing.assert_array_equal(rsp.data.asnumpy(), dense[rows])
    np.testing.assert_array_equal(rsp.tostype('default').asnumpy(), dense)


def test_constructors():
    csr = mx.nd.sparse.csr_matrix(([1., 2., 3.], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4))
    np.testing.assert_array_equal(csr.asnumpy(), [[1, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, 0]])
    coo = mx.nd.sparse.csr_matrix(([5., 6.], ([2, 0], [1, 3])), shape=(3, 4), dtype='float64')
    assert coo.dtype == np.float64 and coo.asnumpy()[2, 1] == 5
    rsp = mx.nd.sparse.row_sparse_array(([[1., 2.], [3., 4.]], [1, 3]))
    assert rsp.shape == (4, 2)
    np.testing.assert_array_equal(rsp.asnumpy()[3], [3, 4])
    empty = mx.nd.sparse.zeros('csr', (2, 5), dtype='int32')
    assert empty.dtype == np.int32 and not empty.asnumpy().any()
    scipy_csr = spsp.csr_matrix((np.array([1., 2.]), np.array([2, 0]), np.array([0, 2])),
                                shape=(1, 3))
    made = mx.nd.array(scipy_csr)
    assert made.stype == 'csr'
    np.testing.assert_array_equal(made.indices.asnumpy(), [0, 2])    # canonical order


def test_check_format_rejects_bad_layouts():
    bad = mx.nd.sparse.csr_matrix(([7, 8, 9], [2, 1, 1], [0, 2, 2, 3]), shape=(3, 4))
    with pytest.raises(mx.MXNetError, match='ascending'):
        bad.check_format()
    rsp = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(3, 2))
    with pytest.raises(mx.MXNetError, match='lie in'):
        rsp.check_format()
    with pytest.raises(ValueError):
        mx.nd.ones((3,)).tostype('csr')


def test_csr_row_slices_stay_csr():
    dense = _dense((8, 4))
    csr = mx.nd.array(dense).tostype('csr')
    for key, want in ((slice(2, 6), dense[2:6]), (-1, dense[-1:]), (3, dense[3:4])):
        part = csr[key]
        assert part.stype == 'csr'
        np.testing.assert_array_equal(part.asnumpy(), want)


@pytest.mark.parametrize('stype', ['csr', 'row_sparse'])
def test_arithmetic_storage_types(stype):
    a = _dense(seed=1)
    b = _dense(seed=2)
    x, y = mx.nd.array(a).tostype(stype), mx.nd.array(b).tostype(stype)
    np.seterr(divide='ignore', invalid='ignore')
    cases = [(x + y, a + b, stype), (x * y, a * b, stype), (x * 2, a * 2, stype),
             (x - y, a - b, stype), (x + 1, a + 1, 'default'), (x / y, a / b, 'default'),
             (-x, -a, stype), (x > 0.5, (a > 0.5), stype), (x == 0, (a == 0), 'default')]
    np.seterr(divide='warn', invalid='warn')
    for got, want, out_stype in cases:
        assert got.stype == out_stype
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, equal_nan=True)


def test_dense_and_sparse_mix_is_dense():
    a, b = _dense(seed=3), _dense(seed=4)
    out = mx.nd.array(a) + mx.nd.array(b).tostype('row_sparse')
    assert out.stype == 'default'
    np.testing.assert_allclose(out.asnumpy(), a + b)


def _fixture_arrays():
    inputs = np.load(os.path.join(FIXTURES, 'sparse_inputs.npz'))
    return {'csr': mx.nd.array(inputs['csr']).tostype('csr'),
            'rsp': mx.nd.array(inputs['rsp']).tostype('row_sparse'),
            'rsp3': mx.nd.array(inputs['rsp3'], dtype=np.float64).tostype('row_sparse'),
            'empty': mx.nd.sparse.zeros('row_sparse', (3, 4)),
            'csr_int': mx.nd.array(inputs['csr_int'], dtype=np.int32).tostype('csr')}


def test_params_bytes_equal_mxnet(tmp_path):
    """mx.nd.save of sparse arrays writes MXNet's bytes, and MXNet's file loads back."""
    path = str(tmp_path / 'mine.params')
    arrays = _fixture_arrays()
    mx.nd.save(path, arrays)
    with open(path, 'rb') as mine, open(os.path.join(FIXTURES, 'sparse.params'), 'rb') as ref:
        assert mine.read() == ref.read()
    loaded = mx.nd.load(os.path.join(FIXTURES, 'sparse.params'))
    for name, arr in arrays.items():
        assert loaded[name].stype == arr.stype and loaded[name].dtype == arr.dtype
        np.testing.assert_array_equal(loaded[name].asnumpy(), arr.asnumpy())


@pytest.mark.parametrize('stype', ['csr', 'row_sparse'])
def test_pickle_round_trip(stype):
    arr = mx.nd.array(_dense()).tostype(stype)
    back = pickle.loads(pickle.dumps(arr))
    assert type(back) is type(arr)
    np.testing.assert_array_equal(back.asnumpy(), arr.asnumpy())


def test_copyto_and_assignment_keep_storage_type():
    dense = _dense()
    rsp = mx.nd.sparse.zeros('row_sparse', dense.shape)
    rsp[:] = dense
    assert rsp.stype == 'row_sparse'
    np.testing.assert_array_equal(rsp.asnumpy(), dense)
    target = mx.nd.zeros(dense.shape)
    rsp.copyto(target)
    np.testing.assert_array_equal(target.asnumpy(), dense)
    on_cpu1 = rsp.copyto(mx.cpu(1))
    assert on_cpu1.context == mx.cpu(1) and on_cpu1.stype == 'row_sparse'
    with pytest.raises(TypeError):
        mx.nd.array(dense).tostype('csr').copyto(mx.nd.sparse.zeros('row_sparse', dense.shape))
