"""Loss layers and loss-shaped ops against frozen MXNet 1.9.1 outputs (fixtures/loss_oracle.npz),
numpy formulas of MXNet's gradients, finite differences of the implied losses, and MXNet's shape
inference. ``replay_oracle`` is shared with test_reduce.py and test_matrix.py."""
import json
import os

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.ops.base import OPS, OpContext, attr_str
from mxmod_tests.ops.opcheck import check_grad, make, run_forward

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures')


def load_cases(name):
    """(npz, manifest) of one frozen oracle file."""
    data = np.load(os.path.join(FIXTURES, name))
    return data, json.loads(str(data['__cases__']))


def replay_oracle(data, case, as_strings=False, rtol=1e-7, atol=1e-9):
    """Run one recorded case through mxmod: forward outputs and the recorded gradients must match
    MXNet. With ``as_strings`` the attributes go through their JSON string form first."""
    key = case['key']
    attrs = dict(case['attrs'])
    if 'num_args' in OPS[case['op']].params:     # set by MXNet's front end from the inputs
        attrs.setdefault('num_args', case['n_in'])
    if as_strings:
        attrs = {k: attr_str(v) if v is not None else 'None' for k, v in attrs.items()}
    op = make(case['op'], **attrs)
    inputs = [data['%s__in%d' % (key, i)] for i in range(case['n_in'])]
    outs = run_forward(op, inputs, is_train=True)
    assert op.num_visible_outputs() == case['n_out']
    for i in range(case['n_out']):
        want = data['%s__out%d' % (key, i)]
        assert outs[i].dtype == want.dtype, (key, i, outs[i].dtype, want.dtype)
        np.testing.assert_allclose(outs[i], want, rtol=rtol, atol=atol, err_msg=key)
    if not case['grads']:
        return
    octx = OpContext(np, mx.cpu(), is_train=True, need_grad=[i in case['grads']
                                                             for i in range(len(inputs))])
    outs = op.forward(octx, inputs, [])
    heads = [data['%s__head%d' % (key, i)] if i < case['n_out'] else np.zeros_like(o)
             for i, o in enumerate(outs)]
    grads = op.backward(octx, [None] * len(outs) if op.is_loss else heads, inputs, outs, [])
    for i in case['grads']:
        np.testing.assert_allclose(grads[i], data['%s__grad%d' % (key, i)], rtol=rtol, atol=atol,
                                   err_msg='%s: gradient %d' % (key, i))


LOSS_DATA, LOSS_CASES = load_cases('loss_oracle.npz')


@pytest.mark.parametrize('case', LOSS_CASES, ids=[c['key'] for c in LOSS_CASES])
def test_matches_oracle(case):
    replay_oracle(LOSS_DATA, case)


@pytest.mark.parametrize('case', LOSS_CASES[::3], ids=[c['key'] for c in LOSS_CASES[::3]])
def test_matches_oracle_with_string_attrs(case):
    replay_oracle(LOSS_DATA, case, as_strings=True)


# ---- numpy formulas ---------------------------------------------------------------------------
def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _backward(op_name, inputs, **attrs):
    op = make(op_name, **attrs)
    octx = OpContext(np, mx.cpu(), is_train=True, need_grad=[True] * len(inputs))
    outs = op.forward(octx, inputs, [])
    return outs, op.backward(octx, [None], inputs, outs, [])


def test_softmax_output_gradient_is_cross_entropy_derivative():
    rng = np.random.RandomState(0)
    x, label = rng.randn(5, 4), np.array([0, 3, 1, 1, 2.])

    def loss(z):
        return -np.log(_softmax(z)[np.arange(5), label.astype(int)]).sum()
    _, grads = _backward('SoftmaxOutput', [x, label])
    num = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[idx] = 1e-6
        num[idx] = (loss(x + step) - loss(x - step)) / 2e-6
    np.testing.assert_allclose(grads[0], num, rtol=1e-5, atol=1e-8)
    np.testing.assert_array_equal(grads[1], 0)


@pytest.mark.parametrize('rows', [6, 1200])     # the small (one-hot) and large paths
def test_softmax_output_labels_outside_the_classes_subtract_nothing(rows):
    """As MXNet 1.9.1 (checked with it): a label is truncated to an integer, and one outside
    [0, K) subtracts nothing from its row; float32 throughout."""
    rng = np.random.RandomState(0)
    x = rng.randn(rows, 3).astype(np.float32)
    label = np.resize(np.array([0, 1, 5, -1, 2.7, 3], np.float32), rows)
    outs, grads = _backward('SoftmaxOutput', [x, label])
    prob = outs[0]
    want = prob.copy()
    for row, lab in enumerate(label.astype(np.int64)):
        if 0 <= lab < 3:
            want[row, lab] -= np.float32(1)
    assert grads[0].dtype == np.float32
    np.testing.assert_array_equal(grads[0], want)


