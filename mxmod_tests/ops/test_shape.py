"""Shape operators (Flatten, Reshape, transpose, SwapAxis, expand_dims, squeeze, Concat, stack,
SliceChannel, tile, repeat, Pad, reverse, Cast, reshape_like, shape_array, size_array): forward
against numpy, float64 gradients against central differences, and shape/type inference against
MXNet 1.9.1's frozen results (fixtures/shape_oracle.json)."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.ops.base import OPS
from mxmod.ops.shape_codes import reshape_shape
from mxmod_tests.ops.fixtures import shape_oracle as so
from mxmod_tests.ops.opcheck import check_forward, check_grad, make

SHAPE_OPS = {'Flatten', 'Reshape', 'reshape_like', 'transpose', 'SwapAxis', 'expand_dims',
             'squeeze', 'shape_array', 'size_array', 'Cast', 'Concat', 'stack', 'SliceChannel',
             'tile', 'repeat', 'Pad', 'reverse'}

# Cases where mxmod deliberately differs from MXNet 1.9.1: MXNet fails on a partial shape that is
# consistent, or accepts a shape that its forward then rejects or reads out of bounds.
DEVIATIONS = {
    # MXNet silently gives (5, 14) by integer division and reads 70 of 72 elements in forward
    'Reshape|{"shape": "(5, -1)"}|[[6, 3, 4]]|None': 'error',
    # MXNet fails: its empty-shape path cannot use the known output
    'Reshape|{}|[[0, 3, 4]]|[[5, 12]]': ([(5, 3, 4)], [(5, 12)]),
    # MXNet skips the unknown input when adding up the concat axis and reports (2, 3)
    'Concat|{"dim": "1", "num_args": "2"}|[[2, 3], None]|None': ([(2, 3), (2, 0)], [(2, 0)]),
    'Concat|{"dim": "1", "num_args": "2"}|[None, None]|[[2, 8]]': ([(2, 0), (2, 0)], [(2, 8)]),
    # MXNet ignores the mismatch; its forward then fails
    'stack|{"num_args": "2"}|[[2, 3], [2, 4]]|None': 'error',
    # MXNet adds the padding to the unknown size (-1) and reports 2
    'Pad|{"mode": "constant", "pad_width": "(0, 0, 0, 0, 1, 2, 3, 1)"}|[[2, 3, 0, 5]]|None':
        ([(2, 3, 0, 5)], [(2, 3, 0, 9)]),
    # MXNet accepts an axis out of range here and fails in forward
    'reverse|{"axis": "3"}|[[2, 3, 4]]|None': 'error',
}


@pytest.mark.parametrize('case', so.shape_cases(SHAPE_OPS), ids=so.case_id)
def test_infer_shape_matches_oracle(case):
    want = DEVIATIONS.get(so.case_id(case), so.normalize(case['result']))
    assert so.mxmod_shapes(case) == want


@pytest.mark.parametrize('case', so.type_cases(SHAPE_OPS), ids=lambda c: c['op'])
def test_infer_type_matches_oracle(case):
    if 'error' in case['result']:
        with pytest.raises(MXNetError):
            so.mxmod_types(case)
    else:
        assert so.mxmod_types(case) == case['result']


@pytest.mark.parametrize('index', so.forward_cases(SHAPE_OPS))
def test_forward_backward_matches_oracle(index):
    so.check_forward_backward(index)


def _x(*shape):
    return np.random.uniform(-1, 1, shape)


# ---- reshape family ---------------------------------------------------------------------------
@pytest.mark.parametrize('src,codes,reverse,want', [
    ((2, 3, 4), (0, -1), False, (2, 12)), ((2, 3, 4), (-3, 0), False, (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), False, (1, 2, 3, 4)), ((6, 4), (-4, -1, 3, 0), False, (2, 3, 4)),
    ((2, 3, 4), (-1, 0), True, (6, 4)), ((2, 3, 4), (0, -1), True, (3, 8)),
    ((2, 3, 4), (-2, 1), False, (2, 3, 4, 1)), ((10, 5, 4), (-1, 0), True, (50, 4)),
])
def test_reshape_codes(src, codes, reverse, want):
    assert reshape_shape(src, codes, reverse) == want
    x = _x(*src)
    check_forward('Reshape', {'shape': str(codes), 'reverse': str(reverse)}, [x],
                  [x.reshape(want)])


@pytest.mark.parametrize('codes', [(-1, -1), (-4, -1, -1, 0), (7, -1), (-4, 5, 0, 0), (0, 0, 0, 0)])
def test_reshape_bad_codes(codes):
    with pytest.raises(MXNetError):
        reshape_shape((6, 3, 4), codes)


def test_reshape_legacy_target_shape():
    x = _x(6, 3, 4)
    check_forward('Reshape', {'target_shape': '(0, 12)'}, [x], [x.reshape(6, 12)])
    check_forward('Reshape', {'target_shape': '(9, 0)', 'keep_highest': 'True'}, [x],
                  [x.reshape(6, 12)])
    with pytest.raises(MXNetError):
        make('Reshape').forward(None, [x], [])


@pytest.mark.parametrize('op,attrs,shape,fn', [
    ('Flatten', {}, (2, 3, 4), lambda x: x.reshape(2, 12)),
    ('flatten', {}, (5,), lambda x: x.reshape(5, 1)),
    ('Reshape', {'shape': '(0, -1)'}, (2, 3, 4), lambda x: x.reshape(2, 12)),
    ('reshape', {'shape': '(-3, 2, 2)'}, (2, 3, 4), lambda x: x.reshape(6, 2, 2)),
    ('transpose', {}, (2, 3, 4), lambda x: x.T),
    ('transpose', {'axes': '(1, 0, 2)'}, (2, 3, 4), lambda x: x.transpose(1, 0, 2)),
    ('transpose', {'axes': '(-1, 0, 1)'}, (2, 3, 4), lambda x: x.transpose(2, 0, 1)),
    ('SwapAxis', {'dim1': '0', 'dim2': '2'}, (2, 3, 4), lambda x: x.swapaxes(0, 2)),
    ('swapaxes', {'dim1': '-1', 'dim2': '1'}, (2, 3, 4), lambda x: x.swapaxes(1, 2)),
    ('expand_dims', {'axis': '1'}, (2, 3), lambda x: x[:, None]),
    ('expand_dims', {'axis': '-1'}, (2, 3), lambda x: x[..., None]),
    ('squeeze', {}, (1, 3, 1), lambda x: x.reshape(3)),
    ('squeeze', {'axis': '(0,)'}, (1, 3, 1), lambda x: x.reshape(3, 1)),
    ('squeeze', {'axis': '-1'}, (1, 3, 1), lambda x: x.reshape(1, 3)),
    ('squeeze', {}, (1, 1), lambda x: x.reshape(1)),
    ('tile', {'reps': '(2, 3)'}, (2, 3), lambda x: np.tile(x, (2, 3))),
    ('tile', {'reps': '(2, 1, 3)'}, (2, 3), lambda x: np.tile(x, (2, 1, 3))),
    ('tile', {'reps': '(3,)'}, (2, 3), lambda x: np.tile(x, 3)),
    ('repeat', {'repeats': '2'}, (2, 3), lambda x: np.repeat(x, 2)),
    ('repeat', {'repeats': '3', 'axis': '-1'}, (2, 3), lambda x: np.repeat(x, 3, axis=1)),
    ('repeat', {'repeats': '2', 'axis': '0'}, (2, 3), lambda x: np.repeat(x, 2, axis=0)),
    ('reverse', {'axis': '(0, 2)'}, (2, 3, 4), lambda x: x[::-1, :, ::-1]),
    ('flip', {'axis': '1'}, (2, 3), lambda x: x[:, ::-1]),
    ('Pad', {'mode': 'constant', 'pad_width': '(0, 0, 0, 0, 1, 2, 0, 1)',
             'constant_value': '2.5'}, (1, 2, 3, 2),
     lambda x: np.pad(x, [(0, 0), (0, 0), (1, 2), (0, 1)], constant_values=2.5)),
    ('pad', {'mode': 'edge', 'pad_width': '(0, 0, 0, 0, 2, 1, 1, 2)'}, (1, 2, 3, 4),
     lambda x: np.pad(x, [(0, 0), (0, 0), (2, 1), (1, 2)], mode='edge')),
    ('Pad', {'mode': 'reflect', 'pad_width': '(0, 0, 0, 0, 2, 1, 1, 2, 1, 1)'}, (1, 2, 3, 4, 2),
     lambda x: np.pad(x, [(0, 0), (0, 0), (2, 1), (1, 2), (1, 1)], mode='reflect')),
])
def test_unary_forward_and_grad(op, attrs, shape, fn):
    x = _x(*shape)
    check_forward(op, attrs, [x], [fn(x)])
    check_grad(op, attrs, [x])


def test_backward_uses_only_shapes():
    for name in ('Flatten', 'Reshape', 'transpose', 'SwapAxis', 'expand_dims', 'squeeze', 'Concat',
                 'stack', 'SliceChannel', 'tile', 'repeat', 'reverse', 'Cast', 'Pad'):
        assert OPS[name].backward_uses == (), name
        assert OPS[name].mirror_cheap, name
    from mxmod.ops.base import OpContext
    op = make('Reshape', shape='(0, -1)')
    octx = OpContext(np, mx.cpu())
    op.forward(octx, [_x(2, 3, 4)], [])
    grads = op.backward(octx, [np.ones((2, 12))], None, None, [])
    assert grads[0].shape == (2, 3, 4)


def test_reshape_like():
    a, b = _x(2, 3, 4), _x(6, 4)
    check_forward('reshape_like', {}, [a, b], [a.reshape(6, 4)])
    attrs = {'lhs_begin': '1', 'lhs_end': 'None', 'rhs_begin': '0', 'rhs_end': '1'}
    check_forward('reshape_like', attrs, [a, _x(12, 5)], [a.reshape(2, 12)])
    grads = check_grad('reshape_like', {}, [a, b], wrt=[0])
    assert grads[1] is None


def test_shape_and_size_array():
    x = _x(2, 3, 4)
    out = check_forward('shape_array', {}, [x], [np.array([2, 3, 4])])
    assert out[0].dtype == np.int64
    out = check_forward('size_array', {}, [x], [np.array([24])])
    assert out[0].dtype == np.int64


def test_cast():
    x = np.array([-1.7, 2.9, 0.2, 300.0])
    out = check_forward('Cast', {'dtype': 'int32'}, [x], [x.astype(np.int32)])
    assert out[0].dtype == np.int32
    out = check_forward('cast', {'dtype': 'float16'}, [x], [x.astype(np.float16)], rtol=1e-3)
    assert out[0].dtype == np.float16
    grads = check_grad('Cast', {'dtype': 'float64'}, [x[:3]])
    from mxmod.ops.base import OpContext
    op, octx = make('Cast', dtype='float16'), OpContext(np, mx.cpu())
    op.forward(octx, [x.astype(np.float32)], [])
    grads = op.backward(octx, [np.array([1, 2, 3, 4], dtype=np.float16)], None, None, [])
    assert grads[0].dtype == np.float32
    np.testing.assert_array_equal(grads[0], [1, 2, 3, 4])
    with pytest.raises(MXNetError):
        make('Cast', dtype='complex64')
    with pytest.raises(MXNetError):
        make('Cast')


# ---- joining and splitting --------------------------------------------------------------------
@pytest.mark.parametrize('dim', [0, 1, -1])
def test_concat(dim):
    xs = [_x(2, 3), _x(2, 3), _x(2, 3)]
    op = make('Concat', num_args='3', dim=str(dim))
    assert op.list_arguments() == ['arg0', 'arg1', 'arg2']
    check_forward('Concat', {'num_args': 3, 'dim': dim}, xs, [np.concatenate(xs, axis=dim)])
    check_grad('concat', {'num_args': 3, 'dim': dim}, xs)


def test_concat_unequal_sizes():
    xs = [_x(2, 1), _x(2, 4)]
    check_forward('Concat', {'num_args': 2}, xs, [np.concatenate(xs, axis=1)])
    check_grad('Concat', {'num_args': 2}, xs)
    with pytest.raises(MXNetError):
        make('Concat', num_args='0')


@pytest.mark.parametrize('axis', [0, 1, -1])
def test_stack(axis):
    xs = [_x(2, 3), _x(2, 3)]
    op = make('stack', num_args='2', axis=str(axis))
    assert op.list_arguments() == ['arg0', 'arg1']
    check_forward('stack', {'num_args': 2, 'axis': axis}, xs, [np.stack(xs, axis=axis)])
    check_grad('stack', {'num_args': 2, 'axis': axis}, xs)


@pytest.mark.parametrize('axis,squeeze', [(1, False), (0, True), (-1, False)])
def test_slice_channel(axis, squeeze):
    shape = [3, 6, 3]
    x = _x(*shape)
    attrs = {'num_outputs': '3', 'axis': str(axis), 'squeeze_axis': str(squeeze)}
    op = make('SliceChannel', **attrs)
    assert op.list_outputs() == ['output0', 'output1', 'output2']
    want = np.split(x, 3, axis=axis)
    if squeeze:
        want = [w.squeeze(axis) for w in want]
    check_forward('split', attrs, [x], want)
    check_grad('SliceChannel', attrs, [x])


def test_slice_channel_missing_head_gradient():
    from mxmod.ops.base import OpContext
    op = make('SliceChannel', num_outputs='2')
    x = _x(2, 4)
    octx = OpContext(np, mx.cpu())
    outs = op.forward(octx, [x], [])
    grad = op.backward(octx, [None, np.ones((2, 2))], [x], outs, [])[0]
    np.testing.assert_array_equal(grad, [[0, 0, 1, 1], [0, 0, 1, 1]])


# ---- errors and attribute parsing ---------------------------------------------------------------
@pytest.mark.parametrize('op,attrs,shape', [
    ('transpose', {'axes': '(0, 0, 1)'}, (2, 3, 4)), ('transpose', {'axes': '(1, 0)'}, (2, 3, 4)),
    ('SwapAxis', {'dim1': '0', 'dim2': '3'}, (2, 3, 4)), ('expand_dims', {'axis': '4'}, (2, 3, 4)),
    ('squeeze', {'axis': '(1,)'}, (1, 3)), ('SliceChannel', {'num_outputs': '4'}, (2, 6)),
    ('Pad', {'mode': 'constant', 'pad_width': '(0, 0, 1, 1)'}, (2, 3)),
    ('Pad', {'mode': 'constant', 'pad_width': '(1, 0, 0, 0, 1, 1, 1, 1)'}, (1, 2, 3, 4)),
    ('Pad', {'mode': 'reflect', 'pad_width': '(0, 0, 0, 0, 3, 1, 1, 1)'}, (1, 2, 3, 4)),
    ('Reshape', {'shape': '(7, -1)'}, (6, 4)), ('reverse', {'axis': '(2,)'}, (2, 3)),
])
def test_invalid_raises(op, attrs, shape):
    with pytest.raises(MXNetError):
        so.OPS[op](attrs).infer_shape([shape], [None] * len(so.OPS[op](attrs).list_outputs()))
    with pytest.raises(MXNetError):
        check_forward(op, attrs, [_x(*shape)], [])


def test_attribute_parsing_from_json_strings():
    assert make('Reshape', shape='(0, -1)', reverse='False').p.shape == (0, -1)
    assert make('Reshape', shape='[2, -1]').p.shape == (2, -1)
    assert make('transpose', axes='(1, 0, 2)').p.axes == (1, 0, 2)
    assert make('transpose').p.axes == ()
    assert make('squeeze', axis='None').p.axis is None
    assert make('squeeze', axis='2').p.axis == (2,)
    assert make('SliceChannel', num_outputs='2', squeeze_axis='1').p.squeeze_axis is True
    assert make('repeat', repeats='2', axis='None').p.axis is None
    assert make('Cast', dtype='float16').p.dtype == 'float16'
    assert make('Cast', dtype=np.float32).p.dtype == 'float32'
    assert make('Pad', mode='edge', pad_width='(0, 0, 0, 0, 1, 1, 1, 1)').p.constant_value == 0.0
    assert make('Concat', num_args='2').p.dim == 1
    with pytest.raises(MXNetError):
        make('Pad', mode='wrap', pad_width='(0, 0, 0, 0, 1, 1, 1, 1)')
    with pytest.raises(MXNetError):
        make('Concat', dim='1')
    with pytest.raises(MXNetError):
        make('transpose', axis='(1, 0)')


def test_imperative_calls():
    a = mx.nd.array(np.arange(6).reshape(2, 3))
    assert mx.nd.Concat(a, a, dim=0).shape == (4, 3)
    parts = mx.nd.split(a, num_outputs=3, axis=1)
    assert len(parts) == 3 and parts[0].shape == (2, 1)
    assert mx.nd.reshape(a, shape=(-1,)).shape == (6,)
    assert mx.nd.stack(a, a, axis=1).shape == (2, 2, 3)
    np.testing.assert_array_equal(mx.nd.transpose(a).asnumpy(), np.arange(6).reshape(2, 3).T)
