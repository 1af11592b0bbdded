"""FullyConnected, Activation, LeakyReLU, Dropout, Embedding and the softmax family: numpy
references, float64 gradient checks, attribute parsing and frozen MXNet 1.9.1 results."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.ops.base import OPS, OpContext
from mxmod_tests.ops import nn_oracle
from mxmod_tests.ops.opcheck import check_forward, check_grad, make, run_forward

NN_OPS = ('FullyConnected', 'Activation', 'LeakyReLU', 'Dropout', 'Embedding', 'softmax',
          'log_softmax', 'softmin', 'SoftmaxActivation')
rng = np.random.RandomState(0)


@pytest.mark.parametrize('case', nn_oracle.case_names(NN_OPS))
def test_matches_mxnet(case):
    nn_oracle.run_case(case)


@pytest.mark.parametrize('case', nn_oracle.shape_names(NN_OPS))
def test_shape_inference_matches_mxnet(case):
    nn_oracle.shape_case(case)


# ---- FullyConnected ---------------------------------------------------------------------------
def test_fully_connected_forward_and_grad():
    x, w, b = rng.randn(3, 2, 4), rng.randn(5, 8), rng.randn(5)
    check_forward('FullyConnected', {'num_hidden': '5'}, [x, w, b], [x.reshape(3, 8) @ w.T + b])
    check_grad('FullyConnected', {'num_hidden': 5}, [x, w, b])
    w2 = rng.randn(5, 4)
    check_forward('FullyConnected', {'num_hidden': 5, 'flatten': 'False', 'no_bias': 'True'},
                  [x, w2], [x @ w2.T])
    check_grad('FullyConnected', {'num_hidden': 5, 'flatten': False, 'no_bias': True}, [x, w2])


def test_fully_connected_names_and_partial_shapes():
    op = make('FullyConnected', num_hidden='7', no_bias='True')
    assert op.list_arguments() == ['data', 'weight']
    op = make('FullyConnected', num_hidden=7)
    ins, outs = op.infer_shape([(4, 3, 5), None, None], [None])
    assert ins == [(4, 3, 5), (7, 15), (7,)] and outs == [(4, 7)]
    ins, outs = op.infer_shape([(0, 15), None, None], [(6, 7)])
    assert ins[0] == (6, 15)
    with pytest.raises(MXNetError):
        op.infer_shape([(4, 15), (7, 14), None], [None])


def test_fully_connected_float32_stays_float32():
    x, w, b = [a.astype(np.float32) for a in (rng.randn(2, 3), rng.randn(4, 3), rng.randn(4))]
    out = run_forward(make('FullyConnected', num_hidden=4), [x, w, b])[0]
    assert out.dtype == np.float32


# ---- Activation / LeakyReLU -------------------------------------------------------------------
_ACT_REF = {
    'relu': lambda x: np.maximum(x, 0), 'sigmoid': lambda x: 1 / (1 + np.exp(-x)),
    'tanh': np.tanh, 'softrelu': lambda x: np.log1p(np.exp(x)), 'softsign': lambda x: x / (1 + abs(x)),
}


@pytest.mark.parametrize('act', sorted(_ACT_REF))
def test_activation(act):
    x = rng.randn(3, 4) + 0.05
    check_forward('Activation', {'act_type': act}, [x], [_ACT_REF[act](x)])
    check_grad('Activation', {'act_type': act}, [x])


def test_activation_rejects_unknown_type():
    with pytest.raises(MXNetError, match='act_type'):
        make('Activation', act_type='swish')


@pytest.mark.parametrize('act,ref', [
    ('leaky', lambda x: np.where(x > 0, x, 0.1 * x)),
    ('elu', lambda x: np.where(x > 0, x, 0.1 * np.expm1(x))),
    ('gelu', lambda x: 0.5 * x * (1 + np.vectorize(__import__('math').erf)(x / np.sqrt(2)))),
])
def test_leaky_relu_family(act, ref):
    x = rng.randn(3, 5) + 0.05
    check_forward('LeakyReLU', {'act_type': act, 'slope': '0.1'}, [x], [ref(x)])
    check_grad('LeakyReLU', {'act_type': act, 'slope': '0.1'}, [x])


def test_selu_forward_and_mxnet_gradient():
    lam, alpha = 1.0507009873554805, 1.6732632423543772
    x = np.array([[-2.0, -0.5, 0.3, 1.5]])
    y = check_forward('LeakyReLU', {'act_type': 'selu'}, [x],
                      [lam * np.where(x > 0, x, alpha * np.expm1(x))])[0]
    pos = np.abs(rng.randn(2, 3)) + 0.1
    check_grad('LeakyReLU', {'act_type': 'selu'}, [pos])
    # MXNet 1.9.1's selu gradient for x <= 0 is lambda * (alpha + y), not the exact derivative
    op = make('LeakyReLU', act_type='selu')
    dx = op.backward(OpContext(np, mx.cpu()), [np.ones_like(x)], [x], [y], [])[0]
    np.testing.assert_allclose(dx, np.where(x > 0, lam, lam * (alpha + y)))


def test_prelu_gamma_gradient_and_shape():
    x, gamma = rng.randn(2, 3, 4) + 0.05, rng.rand(3)
    ref = np.where(x > 0, x, x * gamma[None, :, None])
    check_forward('LeakyReLU', {'act_type': 'prelu'}, [x, gamma], [ref])
    check_grad('LeakyReLU', {'act_type': 'prelu'}, [x, gamma])
    check_grad('LeakyReLU', {'act_type': 'prelu'}, [x, np.array([0.3])])
    op = make('LeakyReLU', act_type='prelu')
    assert op.list_arguments() == ['data', 'gamma']
    assert op.infer_shape([(2, 3, 4), None], [None]) == ([(2, 3, 4), (3,)], [(2, 3, 4)])


def test_rrelu_inference_and_training():
    x = rng.randn(4, 50)
    op = make('LeakyReLU', act_type='rrelu', lower_bound='0.1', upper_bound='0.3')
    assert op.list_outputs() == ['output', 'mask']
    out = run_forward(op, [x], is_train=False)[0]
    np.testing.assert_allclose(out, np.where(x > 0, x, 0.2 * x))
    octx = OpContext(np, mx.cpu(), is_train=True)
    out, mask = op.forward(octx, [x], [])
    assert 0.1 <= mask.min() and mask.max() <= 0.3 and mask.std() > 0.01
    np.testing.assert_allclose(out, np.where(x > 0, x, x * mask))
    dy = rng.randn(*x.shape)
    dx = op.backward(octx, [dy, np.zeros_like(dy)], [x], [out, mask], [])[0]
    np.testing.assert_allclose(dx, dy * np.where(x > 0, 1, mask))


# ---- Dropout ----------------------------------------------------------------------------------
def test_dropout_inference_is_identity():
    x = rng.randn(5, 6)
    check_forward('Dropout', {'p': '0.5'}, [x], [x])
    op = make('Dropout')
    assert op.list_outputs() == ['output', 'mask'] and op.num_visible_outputs() == 1
    assert op.infer_shape([(2, 3)], [None, None]) == ([(2, 3)], [(2, 3), (2, 3)])


def test_dropout_training_mask_scale_and_gradient():
    x = rng.rand(200, 100) + 1
    op = make('Dropout', p='0.25')
    octx = OpContext(np, mx.cpu(), is_train=True)
    outs = op.forward(octx, [x], [])
    out = outs[0]
    kept = out != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(out[kept], x[kept] / 0.75)
    dy = rng.randn(*x.shape)
    dx = op.backward(octx, [dy, None], [None], outs, [])[0]
    np.testing.assert_allclose(dx, np.where(kept, dy / 0.75, 0))


def test_dropout_p1_gives_nan_like_mxnet():
    out = run_forward(make('Dropout', p='1.0'), [np.ones((2, 3))], is_train=True)[0]
    assert np.isnan(out).all()


def test_dropout_axes_and_always_mode():
    x = np.ones((4, 30, 5))
    op = make('Dropout', p=0.5, axes='(1,)', mode='always')
    out = run_forward(op, [x], is_train=False)[0]
    assert (out == out[:, :1, :]).all() and set(np.unique(out)) <= {0.0, 2.0}


# ---- Embedding --------------------------------------------------------------------------------
def test_embedding_forward_clip_and_weight_gradient():
    data = np.array([[0, 2, 2], [5, -1, 9]], dtype=np.float32)
    weight = rng.randn(6, 3)
    idx = np.clip(data, 0, 5).astype(int)
    check_forward('Embedding', {'input_dim': '6', 'output_dim': '3'}, [data, weight], [weight[idx]])
    op = make('Embedding', input_dim=6, output_dim=3)
    dy = rng.randn(2, 3, 3)
    octx = OpContext(np, mx.cpu(), is_train=True, need_grad=[False, True])
    grad = op.backward(octx, [dy], [data, weight], [weight[idx]], [])[1]
    want = np.zeros_like(weight)
    for i, row in zip(idx.reshape(-1), dy.reshape(-1, 3)):
        want[i] += row
    np.testing.assert_allclose(grad, want)


def test_embedding_data_gradient_raises_and_inference():
    op = make('Embedding', input_dim=6, output_dim=3)
    octx = OpContext(np, mx.cpu(), is_train=True, need_grad=[True, True])
    data, weight = np.zeros((2,)), np.zeros((6, 3))
    with pytest.raises(MXNetError, match='data gradient'):
        op.backward(octx, [np.zeros((2, 3))], [data, weight], [None], [])
    assert op.infer_shape([(4, 5), None], [None]) == ([(4, 5), (6, 3)], [(4, 5, 3)])
    assert op.infer_type(['float32', None], [None]) == (['float32', 'float32'], ['float32'])
    op16 = make('Embedding', input_dim=6, output_dim=3, dtype='float16')
    assert op16.infer_type(['int32', None], [None]) == (['int32', 'float16'], ['float16'])


# ---- softmax family ---------------------------------------------------------------------------
def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_softmax_log_softmax_softmin():
    x = rng.randn(2, 3, 4)
    check_forward('softmax', {'axis': '1', 'temperature': '2.5'}, [x], [_softmax(x / 2.5, 1)])
    check_forward('log_softmax', {}, [x], [np.log(_softmax(x, -1))])
    check_forward('softmin', {'axis': 0}, [x], [_softmax(-x, 0)])
    for name in ('softmax', 'log_softmax', 'softmin'):
        check_grad(name, {'axis': 1, 'temperature': 0.7}, [x])


def test_softmax_use_length_and_dtype():
    x = rng.randn(3, 5)
    length = np.array([1, 3, 5], dtype=np.float32)
    out = run_forward(make('softmax', use_length='True'), [x, length])[0]
    for i, n in enumerate([1, 3, 5]):
        np.testing.assert_allclose(out[i, :n], _softmax(x[i:i + 1, :n], 1)[0])
        assert (out[i, n:] == 0).all()
    check_grad('softmax', {'use_length': True}, [x, length], wrt=[0])
    op = make('softmax', dtype='float64')
    assert op.infer_type(['float32'], [None]) == (['float32'], ['float64'])
    assert run_forward(op, [x.astype(np.float32)])[0].dtype == np.float64
    assert op.list_arguments() == ['data']


@pytest.mark.parametrize('mode,shape', [('instance', (3, 4)), ('channel', (2, 3, 4))])
def test_softmax_activation(mode, shape):
    x = rng.randn(*shape)
    want = _softmax(x, 1)
    check_forward('SoftmaxActivation', {'mode': mode}, [x], [want])
    check_grad('SoftmaxActivation', {'mode': mode}, [x])


def test_nd_functions_exist():
    x = mx.nd.array(rng.randn(2, 3))
    y = mx.nd.softmax(x)
    np.testing.assert_allclose(y.asnumpy(), _softmax(x.asnumpy(), 1), rtol=1e-5)
    y = mx.nd.FullyConnected(x, mx.nd.ones((4, 3)), mx.nd.zeros((4,)), num_hidden=4)
    assert y.shape == (2, 4)


_REQUIRED = {'kernel': '(2, 2)', 'num_filter': 1, 'num_hidden': 1, 'input_dim': 2, 'output_dim': 2,
             'nsize': 3}
_WIDEST = {'act_type': 'prelu', 'use_length': True, 'no_bias': False}


@pytest.mark.parametrize('op_name', sorted(nn_oracle.META['signatures']))
def test_parameter_names_and_order_match_mxnet(op_name):
    """Parameters in MXNet's positional order; inputs named as MXNet names them."""
    names = nn_oracle.META['signatures'][op_name]
    cls = OPS[op_name]
    assert [n for n in names if n in cls.params] == list(cls.params)
    attrs = {k: v for k, v in dict(_REQUIRED, **_WIDEST).items() if k in cls.params}
    if op_name != 'softmax':
        attrs.pop('use_length', None)
    if op_name == 'Activation':
        attrs['act_type'] = 'relu'
    op = make(op_name, **attrs)
    assert op.list_arguments() + op.list_auxiliary_states() == [n for n in names if n not in cls.params]


def test_use_length_only_for_softmax():
    with pytest.raises(MXNetError, match='use_length'):
        make('log_softmax', use_length='True')
