"""Sparse operators in bound graphs against numpy: storage types inferred through the graph,
row_sparse gradients of dot / Embedding / SparseEmbedding / _square_sum / retain checked against
dense finite-difference-free references (the dense operator's gradient), and dense fallback."""
import numpy as np
import pytest

import mxmod as mx


def _csr(shape, density=0.3, seed=0):
    rng = np.random.RandomState(seed)
    return (rng.rand(*shape) * (rng.rand(*shape) < density)).astype(np.float32)


def _bind(sym, args, grad_stypes=None, req='write'):
    grads = {k: mx.nd.zeros(v.shape, stype=(grad_stypes or {}).get(k, 'default'))
             for k, v in args.items()}
    return sym.bind(mx.cpu(), args=args, args_grad=grads, grad_req=req)


@pytest.mark.parametrize('transpose', [False, True])
def test_dot_csr_gradient_is_row_sparse(transpose):
    x = _csr((6, 9))
    w = np.random.rand(6 if transpose else 9, 3).astype(np.float32)
    lhs = mx.sym.Variable('lhs', stype='csr')
    rhs = mx.sym.Variable('rhs')
    sym = mx.sym.sparse.dot(lhs, rhs, transpose_a=transpose)
    exe = sym.simple_bind(mx.cpu(), grad_req={'lhs': 'null', 'rhs': 'write'},
                          lhs=x.shape, rhs=w.shape)
    assert exe.arg_dict['lhs'].stype == 'csr'
    want_grad = 'default' if transpose else 'row_sparse'
    assert exe.grad_dict['rhs'].stype == want_grad
    exe.arg_dict['lhs'][:] = mx.nd.array(x).tostype('csr')
    exe.arg_dict['rhs'][:] = w
    out = exe.forward(is_train=True)[0]
    xa = x.T if transpose else x
    assert out.stype == ('row_sparse' if transpose else 'default')
    np.testing.assert_allclose(out.asnumpy(), xa @ w, rtol=1e-5)
    dy = np.random.rand(*out.shape).astype(np.float32)
    exe.backward([mx.nd.array(dy)])
    np.testing.assert_allclose(exe.grad_dict['rhs'].asnumpy(), xa.T @ dy, rtol=1e-5)
    if not transpose:      # only the columns the batch uses carry gradient rows
        used = np.nonzero(x.any(axis=0))[0]
        np.testing.assert_array_equal(exe.grad_dict['rhs'].indices.asnumpy(), used)


@pytest.mark.parametrize('op', ['Embedding', 'SparseEmbedding'])
def test_embedding_row_sparse_gradient(op):
    data = mx.sym.Variable('data')
    weight = mx.sym.Variable('w', stype='row_sparse')
    if op == 'Embedding':
        emb = mx.sym.Embedding(data, weight, input_dim=20, output_dim=4, sparse_grad=True)
    else:
        emb = mx.sym.contrib.SparseEmbedding(data, weight, input_dim=20, output_dim=4)
    exe = emb.simple_bind(mx.cpu(), grad_req={'data': 'null', 'w': 'write'}, data=(3, 5))
    assert exe.grad_dict['w'].stype == 'row_sparse'
    idx = np.random.randint(0, 20, (3, 5))
    table = np.random.rand(20, 4).astype(np.float32)
    exe.arg_dict['data'][:] = idx
    exe.arg_dict['w'][:] = table
    np.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), table[idx])
    dy = np.random.rand(3, 5, 4).astype(np.float32)
    exe.backward([mx.nd.array(dy)])
    want = np.zeros_like(table)
    np.add.at(want, idx.reshape(-1), dy.reshape(-1, 4))
    grad = exe.grad_dict['w']
    np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-5)
    np.testing.assert_array_equal(grad.indices.asnumpy(), np.unique(idx))


