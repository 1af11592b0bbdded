"""The linalg operators against numpy: forwards, float64 central-difference gradients (for the
symmetric-input factorisations, differences of the lower triangle against MXNet's symmetric
gradient), shapes, and the ``mx.nd.linalg`` / ``mx.sym.linalg`` namespaces."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad, make, run_forward

RNG = np.random.RandomState(9)


def spd(*batch, n=3):
    m = RNG.uniform(-1, 1, batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def T(x):
    return np.swapaxes(x, -1, -2)


@pytest.mark.parametrize('ta,tb,axis', [(False, False, -2), (True, True, -2), (False, True, 0)])
def test_gemm(ta, tb, axis):
    a, b, c = RNG.randn(2, 3, 4), RNG.randn(2, 4, 5), RNG.randn(2, 3, 5)
    want = 2.0 * a @ b + 0.5 * c
    a, b = (T(a) if ta else a), (T(b) if tb else b)
    if axis == 0:
        a, b, c, want = (x.transpose(1, 0, 2) for x in (a, b, c, want))
    attrs = {'transpose_a': ta, 'transpose_b': tb, 'alpha': 2.0, 'beta': 0.5, 'axis': axis}
    check_forward('_linalg_gemm', attrs, [a, b, c], [want])
    check_grad('_linalg_gemm', attrs, [a, b, c])


@pytest.mark.parametrize('name,attrs', [
    ('_linalg_trsm', {}), ('_linalg_trsm', {'transpose': True, 'lower': False, 'alpha': 2.0}),
    ('_linalg_trsm', {'rightside': True, 'alpha': 0.5}),
    ('_linalg_trsm', {'rightside': True, 'transpose': True, 'lower': False}),
    ('_linalg_trmm', {'alpha': 2.0}), ('_linalg_trmm', {'transpose': True, 'lower': False}),
    ('_linalg_trmm', {'rightside': True}), ('_linalg_trmm', {'rightside': True, 'transpose': True})])
def test_triangular(name, attrs):
    right = attrs.get('rightside', False)
    a = RNG.uniform(-1, 1, (2, 4, 4)) + 3 * np.eye(4)
    b = RNG.uniform(-1, 1, (2, 3, 4) if right else (2, 4, 3))
    tri = np.tril(a) if attrs.get('lower', True) else np.triu(a)
    op_a = T(tri) if attrs.get('transpose') else tri
    alpha = attrs.get('alpha', 1.0)
    if name == '_linalg_trmm':
        want = alpha * (b @ op_a if right else op_a @ b)
    else:
        want = alpha * (b @ np.linalg.inv(op_a) if right else np.linalg.solve(op_a, b))
    check_forward(name, attrs, [a, b], [want], rtol=1e-10)
    check_grad(name, attrs, [a, b])


@pytest.mark.parametrize('transpose', [False, True])
def test_syrk(transpose):
    a = RNG.randn(2, 3, 4)
    want = 0.7 * (T(a) @ a if transpose else a @ T(a))
    check_forward('_linalg_syrk', {'transpose': transpose, 'alpha': 0.7}, [a], [want])
    check_grad('_linalg_syrk', {'transpose': transpose, 'alpha': 0.7}, [a])


def _lower_triangle_grad(name, attrs, a, eps=1e-6):
    """Central differences of sum(heads * f(A)) over the lower triangle of a symmetric A (the op
    reads only that triangle), against MXNet's symmetric gradient folded onto it."""
    op = make(name, **attrs)
    heads = [RNG.randn(*o.shape) for o in run_forward(op, [a])]
    grads = check_grad(name, attrs, [a], head=heads, wrt=[])
    folded = np.tril(grads[0] + T(grads[0])) - grads[0] * np.eye(a.shape[-1])
    num = np.zeros_like(a)
    for idx in zip(*np.nonzero(np.broadcast_to(np.tril(np.ones(a.shape[-2:])), a.shape))):
        for sign in (1, -1):
            x = a.copy()
            x[idx] += sign * eps
            outs = run_forward(op, [x])
            num[idx] += sign * sum(np.sum(h * o) for h, o in zip(heads, outs)) / (2 * eps)
    np.testing.assert_allclose(folded, num, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize('lower', [True, False])
def test_potrf_and_potri(lower):
    a = spd(2)
    chol = np.linalg.cholesky(a)
    factor = chol if lower else T(chol)
    check_forward('_linalg_potrf', {'lower': lower}, [a], [factor])
    _lower_triangle_grad('_linalg_potrf', {'lower': lower}, a)
    check_forward('_linalg_potri', {'lower': lower}, [factor], [np.linalg.inv(a)])
    check_grad('_linalg_potri', {'lower': lower}, [factor])


def test_gelqf_and_syevd():
    a = RNG.randn(2, 3, 5)
    q, low = run_forward(make('_linalg_gelqf'), [a])
    np.testing.assert_allclose(low @ q, a, atol=1e-12)
    np.testing.assert_allclose(q @ T(q), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-12)
    assert np.allclose(np.triu(low, 1), 0)
    check_grad('_linalg_gelqf', {}, [a])
    s = spd(2)
    u, lam = run_forward(make('_linalg_syevd'), [s])
    np.testing.assert_allclose(T(u) @ (lam[..., None] * u), s, atol=1e-12)
    np.testing.assert_allclose(lam, np.linalg.eigvalsh(s), atol=1e-12)
    biggest = np.take_along_axis(u, np.abs(u).argmax(-1)[..., None], -1)
    assert np.all(biggest > 0)
    _lower_triangle_grad('_linalg_syevd', {}, s)


def test_inverse_det_slogdet_sumlogdiag():
    a = RNG.uniform(-1, 1, (2, 3, 3)) + 2 * np.eye(3)
    check_forward('_linalg_inverse', {}, [a], [np.linalg.inv(a)])
    check_grad('_linalg_inverse', {}, [a])
    check_forward('_linalg_det', {}, [a], [np.linalg.det(a)])
    check_grad('_linalg_det', {}, [a])
    sign, logdet = np.linalg.slogdet(a - 2.5 * np.eye(3))
    check_forward('_linalg_slogdet', {}, [a - 2.5 * np.eye(3)], [sign, logdet])
    check_grad('_linalg_slogdet', {}, [a - 2.5 * np.eye(3)])
    assert run_forward(make('_linalg_det'), [a[0]])[0].shape == (1,)
    singular = np.array([[[1., 2], [2, 4]]])
    grads = check_grad('_linalg_det', {}, [singular], wrt=[])
    assert not grads[0].any()
    s = spd(2)
    check_forward('_linalg_sumlogdiag', {}, [s], [np.log(np.diagonal(s, 0, 1, 2)).sum(-1)])
    check_grad('_linalg_sumlogdiag', {}, [s])


@pytest.mark.parametrize('offset,lower', [(0, True), (1, True), (0, False), (-1, False), (2, True)])
def test_diag_and_trian_copies(offset, lower):
    a = RNG.randn(2, 4, 4)
    check_forward('_linalg_extractdiag', {'offset': offset}, [a],
                  [np.diagonal(a, offset, 1, 2)])
    check_grad('_linalg_extractdiag', {'offset': offset}, [a])
    vec = RNG.randn(2, 3)
    made = run_forward(make('_linalg_makediag', offset=offset), [vec])[0]
    np.testing.assert_array_equal(made[1], np.diag(vec[1], offset))
    check_grad('_linalg_makediag', {'offset': offset}, [vec])
    packed = run_forward(make('_linalg_extracttrian', offset=offset, lower=lower), [a])[0]
    upper = offset > 0 or (offset == 0 and not lower)
    src = T(a) if upper else a
    want = src[:, np.tril_indices(4, -abs(offset))[0], np.tril_indices(4, -abs(offset))[1]]
    np.testing.assert_array_equal(packed, want)
    back = run_forward(make('_linalg_maketrian', offset=offset, lower=lower), [packed])[0]
    keep = np.triu(a, offset) if upper else np.tril(a, -abs(offset))
    np.testing.assert_array_equal(back, keep)
    check_grad('_linalg_maketrian', {'offset': offset, 'lower': lower}, [packed])
    check_grad('_linalg_extracttrian', {'offset': offset, 'lower': lower}, [a])


def test_namespaces_shapes_and_errors():
    a = mx.sym.var('a')
    assert mx.sym.linalg.potrf(a).name.startswith('potrf')
    assert mx.sym.linalg.syevd(a).infer_shape(a=(2, 3, 3))[1] == [(2, 3, 3), (2, 3)]
    assert mx.sym.linalg.gelqf(a).infer_shape(a=(3, 5))[1] == [(3, 5), (3, 3)]
    assert mx.sym.linalg.maketrian(a, offset=1).infer_shape(a=(2, 6))[1] == [(2, 4, 4)]
    outs = mx.sym.linalg.slogdet(a).list_outputs()
    assert [o.rsplit('_', 1)[1] for o in outs] == ['output0', 'output1']
    x = mx.nd.array(spd(n=2))
    np.testing.assert_allclose(mx.nd.linalg.potrf(x).asnumpy(), np.linalg.cholesky(x.asnumpy()),
                               rtol=1e-5)
    with pytest.raises(MXNetError):
        mx.sym.linalg.det(a).infer_shape(a=(2, 3, 4))
    with pytest.raises(MXNetError):
        mx.sym.linalg.gelqf(a).infer_shape(a=(5, 3))
    with pytest.raises(MXNetError):
        mx.sym.linalg.maketrian(a).infer_shape(a=(2, 5))
    with pytest.raises(MXNetError, match='float32 and float64'):
        mx.sym.linalg.inverse(a).infer_type(a='float16')
