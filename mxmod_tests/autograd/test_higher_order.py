"""autograd.grad(create_graph=True): gradients computed by recorded operators, differentiated
again. Second derivatives are checked against float64 central differences of the (ordinary)
first-order gradient, third derivatives against closed forms; MXNet's unit-test case; zero but
recorded constant derivatives; and the refusal for a backward that is not differentiable."""
import numpy as np
import pytest

import mxmod as mx
from mxmod import autograd, nd

RNG = np.random.RandomState(11)


def _first_grads(fn, values, heads):
    """Ordinary gradients of sum(head * fn(*arrays)) with respect to every array (float64)."""
    arrays = [nd.array(v, dtype='float64') for v in values]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        out = fn(*arrays)
    out.backward(nd.array(heads, dtype='float64'))
    return [a.grad.asnumpy() for a in arrays]


def _second_order(fn, values, heads, probe, wrt, of):
    """d/d values[of] of <probe, d/d values[wrt] sum(heads * fn)>, via create_graph."""
    arrays = [nd.array(v, dtype='float64') for v in values]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        out = fn(*arrays)
        first = autograd.grad(out, [arrays[wrt]], head_grads=nd.array(heads, dtype='float64'),
                              create_graph=True, retain_graph=True)[0]
    np.testing.assert_allclose(first.asnumpy(), _first_grads(fn, values, heads)[wrt],
                               rtol=1e-7, atol=1e-9)
    first.backward(nd.array(probe, dtype='float64'))
    return arrays[of].grad.asnumpy()


def _second_order_fd(fn, values, heads, probe, wrt, of, eps=1e-6):
    """The same by central differences of the first-order gradient."""
    out = np.zeros_like(values[of])
    for i in range(values[of].size):
        shifted = []
        for sign in (1, -1):
            vals = [v.copy() for v in values]
            vals[of].reshape(-1)[i] += sign * eps
            shifted.append((_first_grads(fn, vals, heads)[wrt] * probe).sum())
        out.reshape(-1)[i] = (shifted[0] - shifted[1]) / (2 * eps)
    return out


def check_hessian(fn, values, wrt=0, of=0, rtol=1e-5, atol=1e-7):
    values = [np.asarray(v, dtype=np.float64) for v in values]
    probe_shape = values[wrt].shape
    with autograd.pause():
        out_shape = fn(*[nd.array(v, dtype='float64') for v in values]).shape
    heads = RNG.normal(size=out_shape)
    probe = RNG.normal(size=probe_shape)
    got = _second_order(fn, values, heads, probe, wrt, of)
    want = _second_order_fd(fn, values, heads, probe, wrt, of)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


UNARY = ['exp', 'expm1', 'log', 'log1p', 'log2', 'log10', 'sqrt', 'rsqrt', 'cbrt', 'rcbrt',
         'square', 'reciprocal', 'sin', 'cos', 'tan', 'arcsin', 'arccos', 'arctan', 'sinh', 'cosh',
         'tanh', 'arcsinh', 'arctanh', 'sigmoid', 'softsign', 'abs', 'relu', 'negative', 'erf']


@pytest.mark.parametrize('name', UNARY)
def test_unary_second_derivatives(name):
    x = RNG.uniform(0.2, 0.8, (2, 3)) * RNG.choice([-1, 1], (2, 3))
    if name in ('log', 'log1p', 'log2', 'log10', 'sqrt', 'rsqrt', 'cbrt', 'rcbrt'):
        x = np.abs(x)
    check_hessian(lambda a: getattr(nd, name)(a), [x])


def test_arccosh_and_activations():
    check_hessian(nd.arccosh, [RNG.uniform(1.5, 3, (4,))])
    for act in ('relu', 'sigmoid', 'tanh', 'softrelu', 'softsign'):
        check_hessian(lambda a, act=act: nd.Activation(a * a, act_type=act),
                      [RNG.uniform(-1, 1, (3, 2))])


def test_quadratic_and_leaky_relu():
    x = RNG.uniform(-1, 1, (3, 4))
    check_hessian(lambda a: nd.contrib.quadratic(nd.sin(a), a=0.7, b=-0.2, c=1.0), [x])
    for act in ('leaky', 'elu'):
        check_hessian(lambda a, act=act: nd.LeakyReLU(a * a * a, act_type=act, slope=0.3), [x])
    gamma = RNG.uniform(0.1, 0.5, (4,))
    fn = lambda a, g: nd.LeakyReLU(a, g, act_type='prelu') ** 2  # noqa: E731
    for wrt, of in ((0, 0), (0, 1), (1, 0), (1, 1)):
        check_hessian(fn, [x.reshape(3, 4), gamma], wrt=wrt, of=of)


