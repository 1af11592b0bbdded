"""Basic indexing of an NDArray returns a view where MXNet 1.9.1 does, a single element
included: ``a[1]`` of a 1-D array is a (1,) view that in-place arithmetic writes through
(MXNet's svrg_module updates every gradient row by row this way, biases too). The table was
printed by MXNet with fixtures/make_index_views.py."""
import numpy as np
import pytest

import mxmod as mx

# (shape, index expression, the original changes after ``result += 100``, result shape)
MXNET = [
    ((4,), 'a[1]', True, (1,)),
    ((4,), 'a[-1]', True, (1,)),
    ((4,), 'a[np.int64(2)]', True, (1,)),
    ((4,), 'a[1:3]', True, (2,)),
    ((4,), 'a[::2]', False, (2,)),
    ((4,), 'a[1][0]', True, (1,)),
    ((4,), 'next(iter(a))', True, (1,)),
    ((4,), 'a[...]', True, (4,)),
    ((4,), 'a[..., 2]', True, (1,)),
    ((4,), 'a[None, 1]', True, (1,)),
    ((3, 4), 'a[1]', True, (4,)),
    ((3, 4), 'a[-1]', True, (4,)),
    ((3, 4), 'a[1][2]', True, (1,)),
    ((3, 4), 'a[1, 2]', True, (1,)),
    ((3, 4), 'a[1, :]', True, (4,)),
    ((3, 4), 'a[:, 1]', False, (3,)),
    ((3, 4), 'a[1:2]', True, (1, 4)),
    ((3, 4), 'a[1:2, 1:3]', True, (1, 2)),
    ((3, 4), 'a[1:3][0]', True, (4,)),
    ((3, 4), 'a[1].reshape((2, 2))', True, (2, 2)),
    ((3, 4), 'next(iter(a))', True, (4,)),
    ((3, 4), 'a[1, ...]', True, (4,)),
    ((3, 4), 'a[..., 1]', False, (3,)),
    ((2, 3, 4), 'a[1]', True, (3, 4)),
    ((2, 3, 4), 'a[1, 2]', True, (4,)),
    ((2, 3, 4), 'a[1, 2, 3]', True, (1,)),
    ((2, 3, 4), 'a[0][1]', True, (4,)),
    ((2, 3, 4), 'a[0][1][2]', True, (1,)),
    ((2, 3, 4), 'a[-1, -1, -1]', True, (1,)),
]


@pytest.mark.parametrize('shape,expr,view,out_shape', MXNET, ids=[c[1] + str(len(c[0]))
                                                                  for c in MXNET])
def test_view_or_copy_as_mxnet(shape, expr, view, out_shape):
    a = mx.nd.arange(int(np.prod(shape))).reshape(shape)
    before = a.asnumpy().copy()
    result = eval(expr, {'a': a, 'np': np})  # pylint: disable=eval-used
    assert tuple(result.shape) == out_shape
    expected = result.asnumpy() + 100
    result += 100
    np.testing.assert_array_equal(result.asnumpy(), expected)
    assert bool((a.asnumpy() >= 100).any()) == view
    if not view:
        np.testing.assert_array_equal(a.asnumpy(), before)


def test_rows_of_gradients_updated_in_place():
    """svrg_module's rule: for each row of a gradient, row -= snapshot[i]; row += full[i]."""
    grads = [mx.nd.array([[1., 2.], [3., 4.]]), mx.nd.array([5., 6.])]
    snapshot = [mx.nd.array([[1., 1.], [1., 1.]]), mx.nd.array([2., 2.])]
    full = [mx.nd.array([[10., 10.], [10., 10.]]), mx.nd.array([7., 8.])]
    for grad, snap, avg in zip(grads, snapshot, full):
        for index, row in enumerate(grad):
            row -= snap[index]
            row += avg[index]
    np.testing.assert_array_equal(grads[0].asnumpy(), [[10., 11.], [12., 13.]])
    np.testing.assert_array_equal(grads[1].asnumpy(), [10., 12.])


def test_element_view_keeps_gradients_recorded():
    x = mx.nd.array([1., 2., 3.])
    x.attach_grad()
    with mx.autograd.record():
        y = x[1] * 3
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0., 3., 0.])
