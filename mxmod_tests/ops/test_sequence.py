"""SequenceMask / SequenceLast / SequenceReverse against frozen MXNet outputs, numpy references and
central differences."""
import os

import numpy as np
import pytest

from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad, make

FIX = np.load(os.path.join(os.path.dirname(__file__), 'fixtures', 'seq_rnn_oracle.npz'))
CASES = [('SequenceMask', 0), ('SequenceMask', 1), ('SequenceLast', 0), ('SequenceLast', 1),
         ('SequenceReverse', 0)]


def _data(axis):
    data = FIX['seq_data']
    return data if axis == 0 else np.ascontiguousarray(data.transpose(1, 0, 2))


def _attrs(op, axis, use_len=True):
    attrs = {'use_sequence_length': use_len, 'axis': axis}
    if op == 'SequenceMask':
        attrs['value'] = -2.5
    return attrs


@pytest.mark.parametrize('op,axis', CASES)
def test_forward_matches_oracle(op, axis):
    key = '%s_axis%d' % (op, axis)
    check_forward(op, _attrs(op, axis), [_data(axis), FIX[key + '_len']], [FIX[key + '_out']])
    check_forward(op, _attrs(op, axis, False), [_data(axis)], [FIX[key + '_plain']])


@pytest.mark.parametrize('op,axis', CASES)
def test_backward_matches_oracle(op, axis):
    key = '%s_axis%d' % (op, axis)
    grads = check_grad(op, _attrs(op, axis), [_data(axis), FIX[key + '_len']], wrt=[0],
                       head=[FIX[key + '_head']])
    np.testing.assert_allclose(grads[0], FIX[key + '_grad'], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('op,axis', CASES)
def test_gradient_without_lengths(op, axis):
    check_grad(op, _attrs(op, axis, False), [np.random.uniform(-1, 1, (4, 3, 2, 2))])


def test_numpy_reference():
    rng = np.random.RandomState(0)
    data = rng.randn(6, 4, 3)
    lengths = np.array([6, 0, 3, 1])
    want_mask = data.copy()
    want_last = np.zeros((4, 3))
    want_rev = data.copy()
    for b, n in enumerate(lengths):
        want_mask[n:, b] = 7.0
        want_last[b] = data[max(n - 1, 0), b]
        want_rev[:n, b] = data[:n, b][::-1]
    check_forward('SequenceMask', {'use_sequence_length': True, 'value': 7.0},
                  [data, lengths], [want_mask])
    check_forward('SequenceLast', {'use_sequence_length': True}, [data, lengths], [want_last])
    check_forward('SequenceReverse', {'use_sequence_length': True}, [data, lengths], [want_rev])


def test_arguments_and_shapes():
    op = make('SequenceLast', use_sequence_length='True', axis='1')
    assert op.list_arguments() == ['data', 'sequence_length']
    assert make('SequenceMask').list_arguments() == ['data']
    assert op.infer_shape([(3, 4, 5), None], [None]) == ([(3, 4, 5), (3,)], [(3, 5)])
    op0 = make('SequenceLast', use_sequence_length=True)
    assert op0.infer_shape([(3, 4, 5), None], [None]) == ([(3, 4, 5), (4,)], [(4, 5)])
    # as MXNet 1.9.1: from data forwards only (nothing from the output), and an unknown data
    # shape fails (MXNet reads its batch dim); test_partial_shapes.py has many more cases
    assert op0.infer_shape([(3, 0, 0), None], [(4, 5)]) == ([(3, 0, 0), (0,)], [(0, 0)])
    mask = make('SequenceMask', use_sequence_length=True)
    with pytest.raises(MXNetError):
        mask.infer_shape([None, None], [(2, 6, 3)])
    assert make('SequenceReverse').infer_shape([None], [None]) == ([None], [None])
    assert mask.infer_type(['float64', None], [None]) == (['float64', 'float64'], ['float64'])
    assert mask.infer_type(['float32', 'int32'], [None]) == (['float32', 'int32'], ['float32'])


def test_errors():
    # as MXNet, the axis is checked when shapes are inferred (the operator can be made)
    with pytest.raises(MXNetError, match='axis'):
        make('SequenceReverse', axis=1).infer_shape([(3, 4)], [None])
    with pytest.raises(MXNetError, match='axis'):
        make('SequenceMask', axis=2).infer_shape([(3, 4)], [None])
    with pytest.raises(MXNetError, match='inconsistent'):
        make('SequenceMask', use_sequence_length=True).infer_shape([(3, 4), (5,)], [None])
    with pytest.raises(MXNetError, match='at least 2'):
        make('SequenceLast').infer_shape([(3,)], [None])


@pytest.mark.parametrize('op,axis', CASES)
def test_symbolic_executor_with_add_req(op, axis):
    import mxmod as mx
    key = '%s_axis%d' % (op, axis)
    sym = getattr(mx.sym, op)(mx.sym.var('data'), mx.sym.var('len'), **_attrs(op, axis))
    data = _data(axis)
    exe = sym.simple_bind(mx.cpu(), data=data.shape, grad_req={'data': 'add', 'len': 'null'})
    exe.arg_dict['data'][:] = data
    exe.arg_dict['len'][:] = FIX[key + '_len']
    exe.grad_dict['data'][:] = 0
    for _ in range(2):
        out = exe.forward(is_train=True)[0]
        exe.backward([mx.nd.array(FIX[key + '_head'])])
    np.testing.assert_allclose(out.asnumpy(), FIX[key + '_out'], rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), 2 * FIX[key + '_grad'], rtol=1e-6)