@pytest.mark.parametrize('expr', [
    lambda a, b: a * b, lambda a, b: a / b, lambda a, b: a - b * b, lambda a, b: a ** b,
    lambda a, b: nd.maximum(a * a, b), lambda a, b: nd.elemwise_mul(a, nd.exp(a)) + b,
    lambda a, b: a * 2.5 * b - 1 / a + 3 ** a + a ** 3 + (2 - a) / 4 + b ** 0.5 + 2 ** b])
def test_binary_and_scalar_second_derivatives(expr):
    a = RNG.uniform(0.5, 1.5, (2, 3))
    b = RNG.uniform(0.5, 1.5, (2, 3))
    for wrt in (0, 1):
        for of in (0, 1):
            check_hessian(expr, [a, b], wrt=wrt, of=of)


def test_broadcasting_second_derivatives():
    a = RNG.uniform(0.5, 1.5, (2, 3))
    b = RNG.uniform(0.5, 1.5, (1, 3))
    check_hessian(lambda x, y: nd.broadcast_mul(x, y) / (x + y), [a, b], wrt=1, of=0)
    check_hessian(lambda x, y: nd.broadcast_mul(x, y) / (x + y), [a, b], wrt=1, of=1)
    check_hessian(lambda x, y: nd.broadcast_to(y * y, shape=(2, 3)) * x, [a, b], wrt=1, of=0)


def test_reductions_and_shapes():
    x = RNG.uniform(-1, 1, (2, 3, 4))
    check_hessian(lambda a: nd.sum(a * a, axis=1) * nd.mean(nd.exp(a), axis=(0, 1),
                                                            keepdims=True).reshape((1, 4)), [x])
    check_hessian(lambda a: nd.prod(a + 2, axis=2), [x])
    check_hessian(lambda a: nd.transpose(a, axes=(2, 0, 1)).reshape((4, 6)) ** 2, [x])
    check_hessian(lambda a: nd.expand_dims(nd.sin(a), axis=1).flatten() * a.reshape((2, 12)),
                  [x])
    check_hessian(lambda a: nd.concat(a * a, nd.exp(a), dim=1)[:, 1:5:2] ** 2, [x])
    check_hessian(lambda a: nd.swapaxes(a, 0, 2)[1] * a[:, 0:3, 1].T, [x])
    check_hessian(lambda a: a[[1, 0, 1]] ** 3, [x])
    check_hessian(lambda a: nd.Cast(nd.add_n(a, a * a, nd.sin(a)), dtype='float64') ** 2, [x])


def test_softmax_family():
    x = RNG.uniform(-1, 1, (3, 4))
    check_hessian(lambda a: nd.softmax(a, axis=0), [x])
    check_hessian(lambda a: nd.log_softmax(a * 2), [x])
    check_hessian(lambda a: nd.softmax(a, temperature=2.0), [x])


@pytest.mark.parametrize('ta', [False, True])
@pytest.mark.parametrize('tb', [False, True])
def test_dot_mixed_second_derivatives(ta, tb):
    a = RNG.uniform(-1, 1, (4, 3) if ta else (3, 4))
    b = RNG.uniform(-1, 1, (5, 4) if tb else (4, 5))
    fn = lambda x, y: nd.tanh(nd.dot(x, y, transpose_a=ta, transpose_b=tb))  # noqa: E731
    for wrt, of in ((0, 0), (0, 1), (1, 0), (1, 1)):
        check_hessian(fn, [a, b], wrt=wrt, of=of)
    la = RNG.uniform(-1, 1, (2, 4, 3) if ta else (2, 3, 4))
    lb = RNG.uniform(-1, 1, (2, 5, 4) if tb else (2, 4, 5))
    fn = lambda x, y: nd.sin(nd.batch_dot(x, y, transpose_a=ta, transpose_b=tb))  # noqa: E731
    for wrt, of in ((0, 1), (1, 1)):
        check_hessian(fn, [la, lb], wrt=wrt, of=of)