def test_square_sum_and_retain_gradients():
    dense = _csr((7, 3), density=0.5)
    rsp = mx.nd.array(dense).tostype('row_sparse')
    data = mx.sym.Variable('data', stype='row_sparse')
    sym = mx.sym._internal._square_sum(data, axis=1, keepdims=True)
    exe = _bind(sym, {'data': rsp}, {'data': 'row_sparse'})
    out = exe.forward(is_train=True)[0]
    assert out.stype == 'row_sparse'
    np.testing.assert_allclose(out.asnumpy(), (dense ** 2).sum(axis=1, keepdims=True), rtol=1e-6)
    dy = np.random.rand(7, 1).astype(np.float32)
    exe.backward([mx.nd.array(dy)])
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), 2 * dense * dy, rtol=1e-6)
    rows = mx.nd.array([0, 3, 5])
    kept = mx.nd.sparse.retain(rsp, rows)
    want = np.zeros_like(dense)
    want[[0, 3, 5]] = dense[[0, 3, 5]]
    np.testing.assert_array_equal(kept.asnumpy(), want)
    np.testing.assert_array_equal(kept.indices.asnumpy(), [0, 3, 5])


def test_add_n_of_row_sparse_stays_row_sparse():
    parts = [_csr((5, 2), 0.5, s) for s in range(3)]
    syms = [mx.sym.Variable('a%d' % i, stype='row_sparse') for i in range(3)]
    exe = mx.sym.sparse.add_n(*syms).bind(
        mx.cpu(), {'a%d' % i: mx.nd.array(p).tostype('row_sparse') for i, p in enumerate(parts)})
    out = exe.forward()[0]
    assert out.stype == 'row_sparse'
    np.testing.assert_allclose(out.asnumpy(), sum(parts), rtol=1e-6)


def test_fallback_operator_sees_dense_values():
    x = _csr((4, 6))
    lhs = mx.sym.Variable('x', stype='csr')
    sym = mx.sym.softmax(lhs)
    exe = sym.bind(mx.cpu(), {'x': mx.nd.array(x).tostype('csr')})
    out = exe.forward()[0]
    assert out.stype == 'default'
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out.asnumpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_batchnorm_fix_gamma_refuses_sparse():
    data = mx.sym.Variable('data', stype='row_sparse')
    with pytest.raises(mx.MXNetError, match='fix_gamma'):
        mx.sym.BatchNorm(data, fix_gamma=True).simple_bind(mx.cpu(), data=(2, 3))


def test_stype_dict_overrides_variable():
    data = mx.sym.Variable('data')
    sym = mx.sym.sparse.cast_storage(data, stype='default') * 2
    exe = sym.simple_bind(mx.cpu(), stype_dict={'data': 'csr'}, data=(3, 4))
    assert exe.arg_dict['data'].stype == 'csr'
    with pytest.raises(ValueError, match='storage type'):
        sym.simple_bind(mx.cpu(), stype_dict={'data': 'dense'}, data=(3, 4))


def test_reshape_keeps_sparse_inputs_sparse():
    """An executor bound with a CSR data input reshapes to another batch size (keras-mxnet
    evaluates the last, smaller batch this way; MXNet 1.9.1 fails there) and computes the same
    as numpy at the new size."""
    data = mx.sym.Variable('data', stype='csr')
    weight = mx.sym.Variable('w')
    sym = mx.sym.sparse.dot(data, weight)
    exe = sym.simple_bind(mx.cpu(), data=(4, 6), w=(6, 3))
    rng = np.random.RandomState(0)
    w = rng.rand(6, 3).astype('float32')
    exe.arg_dict['w'][:] = w
    small = exe.reshape(data=(2, 6), w=(6, 3))
    assert small.arg_dict['data'].stype == 'csr' and small.arg_dict['data'].shape == (2, 6)
    x = (rng.rand(2, 6) > 0.5).astype('float32')
    small.arg_dict['data'][:] = mx.nd.array(x).tostype('csr')
    np.testing.assert_allclose(small.forward()[0].asnumpy(), x.dot(w), rtol=1e-6)
    assert exe.reshape(data=(4, 6), w=(6, 3)).arg_dict['data'].stype == 'csr'