def test_softmax_output_normalizations_numpy():
    rng = np.random.RandomState(1)
    x, label = rng.randn(6, 3), np.array([0, 2, 2, 1, 2, 0.])
    base = _softmax(x) - np.eye(3)[label.astype(int)]
    keep = (label != 2)[:, None]
    cases = [({}, base), ({'normalization': 'batch', 'grad_scale': 3}, base * 3 / 6),
             ({'use_ignore': True, 'ignore_label': 2}, base * keep),
             ({'use_ignore': True, 'ignore_label': 2, 'normalization': 'valid'}, base * keep / 3)]
    for attrs, want in cases:
        outs, grads = _backward('SoftmaxOutput', [x, label], **attrs)
        np.testing.assert_allclose(outs[0], _softmax(x), rtol=1e-12)
        np.testing.assert_allclose(grads[0], want, rtol=1e-12, atol=1e-15, err_msg=str(attrs))


def test_softmax_output_multi_output_numpy():
    rng = np.random.RandomState(2)
    x, label = rng.randn(2, 3, 4), rng.randint(0, 3, (2, 4)).astype(float)
    prob = _softmax(x, axis=1)
    onehot = np.eye(3)[label.astype(int)].transpose(0, 2, 1)
    for norm, scale in (('null', 1 / 4), ('batch', 1 / 8), ('valid', 1 / 8)):
        outs, grads = _backward('SoftmaxOutput', [x, label], multi_output=True, normalization=norm)
        np.testing.assert_allclose(outs[0], prob, rtol=1e-12)
        np.testing.assert_allclose(grads[0], (prob - onehot) * scale, rtol=1e-12, err_msg=norm)


def test_softmax_output_smoothing_and_probability_labels():
    rng = np.random.RandomState(3)
    x, label = rng.randn(3, 5), np.array([4, 0, 2.])
    target = np.full((3, 5), 0.2 / 4)
    target[np.arange(3), label.astype(int)] = 0.8
    _, grads = _backward('SoftmaxOutput', [x, label], smooth_alpha=0.2)
    np.testing.assert_allclose(grads[0], _softmax(x) - target, rtol=1e-12)
    probs = rng.dirichlet(np.ones(5), 3)
    _, grads = _backward('SoftmaxOutput', [x, probs], grad_scale=0.5, normalization='batch')
    np.testing.assert_allclose(grads[0], (_softmax(x) - probs) * 0.5, rtol=1e-12)


@pytest.mark.parametrize('op_name,fwd,loss', [
    ('LinearRegressionOutput', lambda z: z, lambda z, y: 0.5 * ((z - y) ** 2).sum()),
    ('LogisticRegressionOutput', lambda z: 1 / (1 + np.exp(-z)),
     lambda z, y: -(y * np.log(1 / (1 + np.exp(-z))) + (1 - y) * np.log(1 / (1 + np.exp(z)))).sum()),
])
def test_regression_gradient_is_loss_derivative_over_outputs_per_sample(op_name, fwd, loss):
    rng = np.random.RandomState(4)
    x, y = rng.randn(3, 4), rng.uniform(0, 1, (3, 4))
    outs, grads = _backward(op_name, [x, y], grad_scale=2.0)
    np.testing.assert_allclose(outs[0], fwd(x), rtol=1e-12)
    num = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[idx] = 1e-6
        num[idx] = (loss(x + step, y) - loss(x - step, y)) / 2e-6
    np.testing.assert_allclose(grads[0], num * 2.0 / 4, rtol=1e-5, atol=1e-9)


def test_mae_sign_with_zero_difference_negative():
    x = np.array([[1., 2.], [3., 0.]])
    _, grads = _backward('MAERegressionOutput', [x, np.array([[0., 2.], [5., 0.]])])
    np.testing.assert_array_equal(grads[0], [[0.5, -0.5], [-0.5, -0.5]])


def test_svm_output_numpy():
    rng = np.random.RandomState(5)
    x, label = rng.randn(4, 3), np.array([0, 2, 1, 1.])
    hit = np.eye(3, dtype=bool)[label.astype(int)]
    _, grads = _backward('SVMOutput', [x, label], margin=0.7, regularization_coefficient=1.5)
    want = np.where(hit, np.where(0.7 > x, -2 * (0.7 - x), 0), np.where(0.7 > -x, 2 * (0.7 + x), 0))
    np.testing.assert_allclose(grads[0], want * 1.5, rtol=1e-12)
    _, grads = _backward('SVMOutput', [x, label], use_linear=True)
    np.testing.assert_allclose(grads[0], np.where(hit, -(1 > x).astype(float), (1 > -x).astype(float)))