@pytest.mark.parametrize('flatten', [True, False])
def test_fully_connected_second_derivatives(flatten):
    x = RNG.uniform(-1, 1, (2, 3, 4))
    w = RNG.uniform(-1, 1, (5, 12 if flatten else 4))
    b = RNG.uniform(-1, 1, (5,))
    fn = lambda x, w, b: nd.sigmoid(nd.FullyConnected(x, w, b, num_hidden=5,  # noqa: E731
                                                      flatten=flatten))
    for wrt, of in ((0, 1), (1, 0), (1, 1), (2, 2), (0, 2)):
        check_hessian(fn, [x, w, b], wrt=wrt, of=of)


def test_mxnet_unit_test_case_and_third_order():
    x = nd.ones((1,))
    x.attach_grad()
    with autograd.record():
        z = nd.elemwise_add(nd.exp(x), x)
    dx, = autograd.grad(z, [x], create_graph=True)
    assert abs(dx.asscalar() - 3.71828175) < 1e-7       # float32 exp rounded as MXNet does
    dx.backward()
    assert abs(x.grad.asscalar() - 2.71828175) < 1e-7
    # third derivative of sin is -cos, each order with its own head gradient
    values = RNG.uniform(-2, 2, (5,))
    x = nd.array(values, dtype='float64')
    x.attach_grad()
    heads = [RNG.normal(size=5) for _ in range(3)]
    with autograd.record():
        y = nd.sin(x)
        for head in heads:
            y = autograd.grad(y, x, head_grads=nd.array(head, dtype='float64'),
                              create_graph=True, retain_graph=True)[0]
    np.testing.assert_allclose(y.asnumpy(), -np.cos(values) * heads[0] * heads[1] * heads[2],
                               rtol=1e-10)


def test_constant_derivatives_stay_in_the_graph():
    x = nd.array([0.5, -1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        first = autograd.grad(nd.radians(x), x, create_graph=True, retain_graph=True)[0]
    np.testing.assert_allclose(first.asnumpy(), np.full(3, np.pi / 180), rtol=1e-6)
    first.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros(3))
    with autograd.record():
        y = nd.Dropout(x * x, p=0.5)
        first = autograd.grad(y, x, create_graph=True, retain_graph=True)[0]
    first.backward()
    mask = (y.asnumpy() != 0) * 2.0
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * mask, rtol=1e-6)


def test_indexing_and_copies_any_order():
    values = RNG.uniform(-1, 1, (3, 4))
    x = nd.array(values, dtype='float64')
    x.attach_grad()
    with autograd.record():
        y = (x[1:3, ::2] ** 3).copyto(mx.cpu(1))
        g1 = autograd.grad(y, x, create_graph=True, retain_graph=True)[0]
        g2 = autograd.grad(g1, x, create_graph=True, retain_graph=True)[0]
    g2.backward()
    mask = np.zeros((3, 4))
    mask[1:3, ::2] = 1
    np.testing.assert_allclose(g1.asnumpy(), 3 * values ** 2 * mask, rtol=1e-12)
    np.testing.assert_allclose(g2.asnumpy(), 6 * values * mask, rtol=1e-12)
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * mask, rtol=1e-12)


def test_non_differentiable_backward_refuses_when_differentiated():
    x = nd.array(RNG.uniform(-1, 1, (1, 1, 4, 4)))
    x.attach_grad()
    with autograd.record():
        y = nd.Pooling(x * x, kernel=(2, 2), pool_type='max')
        first = autograd.grad(y, x, create_graph=True, retain_graph=True)[0]
    # the first-order value is right (the usual backward ran) ...
    plain = nd.array(x.asnumpy())
    plain.attach_grad()
    with autograd.record():
        ref = nd.Pooling(plain * plain, kernel=(2, 2), pool_type='max')
    ref.backward()
    np.testing.assert_allclose(first.asnumpy(), plain.grad.asnumpy(), rtol=1e-6)
    # ... but differentiating it again is MXNet's error for a backward without FGradient
    with pytest.raises(mx.MXNetError, match='_backward_Pooling is non-differentiable'):
        first.backward()


def test_grad_without_create_graph_is_unrecorded():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x * x
        g = autograd.grad(y, x, retain_graph=True)[0]
    with pytest.raises(mx.MXNetError, match='not in a computational graph'):
        g.backward()
