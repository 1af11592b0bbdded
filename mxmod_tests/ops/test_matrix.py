"""dot, batch_dot, linalg_gemm2 and khatri_rao against frozen MXNet 1.9.1 outputs
(fixtures/matrix_oracle.npz), numpy references, float64 finite differences and MXNet's shapes."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad, make
from mxmod_tests.ops.test_loss import load_cases, replay_oracle

DATA, CASES = load_cases('matrix_oracle.npz')
RNG = np.random.RandomState(0)


@pytest.mark.parametrize('case', CASES, ids=[c['key'] for c in CASES])
def test_matches_oracle(case):
    replay_oracle(DATA, case, rtol=1e-10)


@pytest.mark.parametrize('case', CASES[::3], ids=[c['key'] for c in CASES[::3]])
def test_matches_oracle_with_string_attrs(case):
    replay_oracle(DATA, case, as_strings=True, rtol=1e-10)


@pytest.mark.parametrize('attrs,a_shape,b_shape,axes', [
    ({}, (2, 3, 4), (4, 5), ([2], [0])),
    ({'transpose_a': True}, (2, 3, 4), (2, 5), ([0], [0])),
    ({'transpose_b': True}, (2, 3, 4), (5, 6, 4), ([2], [2])),
    ({'transpose_a': True, 'transpose_b': True}, (2, 3), (4, 2), ([0], [1])),
    ({}, (3,), (3, 2, 2), ([0], [0])),
])
def test_dot_numpy_and_gradient(attrs, a_shape, b_shape, axes):
    a, b = RNG.randn(*a_shape), RNG.randn(*b_shape)
    check_forward('dot', attrs, [a, b], [np.tensordot(a, b, axes)], rtol=1e-12)
    check_grad('dot', attrs, [a, b])


def test_dot_vectors_and_float32():
    a, b = RNG.randn(5), RNG.randn(5)
    check_forward('dot', {}, [a, b], [[a @ b]], rtol=1e-12)
    check_grad('dot', {}, [a, b])
    out = check_forward('dot', {}, [a.astype(np.float32), np.ones((5, 2), np.float32)],
                        [np.outer(a.sum(), np.ones(2)).ravel()])[0]
    assert out.dtype == np.float32


@pytest.mark.parametrize('attrs', [{}, {'transpose_a': True}, {'transpose_b': True},
                                   {'transpose_a': True, 'transpose_b': True}])
def test_batch_dot_numpy_and_gradient(attrs):
    a, b = RNG.randn(2, 3, 3, 4), RNG.randn(2, 3, 4, 3)
    ta = np.swapaxes(a, -1, -2) if attrs.get('transpose_a') else a
    tb = np.swapaxes(b, -1, -2) if attrs.get('transpose_b') else b
    if ta.shape[-1] != tb.shape[-2]:
        b = np.swapaxes(b, -1, -2).copy()
        tb = np.swapaxes(b, -1, -2) if attrs.get('transpose_b') else b
    check_forward('batch_dot', attrs, [a, b], [ta @ tb], rtol=1e-12)
    check_grad('batch_dot', attrs, [a, b])


def test_gemm2_and_khatri_rao():
    a, b = RNG.randn(2, 3, 2, 4), RNG.randn(2, 4, 2, 5)
    want = 0.5 * np.swapaxes(np.swapaxes(a, 1, 2) @ np.swapaxes(b, 1, 2), 1, 2)
    check_forward('linalg_gemm2', {'axis': 1, 'alpha': 0.5}, [a, b], [want], rtol=1e-12)
    check_grad('_linalg_gemm2', {'axis': 1, 'alpha': 0.5, 'transpose_a': True},
               [RNG.randn(2, 4, 2, 3), b])
    mats = [RNG.randn(2, 3), RNG.randn(3, 3), RNG.randn(2, 3)]
    want = np.stack([np.kron(np.kron(mats[0][:, j], mats[1][:, j]), mats[2][:, j])
                     for j in range(3)], axis=1)
    check_forward('khatri_rao', {'num_args': 3}, mats, [want], rtol=1e-12)
    check_grad('khatri_rao', {'num_args': 3}, mats)
    assert make('khatri_rao', num_args=2).list_arguments() == ['arg0', 'arg1']


def _out_shape(op_name, ins, **attrs):
    return make(op_name, **attrs).infer_shape(list(ins), [None])


@pytest.mark.parametrize('op_name,attrs,ins,want', [
    # expectations recorded from MXNet 1.9.1 (test_partial_shapes.py compares many more partial
    # cases with MXNet's record)
    ('dot', {}, [(2, 3, 4), (4, 5)], (2, 3, 5)),
    ('dot', {'transpose_a': True}, [(2, 3, 4), (2, 5)], (3, 4, 5)),
    ('dot', {'transpose_b': True}, [(2, 3, 4), (5, 6, 4)], (2, 3, 5, 6)),
    ('dot', {'transpose_a': True, 'transpose_b': True}, [(2, 3, 4), (7, 2)], (3, 4, 7)),
    ('dot', {}, [(4,), (4,)], (1,)),
    ('dot', {}, [(2,), (2, 3)], (3,)),
    ('dot', {}, [(3, 2), (2,)], (3,)),
    ('dot', {}, [(0, 3), (3, 0)], (0, 0)),
    ('batch_dot', {}, [(2, 3, 4), (2, 4, 5)], (2, 3, 5)),
    ('batch_dot', {'transpose_a': True, 'transpose_b': True}, [(2, 4, 3), (2, 5, 4)], (2, 3, 5)),
    ('batch_dot', {}, [(2, 0, 4), (2, 4, 0)], (2, 0, 0)),
    ('batch_dot', {}, [(0, 3, 4), (0, 4, 5)], (0, 3, 5)),
    ('batch_dot', {}, [(2, 2, 3, 4), (2, 2, 4, 5)], (2, 2, 3, 5)),
    ('linalg_gemm2', {}, [(3, 4), (4, 2)], (3, 2)),
    ('linalg_gemm2', {'axis': 1}, [(2, 3, 2, 4), (2, 4, 2, 5)], (2, 3, 2, 5)),
    ('khatri_rao', {'num_args': 2}, [(2, 3), (4, 3)], (8, 3)),
])
def test_infer_shape(op_name, attrs, ins, want):
    assert tuple(_out_shape(op_name, ins, **attrs)[1][0]) == want


def test_infer_shape_unknowns_as_mxnet():
    with pytest.raises(MXNetError):     # MXNet fails on an unknown contracted dim
        _out_shape('dot', [(2, 0), (3, 4)])
    assert _out_shape('dot', [None, (3, 4)])[1] == [None]
    assert _out_shape('batch_dot', [(0, 3, 4), (0, 0, 5)])[1] == [None]   # as MXNet


@pytest.mark.parametrize('op_name,attrs,ins', [
    ('dot', {}, [(2, 3), (4, 5)]),
    ('dot', {'transpose_a': True, 'transpose_b': True}, [(2, 3, 4), (5, 3, 4)]),
    ('dot', {'transpose_a': True}, [(3,), (3,)]),
    ('batch_dot', {}, [(2, 3, 4), (2, 5, 6)]),
    ('batch_dot', {}, [(2, 3), (3, 2)]),
    ('batch_dot', {}, [(2, 3, 4), (3, 4, 5)]),
    ('linalg_gemm2', {'axis': -1}, [(2, 3), (3, 2)]),
    ('linalg_gemm2', {}, [(5, 2, 3), (0, 3, 4)]),   # as MXNet: unknown vs known batch dim
    ('khatri_rao', {'num_args': 2}, [(2, 3), (4, 5)]),
])
def test_infer_shape_errors(op_name, attrs, ins):
    with pytest.raises(MXNetError):
        _out_shape(op_name, ins, **attrs)


def test_names_types_and_attributes():
    assert make('dot').list_arguments() == ['lhs', 'rhs']
    assert make('batch_dot').list_arguments() == ['lhs', 'rhs']
    assert make('linalg_gemm2').list_arguments() == ['A', 'B']
    assert make('linalg_gemm2').op_name == '_linalg_gemm2'
    assert make('dot').infer_type(['float64', None], [None]) == (['float64'] * 2, ['float64'])
    op = make('dot', transpose_a='True', transpose_b='0', forward_stype='default')
    assert (op.p.transpose_a, op.p.transpose_b, op.p.forward_stype) == (True, False, 'default')
    assert make('linalg_gemm2', alpha='2.5', axis='1').p.alpha == 2.5
    with pytest.raises(MXNetError):
        make('dot', forward_stype='dense')
    a = mx.nd.array(np.ones((2, 3)))
    assert mx.nd.dot(a, a, transpose_b=True).asnumpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    sym = mx.sym.dot(mx.sym.var('x'), mx.sym.var('w'), name='d')
    assert sym.infer_shape(x=(2, 3, 4), w=(4, 5))[1] == [(2, 3, 5)]
