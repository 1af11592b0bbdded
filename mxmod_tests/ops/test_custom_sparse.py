"""Custom operators on sparse arrays: the property's infer_storage_type and
infer_storage_type_backward choose the storage of outputs and input gradients (MXNet 1.9.1), and
autograd carries sparse values (csr inputs, gradients of their own storage type)."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError


@pytest.fixture(autouse=True)
def _fresh_names():
    """Symbols made here get their own name counters (later tests expect fresh ones)."""
    with mx.name.NameManager():
        yield


class _Sqr(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        inp = in_data[0]
        if inp.stype == 'default':
            self.assign(out_data[0], req[0], inp * inp)
            return
        assert isinstance(out_data[0], mx.nd.sparse.CSRNDArray)
        out = mx.nd.sparse.csr_matrix((inp.data * inp.data, inp.indices, inp.indptr),
                                      shape=inp.shape)
        self.assign(out_data[0], req[0], out)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        if in_data[0].stype == 'csr':
            assert in_grad[0].stype == 'csr' and out_grad[0].stype == 'default'
        self.assign(in_grad[0], req[0], 2 * mx.nd.sparse.elemwise_mul(in_data[0], out_grad[0]))


@mx.operator.register('test_sparse_sqr')
class _SqrProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def infer_storage_type(self, in_stype):
        if in_stype[0] == 'default':
            return ['default'], ['default'], []
        return ['csr'], ['csr'], []

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        if in_stype[0] == 'default':
            return ['default'], ['default'], ['default'], ['default'], []
        return ['default'], ['csr'], ['csr'], ['csr'], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Sqr()


def _csr_input(seed=0):
    rng = np.random.RandomState(seed)
    dense = rng.uniform(-1, 1, (4, 6)).astype(np.float32)
    dense[rng.uniform(size=dense.shape) < 0.5] = 0
    return dense, mx.nd.array(dense).tostype('csr')


def test_csr_forward_output_is_csr():
    dense, x = _csr_input()
    y = mx.nd.Custom(x, op_type='test_sparse_sqr')
    assert y.stype == 'csr'
    np.testing.assert_allclose(y.asnumpy(), dense * dense, rtol=1e-6)


def test_csr_autograd_gradient_keeps_storage_type():
    dense, x = _csr_input(1)
    x.attach_grad()
    assert x.grad.stype == 'csr'
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type='test_sparse_sqr')
    y.backward()
    assert x.grad.stype == 'csr'
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * dense, rtol=1e-6)


def test_csr_autograd_with_head_gradient_and_add():
    dense, x = _csr_input(2)
    x.attach_grad(grad_req='add')
    head = np.random.RandomState(3).uniform(size=dense.shape).astype(np.float32)
    for _ in range(2):
        with mx.autograd.record():
            y = mx.nd.Custom(x, op_type='test_sparse_sqr')
        y.backward(mx.nd.array(head))
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * (2 * dense * head), rtol=1e-5)


def test_dense_attach_grad_with_sparse_stype():
    x = mx.nd.ones((3, 2))
    x.attach_grad(stype='row_sparse')
    assert x.grad.stype == 'row_sparse'
    with mx.autograd.record():
        y = x * 3
    y.backward()
    assert x.grad.stype == 'row_sparse'
    np.testing.assert_allclose(x.grad.asnumpy(), np.full((3, 2), 3.0))


def test_dense_inputs_use_the_dense_path():
    dense = np.random.RandomState(4).uniform(-1, 1, (3, 5))
    x = mx.nd.array(dense)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type='test_sparse_sqr')
    y.backward()
    assert y.stype == 'default' and x.grad.stype == 'default'
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * dense, rtol=1e-6)


def test_default_property_refuses_sparse_inputs():
    @mx.operator.register('test_dense_only_identity')
    class _Prop(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            class _Op(mx.operator.CustomOp):
                def forward(self, is_train, req, in_data, out_data, aux):
                    self.assign(out_data[0], req[0], in_data[0])
            return _Op()

    _, x = _csr_input()
    with pytest.raises(MXNetError, match='storage type'):
        mx.nd.Custom(x, op_type='test_dense_only_identity')


def test_csr_numeric_gradient_through_executor():
    _, x = _csr_input(5)
    data = mx.sym.Variable('data', stype='csr')
    sym = mx.sym.Custom(data=data, op_type='test_sparse_sqr')
    mx.test_utils.check_numeric_gradient(sym, [x], grad_stype_dict={'data': 'csr'})