def test_make_loss_normalizations():
    x = np.array([[0.5, -1, 2], [0.1, 0.3, -0.2]])
    for attrs, want in (({}, 1.0), ({'grad_scale': 4, 'normalization': 'batch'}, 2.0),
                        ({'normalization': 'valid', 'valid_thresh': 0.2}, 1 / 3),
                        ({'normalization': 'valid', 'valid_thresh': 9}, 1.0)):
        outs, grads = _backward('MakeLoss', [x], **attrs)
        np.testing.assert_array_equal(outs[0], x)
        np.testing.assert_allclose(grads[0], np.full(x.shape, want), err_msg=str(attrs))
    outs, grads = _backward('make_loss', [x])
    np.testing.assert_array_equal(grads[0], np.ones_like(x))


def test_smooth_l1_and_cross_entropy_gradients():
    x = np.array([[-2.0, -0.3, 0.1], [0.35, 0.5, 3.0]])
    sigma2 = 1.5 ** 2
    want = np.where(np.abs(x) > 1 / sigma2, np.abs(x) - 0.5 / sigma2, 0.5 * x * x * sigma2)
    np.testing.assert_allclose(run_forward(make('smooth_l1', scalar=1.5), [x])[0], want)
    check_grad('smooth_l1', {'scalar': 1.5}, [x])
    rng = np.random.RandomState(6)
    data, label = rng.randn(4, 3), np.array([0, 2, 1, 2.])
    out = run_forward(make('softmax_cross_entropy'), [data, label])[0]
    want = -np.log(_softmax(data)[np.arange(4), label.astype(int)]).sum()
    np.testing.assert_allclose(out, [want], rtol=1e-12)
    grads = check_grad('softmax_cross_entropy', {}, [data, label], wrt=[0])
    assert grads[1] is None


def test_float32_dtype_is_kept():
    rng = np.random.RandomState(7)
    x, label = rng.randn(3, 4).astype(np.float32), np.array([0, 1, 3], np.float32)
    for name in ('SoftmaxOutput', 'SVMOutput'):
        outs, grads = _backward(name, [x, label])
        assert outs[0].dtype == grads[0].dtype == np.float32
    outs, grads = _backward('LogisticRegressionOutput', [x, x])
    assert outs[0].dtype == grads[0].dtype == np.float32


# ---- shape / type inference, names, attributes ------------------------------------------------
def _infer(op_name, in_shapes, out_shapes=None, **attrs):
    op = make(op_name, **attrs)
    return op.infer_shape(list(in_shapes), list(out_shapes or [None] * len(op.list_outputs())))


@pytest.mark.parametrize('op_name,attrs,ins,want_ins,want_out', [
    # expectations recorded from MXNet 1.9.1's infer_shape / infer_shape_partial
    ('SoftmaxOutput', {}, [(4, 5), None], [(4, 5), (4,)], (4, 5)),
    ('SoftmaxOutput', {}, [(4, 5, 6), None], [(4, 5, 6), (4, 5)], (4, 5, 6)),
    ('SoftmaxOutput', {'multi_output': True}, [(4, 5, 6, 7), None], [(4, 5, 6, 7), (4, 42)],
     (4, 5, 6, 7)),
    ('SoftmaxOutput', {'multi_output': True}, [(4, 5, 6, 7), (4, 6, 7)], [(4, 5, 6, 7), (4, 6, 7)],
     (4, 5, 6, 7)),
    ('SoftmaxOutput', {'multi_output': True}, [(4, 5, 6, 7), (4, 1, 6, 7)],
     [(4, 5, 6, 7), (4, 1, 6, 7)], (4, 5, 6, 7)),
    ('SoftmaxOutput', {}, [(4, 0), None], [(4, 0), (4,)], (4, 0)),
    ('SoftmaxOutput', {}, [(4, 3), (4, 3)], [(4, 3), (4, 3)], (4, 3)),
    ('LinearRegressionOutput', {}, [(4, 1), None], [(4, 1), (4,)], (4, 1)),
    ('LinearRegressionOutput', {}, [(4, 3), None], [(4, 3), (4, 3)], (4, 3)),
    ('MAERegressionOutput', {}, [(4, 3, 2), (4, 6)], [(4, 3, 2), (4, 6)], (4, 3, 2)),
    ('LogisticRegressionOutput', {}, [(4, 1), (4, 1)], [(4, 1), (4, 1)], (4, 1)),
    ('SVMOutput', {}, [(4, 3), None], [(4, 3), (4,)], (4, 3)),
    ('MakeLoss', {}, [(2, 3)], [(2, 3)], (2, 3)),
    ('make_loss', {}, [(2, 3)], [(2, 3)], (2, 3)),
    ('smooth_l1', {}, [(2, 3)], [(2, 3)], (2, 3)),
    ('softmax_cross_entropy', {}, [(4, 3), (4,)], [(4, 3), (4,)], (1,)),
])
def test_infer_shape(op_name, attrs, ins, want_ins, want_out):
    got_ins, got_outs = _infer(op_name, ins, **attrs)
    assert [tuple(s) for s in got_ins] == want_ins
    assert tuple(got_outs[0]) == want_out


