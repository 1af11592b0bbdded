"""Python custom operators (mx.operator.CustomOp/CustomOpProp/register and the Custom operator):
forward against numpy, gradients against central differences and closed forms, inference, aux
states, string kwargs, loss-style props, and the symbolic path through an executor."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod_tests.ops.opcheck import check_forward, check_grad, make

CREATED = []


class _Softmax(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = np.exp(x - x.max(axis=1, keepdims=True))
        y /= y.sum(axis=1, keepdims=True)
        self.assign(out_data[0], req[0], mx.nd.array(y))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label = in_data[1].asnumpy().ravel().astype(int)
        y = out_data[0].asnumpy().copy()
        y[np.arange(label.shape[0]), label] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(y))


@mx.operator.register('test_softmax')
class _SoftmaxProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ['data', 'label']

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        CREATED.append((ctx, shapes, dtypes))
        return _Softmax()


class _ScaledSquare(mx.operator.CustomOp):
    """y = scale * x^2 + bias; aux 'calls' counts training forwards."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        x, bias = in_data
        self.assign(out_data[0], req[0], self.scale * x * x + bias)
        if is_train:
            aux[0][:] += 1

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        x = in_data[0]
        self.assign(in_grad[0], req[0], 2 * self.scale * x * out_grad[0])
        self.assign(in_grad[1], req[1], out_grad[0].sum(axis=0))


@mx.operator.register('test_scaled_square')
class _ScaledSquareProp(mx.operator.CustomOpProp):
    def __init__(self, scale='1.0'):
        super().__init__(need_top_grad=True)
        assert isinstance(scale, str)       # MXNet hands every attribute over as a string
        self.scale = float(scale)

    def list_arguments(self):
        return ['data', 'bias']

    def list_auxiliary_states(self):
        return ['calls']

    def infer_shape(self, in_shape):
        return [in_shape[0], in_shape[0][1:]], [in_shape[0]], [(1,)]

    def infer_type(self, in_type):
        return [in_type[0], in_type[0]], [in_type[0]], [in_type[0]]

    def create_operator(self, ctx, shapes, dtypes):
        return _ScaledSquare(self.scale)


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_forward_and_loss_backward_on_operator():
    x = np.random.uniform(-2, 2, (4, 5))
    label = np.array([0, 3, 4, 1], dtype='float64')
    op = make('Custom', op_type='test_softmax')
    assert op.is_loss and op.list_arguments() == ['data', 'label']
    check_forward('Custom', {'op_type': 'test_softmax'}, [x, label], [_softmax(x)])
    from mxmod.ops.base import OpContext
    octx = OpContext(np, mx.cpu(), is_train=True, need_grad=[True, False])
    outs = op.forward(octx, [x, label], [])
    grads = op.backward(octx, [None], [x, label], outs, [])
    want = _softmax(x)
    want[np.arange(4), label.astype(int)] -= 1
    np.testing.assert_allclose(grads[0], want, rtol=1e-6)
    assert grads[1] is None
    ctx, shapes, dtypes = CREATED[-1]
    assert ctx == mx.cpu() and shapes == [[4, 5], [4]] and dtypes == [1, 1]


def test_gradient_kwargs_and_aux():
    attrs = {'op_type': 'test_scaled_square', 'scale': 2.5}
    x = np.random.uniform(-1, 1, (3, 4))
    bias = np.random.uniform(-1, 1, (4,))
    calls = np.zeros(1)
    check_forward('Custom', attrs, [x, bias], [2.5 * x * x + bias], aux=[calls])
    check_grad('Custom', attrs, [x, bias], aux=[calls])
    op = make('Custom', **attrs)
    assert op.attrs == {'op_type': 'test_scaled_square', 'scale': '2.5'}
    from mxmod.ops.base import OpContext
    aux = np.zeros(1)
    for _ in range(3):
        op.forward(OpContext(np, mx.cpu(), is_train=True), [x, bias], [aux])
    assert aux[0] == 3                     # aux updated in place through the NDArray wrapper
    assert len(op._operators) == 1         # one CustomOp per (ctx, shapes, dtypes)


def test_inference():
    op = make('Custom', op_type='test_softmax')
    assert op.infer_shape([(4, 5), None], [None]) == ([(4, 5), (4,)], [(4, 5)])
    assert op.infer_shape([None, None], [None]) == ([None, None], [None])
    # like MXNet, the default CustomOpProp.infer_type leaves an unknown input type unknown
    assert op.infer_type(['float64', None], [None]) == (['float64', None], ['float64'])
    sq = make('Custom', op_type='test_scaled_square')
    assert sq.list_auxiliary_states() == ['calls']
    assert sq.infer_shape([(2, 3), None, None], [None]) == ([(2, 3), (3,), (1,)], [(2, 3)])
    with pytest.raises(MXNetError, match='inconsistent for bias: provided .4,., inferred .3,.'):
        sq.infer_shape([(2, 3), (4,), None], [None])


