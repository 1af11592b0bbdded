"""Indexing operators (slice, slice_axis, slice_like, take, pick, one_hot, where, clip,
broadcast_to, broadcast_axis, broadcast_like, diag, gather_nd, scatter_nd): forward against numpy,
float64 gradients against central differences, and shape/type inference and index-mode semantics
against MXNet 1.9.1's frozen results (fixtures/shape_oracle.*)."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.ops.base import OPS, OpContext
from mxmod_tests.ops.fixtures import shape_oracle as so
from mxmod_tests.ops.opcheck import check_forward, check_grad, make

INDEX_OPS = {'slice', 'crop', 'slice_axis', 'slice_like', 'take', 'pick', 'one_hot', 'where',
             'clip', 'broadcast_to', 'broadcast_axis', 'broadcast_like', 'diag', 'gather_nd',
             'scatter_nd'}

# Where mxmod deliberately differs from MXNet 1.9.1 (MXNet fails on consistent partial shapes, or
# accepts shapes its forward rejects).
DEVIATIONS = {
    # MXNet accepts shapes that do not fit (its inference stops silently; forward then fails)
    'where|{}|[[2, 3], [2, 4], [2, 3]]|None': 'error',
    'where|{}|[[2, 3, 1], [2, 3], [2, 3]]|None': 'error',
    # negative axes are accepted (MXNet indexes the shape with -1 and fails)
    'broadcast_axis|{"axis": "(-1,)", "size": "(4,)"}|[[1, 3, 1]]|None': ([(1, 3, 1)], [(1, 3, 4)]),
}


@pytest.mark.parametrize('case', so.shape_cases(INDEX_OPS), ids=so.case_id)
def test_infer_shape_matches_oracle(case):
    want = DEVIATIONS.get(so.case_id(case), so.normalize(case['result']))
    assert so.mxmod_shapes(case) == want


@pytest.mark.parametrize('case', so.type_cases(INDEX_OPS), ids=lambda c: c['op'])
def test_infer_type_matches_oracle(case):
    assert so.mxmod_types(case) == case['result']


@pytest.mark.parametrize('index', so.forward_cases(INDEX_OPS))
def test_forward_backward_matches_oracle(index):
    so.check_forward_backward(index)


def _x(*shape):
    return np.random.uniform(-1, 1, shape)


# ---- slicing ----------------------------------------------------------------------------------
@pytest.mark.parametrize('attrs,fn', [
    ({'begin': '(1,)', 'end': '(3,)'}, lambda x: x[1:3]),
    ({'begin': '(None, 1)', 'end': '(None, -1)'}, lambda x: x[:, 1:-1]),
    ({'begin': '(-1, None, 0)', 'end': '(None, None, 4)', 'step': '(-2, None, 3)'},
     lambda x: x[-1::-2, :, 0:4:3]),
    ({'begin': '(0, 0, 0)', 'end': '(9, 9, 9)'}, lambda x: x),
    ({'begin': '[1, 2]', 'end': '[None, 0]', 'step': '[1, -1]'}, lambda x: x[1:, 2:0:-1]),
])
@pytest.mark.parametrize('name', ['slice', 'crop'])
def test_slice(name, attrs, fn):
    x = _x(5, 4, 5)
    check_forward(name, attrs, [x], [fn(x)])
    check_grad(name, attrs, [x])


@pytest.mark.parametrize('attrs,fn', [
    ({'axis': '0', 'begin': '1', 'end': '3'}, lambda x: x[1:3]),
    ({'axis': '-1', 'begin': '-3', 'end': 'None'}, lambda x: x[..., -3:]),
    ({'axis': '1', 'begin': '0', 'end': '-1'}, lambda x: x[:, :-1]),
])
def test_slice_axis(attrs, fn):
    x = _x(4, 3, 5)
    check_forward('slice_axis', attrs, [x], [fn(x)])
    check_grad('slice_axis', attrs, [x])


def test_slice_like():
    x, like = _x(4, 3, 5), _x(2, 3, 1)
    check_forward('slice_like', {}, [x, like], [x[:2, :3, :1]])
    check_forward('slice_like', {'axes': '(0, -1)'}, [x, like], [x[:2, :, :1]])
    grads = check_grad('slice_like', {'axes': '(2,)'}, [x, like], wrt=[0])
    assert grads[1] is None


# ---- take / pick / one_hot / where / clip -------------------------------------------------------
@pytest.mark.parametrize('axis', [0, 1, -1])
@pytest.mark.parametrize('mode', ['clip', 'wrap'])
def test_take(axis, mode):
    a = _x(4, 3, 5)
    idx = np.array([[0, 2], [2, -1], [7, 1]], dtype=np.float32)
    size = a.shape[axis]
    pos = np.clip(idx.astype(int), 0, size - 1) if mode == 'clip' else np.mod(idx.astype(int), size)
    attrs = {'axis': str(axis), 'mode': mode}
    check_forward('take', attrs, [a, idx], [np.take(a, pos, axis=axis)])
    grads = check_grad('take', attrs, [a, idx], wrt=[0])
    assert grads[1] is None


def test_take_raise_mode():
    a = _x(4, 3)
    check_forward('take', {'mode': 'raise'}, [a, np.array([3, 0, 3])], [a[[3, 0, 3]]])
    for bad in ([4], [-1]):
        with pytest.raises(MXNetError):
            check_forward('take', {'mode': 'raise'}, [a, np.array(bad)], [])


@pytest.mark.parametrize('axis,keepdims', [(1, False), (0, True), (-1, True), (-2, False)])
@pytest.mark.parametrize('mode', ['clip', 'wrap'])
def test_pick(axis, keepdims, mode):
    x = _x(3, 4, 2)
    size = x.shape[axis]
    rest = [d for i, d in enumerate(x.shape) if i != axis % 3]
    idx = np.random.randint(-2, size + 2, size=rest).astype(np.float64)
    pos = np.clip(idx, 0, size - 1) if mode == 'clip' else np.mod(idx, size)
    want = np.take_along_axis(x, np.expand_dims(pos.astype(int), axis), axis)
    want = want if keepdims else want.squeeze(axis)
    attrs = {'axis': str(axis), 'keepdims': str(keepdims), 'mode': mode}
    check_forward('pick', attrs, [x, idx], [want])
    grads = check_grad('pick', attrs, [x, idx], wrt=[0])
    assert grads[1] is None


def test_pick_index_with_kept_axis():
    x = _x(3, 4)
    idx = np.array([[1], [3], [0]])
    check_forward('pick', {'axis': '1'}, [x, idx], [x[[0, 1, 2], [1, 3, 0]]])
    with pytest.raises(MXNetError):
        make('pick', axis='None')


def test_one_hot():
    idx = np.array([[0, 3], [5, -1]], dtype=np.float32)
    want = np.array([[[1, 0, 0, 0], [0, 0, 0, 1]], [[0, 0, 0, 0], [0, 0, 0, 0]]], np.float32)
    out = check_forward('one_hot', {'depth': '4'}, [idx], [want])
    assert out[0].dtype == np.float32
    attrs = {'depth': '4', 'on_value': '3', 'off_value': '-1', 'dtype': 'int64'}
    out = check_forward('one_hot', attrs, [idx], [want * 4 - 1])
    assert out[0].dtype == np.int64
    assert make('one_hot', depth='4').backward(None, [want], [idx], None, []) == [None]


def test_where():
    cond = np.array([[1, 0, 2], [0, 0, -1]], dtype=np.float64)
    x, y = _x(2, 3), _x(2, 3)
    check_forward('where', {}, [cond, x, y], [np.where(cond != 0, x, y)])
    grads = check_grad('where', {}, [cond, x, y], wrt=[1, 2])
    assert grads[0] is None
    cond1 = np.array([0, 3])
    check_forward('where', {}, [cond1, x, y], [np.where(cond1[:, None] != 0, x, y)])
    check_grad('where', {}, [cond1, x, y], wrt=[1, 2])


def test_clip():
    x = np.array([-2.0, -0.5, 0.1, 0.5, 0.9, 3.0])
    check_forward('clip', {'a_min': '-0.5', 'a_max': '0.5'}, [x], [np.clip(x, -0.5, 0.5)])
    inner = np.array([-0.4, 0.1, 0.45])
    check_grad('clip', {'a_min': '-0.5', 'a_max': '0.5'}, [np.concatenate([inner, [-2, 3]])])
    op, octx = make('clip', a_min=-0.5, a_max=0.5), OpContext(np, mx.cpu())
    grad = op.backward(octx, [np.ones(6)], [x], None, [])[0]
    np.testing.assert_array_equal(grad, [0, 1, 1, 1, 0, 0])     # bounds included, as MXNet
    ints = np.arange(6, dtype=np.int32)
    out = check_forward('clip', {'a_min': '1.5', 'a_max': '3.9'}, [ints], [[1, 1, 2, 3, 3, 3]])
    assert out[0].dtype == np.int32


# ---- broadcasting -----------------------------------------------------------------------------
@pytest.mark.parametrize('op,attrs,shape,target', [
    ('broadcast_to', {'shape': '(2, 3, 4)'}, (1, 3, 1), (2, 3, 4)),
    ('broadcast_to', {'shape': '(0, 3, 4)'}, (2, 1, 4), (2, 3, 4)),
    ('broadcast_axis', {'axis': '(0, 2)', 'size': '(2, 4)'}, (1, 3, 1), (2, 3, 4)),
    ('broadcast_axes', {'axis': '-1', 'size': '5'}, (2, 1), (2, 5)),
])
def test_broadcast(op, attrs, shape, target):
    x = _x(*shape)
    check_forward(op, attrs, [x], [np.broadcast_to(x, target)])
    check_grad(op, attrs, [x])


def test_broadcast_like():
    x, like = _x(1, 3, 1), _x(2, 3, 4)
    check_forward('broadcast_like', {}, [x, like], [np.broadcast_to(x, (2, 3, 4))])
    grads = check_grad('broadcast_like', {}, [x, like], wrt=[0])
    assert grads[1] is None
    attrs = {'lhs_axes': '(0, 2)', 'rhs_axes': '(1, 0)'}
    check_forward('broadcast_like', attrs, [x, _x(5, 7)], [np.broadcast_to(x, (7, 3, 5))])
    check_grad('broadcast_like', attrs, [x, _x(5, 7)], wrt=[0])


# ---- diag / gather_nd / scatter_nd --------------------------------------------------------------
@pytest.mark.parametrize('attrs,shape,fn', [
    ({}, (4,), lambda x: np.diag(x)),
    ({'k': '2'}, (3,), lambda x: np.diag(x, 2)),
    ({'k': '-1'}, (3, 4), lambda x: np.diagonal(x, -1)),
    ({'k': '1', 'axis1': '1', 'axis2': '2'}, (2, 3, 4), lambda x: np.diagonal(x, 1, 1, 2)),
    ({'axis1': '-1', 'axis2': '0'}, (3, 2, 4), lambda x: np.diagonal(x, 0, -1, 0)),
])
def test_diag(attrs, shape, fn):
    x = _x(*shape)
    check_forward('diag', attrs, [x], [fn(x)])
    check_grad('diag', attrs, [x])


def test_gather_nd():
    data = _x(3, 4, 2)
    idx = np.array([[0, 2, 2, -1], [1, 3, 3, -4]], dtype=np.float32)
    pos = idx.astype(int)
    check_forward('gather_nd', {}, [data, idx], [data[pos[0], pos[1]]])
    grads = check_grad('gather_nd', {}, [data, idx], wrt=[0])
    assert grads[1] is None
    with pytest.raises(MXNetError):
        check_forward('gather_nd', {}, [data, np.array([[3], [0]])], [])


def test_scatter_nd():
    data = _x(3, 2)
    idx = np.array([[0, 2, 1], [1, 3, 0]])
    want = np.zeros((3, 4, 2))
    want[idx[0], idx[1]] = data
    check_forward('scatter_nd', {'shape': '(3, 4, 2)'}, [data, idx], [want])
    grads = check_grad('scatter_nd', {'shape': '(3, 4, 2)'}, [data, idx], wrt=[0])
    assert grads[1] is None


# ---- errors and attribute parsing ---------------------------------------------------------------
@pytest.mark.parametrize('op,attrs,shapes', [
    ('slice', {'begin': '(0, 0, 0, 0)', 'end': '(1, 1, 1, 1)'}, [(2, 3, 4)]),
    ('slice_axis', {'axis': '0', 'begin': '2', 'end': '1'}, [(4, 3)]),
    ('slice_axis', {'axis': '2', 'begin': '0', 'end': '1'}, [(4, 3)]),
    ('slice_like', {}, [(2, 3), (3, 3)]),
    ('broadcast_to', {'shape': '(2, 3)'}, [(2, 2)]),
    ('broadcast_to', {'shape': '(2, 3)'}, [(1, 2, 3)]),
    ('broadcast_axis', {'axis': '(0,)', 'size': '(3,)'}, [(2, 3)]),
    ('diag', {'k': '4'}, [(3, 4)]), ('diag', {'axis1': '1', 'axis2': '1'}, [(3, 4)]),
    ('take', {'axis': '2'}, [(3, 4), (2,)]),
])
def test_invalid_raises(op, attrs, shapes):
    with pytest.raises(MXNetError):
        OPS[op](attrs).infer_shape(shapes, [None])
    with pytest.raises(MXNetError):
        check_forward(op, attrs, [_x(*s) for s in shapes], [])


def test_attribute_parsing_from_json_strings():
    op = make('slice', begin='(None, 1)', end='(2, None)', step='(None, 2)')
    assert (op.p.begin, op.p.end, op.p.step) == ((None, 1), (2, None), (None, 2))
    assert make('slice', begin='(0,)', end='(1,)').p.step == ()
    assert make('slice_axis', axis='1', begin='0', end='None').p.end is None
    op = make('take', axis='-1', mode='wrap')
    assert (op.p.axis, op.p.mode) == (-1, 'wrap')
    assert make('take').p.mode == 'clip'
    op = make('pick', keepdims='True')
    assert (op.p.axis, op.p.keepdims, op.p.mode) == (-1, True, 'clip')
    op = make('one_hot', depth='3', on_value='2', off_value='-1.5', dtype='int32')
    assert (op.p.on_value, op.p.off_value, op.p.dtype) == (2.0, -1.5, 'int32')
    assert make('broadcast_like', lhs_axes='(0,)', rhs_axes='None').p.rhs_axes is None
    assert make('broadcast_axis', axis='(0, 2)', size='(2, 4)').p.size == (2, 4)
    assert make('scatter_nd', shape='(3, 4)').p.shape == (3, 4)
    op = make('clip', a_min='-1e-3', a_max='1')
    assert (op.p.a_min, op.p.a_max) == (-0.001, 1.0)
    for bad in [('take', {'mode': 'bogus'}), ('pick', {'mode': 'raise'}), ('clip', {'a_min': '0'}),
                ('slice', {'begin': '(0,)'}), ('one_hot', {'depth': '2', 'dtype': 'complex64'})]:
        with pytest.raises(MXNetError):
            make(bad[0], **bad[1])


def test_imperative_calls():
    a = mx.nd.array(np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(mx.nd.take(a, mx.nd.array([2, 0])).asnumpy(),
                                  np.arange(12).reshape(3, 4)[[2, 0]])
    assert mx.nd.slice(a, begin=(1, None), end=(None, 2)).shape == (2, 2)
    assert mx.nd.one_hot(mx.nd.array([1, 0]), depth=3).shape == (2, 3)
    assert mx.nd.pick(a, mx.nd.array([0, 1, 3]), axis=1).asnumpy().tolist() == [0, 5, 11]