def test_infer_shape_partial_and_backward():
    # as MXNet 1.9.1 (test_partial_shapes.py checks many more against its record): the label
    # follows from data, data learns nothing from the label or the output
    ins, outs = _infer('SoftmaxOutput', [None, (4,)])
    assert ins[0] is None and outs[0] is None
    ins, outs = _infer('SoftmaxOutput', [(0, 5), (4,)])
    assert ins == [(0, 5), (4,)]
    ins, outs = _infer('SoftmaxOutput', [None, None], [(3, 2)])
    assert ins == [None, None]
    with pytest.raises(MXNetError):     # MXNet needs both shapes of softmax_cross_entropy
        _infer('softmax_cross_entropy', [(4, 3), None])


@pytest.mark.parametrize('op_name,ins,attrs', [
    ('SoftmaxOutput', [(4, 5), (5,)], {}),
    ('SoftmaxOutput', [(4, 5, 6), (4, 5)], {'multi_output': True}),
    ('LinearRegressionOutput', [(4, 3), (3, 4)], {}),
    ('LinearRegressionOutput', [(4, 3), (4, 2)], {}),
    ('softmax_cross_entropy', [(4, 3, 1), (4,)], {}),
])
def test_infer_shape_errors(op_name, ins, attrs):
    with pytest.raises(MXNetError):
        _infer(op_name, ins, **attrs)


def test_names_types_and_attributes():
    assert make('Softmax').op_name == 'SoftmaxOutput'
    for name in ('SoftmaxOutput', 'LinearRegressionOutput', 'SVMOutput', 'softmax_cross_entropy'):
        assert make(name).list_arguments() == ['data', 'label']
        assert make(name).list_outputs() == ['output']
    assert make('make_loss').list_outputs() == ['loss']
    assert make('MakeLoss').is_loss and make('make_loss').is_loss and make('SoftmaxOutput').is_loss
    assert not make('smooth_l1').is_loss and not make('softmax_cross_entropy').is_loss
    assert make('SoftmaxOutput').infer_type(['float16', None], [None]) == (
        ['float16', 'float16'], ['float16'])
    op = make('SoftmaxOutput', grad_scale='2.5', ignore_label='3', use_ignore='True',
              multi_output='false', normalization='valid', smooth_alpha='0.1', out_grad='0')
    assert (op.p.grad_scale, op.p.ignore_label, op.p.use_ignore, op.p.multi_output) == (
        2.5, 3.0, True, False)
    assert (op.p.normalization, op.p.smooth_alpha, op.p.out_grad) == ('valid', 0.1, False)
    assert make('MakeLoss', valid_thresh='0.5', normalization='batch').p.valid_thresh == 0.5
    assert make('smooth_l1', scalar='2').p.scalar == 2.0
    for bad in ({'normalization': 'mean'}, {'use_ignore': 'maybe'}, {'smooth_alpha': 1.5},
                {'bogus': 1}):
        with pytest.raises(MXNetError):
            make('SoftmaxOutput', **bad)


def test_symbol_level_names_and_inference():
    sym = mx.sym.SoftmaxOutput(mx.sym.var('data'), name='sm')
    assert sym.list_arguments() == ['data', 'sm_label'] and sym.list_outputs() == ['sm_output']
    assert sym.infer_shape(data=(4, 5))[0] == [(4, 5), (4,)]
    reg = mx.sym.LinearRegressionOutput(mx.sym.var('data'), name='lr')
    assert reg.infer_shape(data=(8, 1))[0] == [(8, 1), (8,)]
    assert mx.sym.make_loss(mx.sym.var('data'), name='ml').list_outputs() == ['ml_loss']


def test_imperative_call():
    x = mx.nd.array([[1., 2., 3.], [1., 1., 1.]])
    out = mx.nd.SoftmaxOutput(x, mx.nd.array([2, 0]))
    np.testing.assert_allclose(out.asnumpy(), _softmax(x.asnumpy()), rtol=1e-6)