def test_imperative_call():
    x = mx.nd.array([[1.0, 2.0, 3.0]])
    y = mx.nd.Custom(x, mx.nd.array([1.0]), op_type='test_softmax')
    np.testing.assert_allclose(y.asnumpy(), _softmax(np.array([[1.0, 2.0, 3.0]])), rtol=1e-6)
    calls = mx.nd.zeros((1,))
    z = mx.nd.Custom(data=x, bias=mx.nd.ones((3,)), calls=calls, op_type='test_scaled_square',
                     scale=3)
    np.testing.assert_allclose(z.asnumpy(), [[4.0, 13.0, 28.0]])


def test_symbolic_training_step():
    data = mx.sym.var('data')
    fc = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    net = mx.sym.Custom(fc, mx.sym.var('softmax_label'), op_type='test_softmax', name='sm')
    assert net.list_arguments() == ['data', 'fc_weight', 'fc_bias', 'softmax_label']
    arg_shapes, out_shapes, _ = net.infer_shape(data=(4, 2))
    assert arg_shapes[-1] == (4,) and out_shapes == [(4, 3)]
    exe = net.simple_bind(mx.cpu(), data=(4, 2), grad_req={'data': 'null', 'fc_weight': 'write',
                                                           'fc_bias': 'write',
                                                           'softmax_label': 'null'})
    rng = np.random.RandomState(0)
    vals = {'data': rng.randn(4, 2), 'fc_weight': rng.randn(3, 2), 'fc_bias': rng.randn(3),
            'softmax_label': np.array([0, 1, 2, 1])}
    for name, val in vals.items():
        exe.arg_dict[name][:] = val
    exe.forward(is_train=True)
    logits = vals['data'] @ vals['fc_weight'].T + vals['fc_bias']
    prob = _softmax(logits)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), prob, rtol=1e-5)
    exe.backward()
    dlogits = prob.copy()
    dlogits[np.arange(4), vals['softmax_label']] -= 1
    np.testing.assert_allclose(exe.grad_dict['fc_weight'].asnumpy(), dlogits.T @ vals['data'],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(exe.grad_dict['fc_bias'].asnumpy(), dlogits.sum(0), rtol=1e-4,
                               atol=1e-5)


def test_assign_modes():
    op = mx.operator.CustomOp()
    dst = mx.nd.ones((2,))
    op.assign(dst, 'null', mx.nd.array([5.0, 6.0]))
    np.testing.assert_array_equal(dst.asnumpy(), [1, 1])
    op.assign(dst, 'add', mx.nd.array([5.0, 6.0]))
    np.testing.assert_array_equal(dst.asnumpy(), [6, 7])
    op.assign(dst, 'write', mx.nd.array([2.0, 3.0]))
    np.testing.assert_array_equal(dst.asnumpy(), [2, 3])
    with pytest.raises(ValueError):
        op.assign(dst, 'bogus', dst)


def test_defaults_and_errors():
    prop = mx.operator.CustomOpProp()
    assert prop.need_top_grad_ is True
    assert prop.infer_shape([[2, 3]]) == ([[2, 3]], ([2, 3],), ())
    assert prop.declare_backward_dependency([0], [1], [2]) == [0, 1, 2]
    assert mx.operator.CustomOpProp(need_top_grad=False).declare_backward_dependency(
        [0], [1], [2]) == [1, 2]
    assert 'Custom' in mx.operator.get_all_registered_operators()
    with pytest.raises(MXNetError, match='no custom operator registered'):
        make('Custom', op_type='not_registered_anywhere')
    with pytest.raises(MXNetError, match='op_type'):
        make('Custom')
    with pytest.raises(TypeError):
        mx.operator.register('bad')(object)


class _Ones(mx.operator.CustomOp):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], np.ones(self.shape, dtype=np.float32))


@mx.operator.register('test_no_input')
class _OnesProp(mx.operator.CustomOpProp):
    def __init__(self, length, depth):
        super().__init__()
        self.shape = (int(length), int(depth))

    def list_arguments(self):
        return []

    def infer_shape(self, in_shape):
        return [], [self.shape], []

    def infer_type(self, in_type):
        return [], [np.float32], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Ones(self.shape)


def test_no_input_op_with_kwargs():
    out = mx.nd.Custom(length=4, depth=3, op_type='test_no_input')
    np.testing.assert_array_equal(out.asnumpy(), np.ones((4, 3)))
    sym = mx.sym.Custom(length=3, depth=2, op_type='test_no_input', name='ones')
    assert sym.list_arguments() == []
    assert sym.infer_shape() == ([], [(3, 2)], [])
    assert sym.infer_type() == ([], [np.float32], [])
    assert sym.list_attr()['length'] == '3'
    exe = sym.simple_bind(mx.cpu())
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), np.ones((3, 2)))
