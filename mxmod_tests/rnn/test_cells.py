"""Unrolled cells computed by the executor against numpy references (RNN, LSTM, GRU, stacks,
bidirectional, residual, zoneout at inference), layouts, begin states and gradients."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.test_utils import check_numeric_gradient

from . import reference as ref

GATES = {'rnn_tanh': 1, 'rnn_relu': 1, 'lstm': 4, 'gru': 3}


def make_cell(mode, hidden, prefix):
    if mode in ('rnn_tanh', 'rnn_relu'):
        return mx.rnn.RNNCell(hidden, activation=mode[4:], prefix=prefix)
    if mode == 'lstm':
        return mx.rnn.LSTMCell(hidden, prefix=prefix)
    return mx.rnn.GRUCell(hidden, prefix=prefix)


def random_params(rs, mode, num_input, hidden, prefix=''):
    width = GATES[mode] * hidden
    return {prefix + 'i2h_weight': rs.uniform(-0.7, 0.7, (width, num_input)),
            prefix + 'i2h_bias': rs.uniform(-0.5, 0.5, (width,)),
            prefix + 'h2h_weight': rs.uniform(-0.7, 0.7, (width, hidden)),
            prefix + 'h2h_bias': rs.uniform(-0.5, 0.5, (width,))}


def strip(params, prefix):
    return {k[len(prefix):]: v for k, v in params.items() if k.startswith(prefix)}


def run(sym, arrays):
    """Forward (inference) with the given numpy arrays; returns numpy outputs."""
    args = {k: mx.nd.array(v) for k, v in arrays.items()}
    return [o.asnumpy() for o in sym.eval(mx.cpu(), **args)]


@pytest.mark.parametrize('mode', ['rnn_tanh', 'rnn_relu', 'lstm', 'gru'])
@pytest.mark.parametrize('layout', ['NTC', 'TNC'])
def test_unroll_matches_numpy(mode, layout):
    rs = np.random.RandomState(0)
    batch, steps, num_input, hidden = 3, 4, 5, 6
    cell = make_cell(mode, hidden, 'c_')
    outputs, states = cell.unroll(steps, mx.sym.Variable('data'), layout=layout,
                                  merge_outputs=True)
    sym = mx.sym.Group([outputs] + states)
    params = random_params(rs, mode, num_input, hidden, 'c_')
    x = rs.normal(0, 1, (batch, steps, num_input))
    data = x if layout == 'NTC' else x.transpose(1, 0, 2)
    got = run(sym, dict(params, data=data))
    want_out, want_states = ref.unroll(mode, [x[:, t] for t in range(steps)], strip(params, 'c_'))
    want = np.stack(want_out, axis=1 if layout == 'NTC' else 0)
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)
    assert len(got) == 1 + len(want_states)
    for g, w in zip(got[1:], want_states):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_list_inputs_and_given_begin_state():
    rs = np.random.RandomState(1)
    cell = mx.rnn.LSTMCell(4, prefix='v_')
    begin = cell.begin_state(func=mx.sym.Variable)
    assert [s.name for s in begin] == ['v_begin_state_0', 'v_begin_state_1']
    steps = [mx.sym.Variable('x%d' % i) for i in range(3)]
    outputs, states = cell.unroll(3, steps, begin_state=begin)
    assert isinstance(outputs, list) and len(outputs) == 3
    params = random_params(rs, 'lstm', 2, 4, 'v_')
    xs = [rs.normal(0, 1, (2, 2)) for _ in range(3)]
    h0, c0 = rs.normal(0, 1, (2, 4)), rs.normal(0, 1, (2, 4))
    arrays = dict(params, v_begin_state_0=h0, v_begin_state_1=c0,
                  **{'x%d' % i: x for i, x in enumerate(xs)})
    got = run(mx.sym.Group(outputs + states), arrays)
    want_out, want_states = ref.unroll('lstm', xs, strip(params, 'v_'), [h0, c0])
    for g, w in zip(got, want_out + want_states):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_sequential_stack_matches_numpy():
    rs = np.random.RandomState(2)
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.GRUCell(5, prefix='a_'))
    stack.add(mx.rnn.DropoutCell(0.5, prefix='d_'))
    stack.add(mx.rnn.LSTMCell(3, prefix='b_'))
    outputs, states = stack.unroll(3, mx.sym.Variable('data'), merge_outputs=True)
    assert len(states) == 3 and len(stack.state_info) == 3
    params = dict(random_params(rs, 'gru', 4, 5, 'a_'), **random_params(rs, 'lstm', 5, 3, 'b_'))
    x = rs.normal(0, 1, (2, 3, 4))
    got = run(outputs, dict(params, data=x))[0]   # inference: dropout is the identity
    mid, _ = ref.unroll('gru', [x[:, t] for t in range(3)], strip(params, 'a_'))
    top, _ = ref.unroll('lstm', mid, strip(params, 'b_'))
    np.testing.assert_allclose(got, np.stack(top, axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('merge', [True, False])
def test_bidirectional_matches_numpy(merge):
    rs = np.random.RandomState(3)
    cell = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(3, prefix='l_'),
                                    mx.rnn.GRUCell(2, prefix='r_'), output_prefix='bi_')
    outputs, _ = cell.unroll(4, mx.sym.Variable('data'), merge_outputs=merge)
    sym = outputs if merge else mx.sym.Group(outputs)
    params = dict(random_params(rs, 'lstm', 3, 3, 'l_'), **random_params(rs, 'gru', 3, 2, 'r_'))
    x = rs.normal(0, 1, (2, 4, 3))
    xs = [x[:, t] for t in range(4)]
    fwd, _ = ref.unroll('lstm', xs, strip(params, 'l_'))
    bwd, _ = ref.unroll('gru', xs[::-1], strip(params, 'r_'))
    want = [np.concatenate([f, b], axis=1) for f, b in zip(fwd, bwd[::-1])]
    got = run(sym, dict(params, data=x))
    if merge:
        assert sym.list_outputs() == ['bi_out_output']
        np.testing.assert_allclose(got[0], np.stack(want, axis=1), rtol=1e-5, atol=1e-5)
    else:
        assert sym.list_outputs() == ['bi_t%d_output' % i for i in range(4)]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_residual_adds_inputs():
    rs = np.random.RandomState(4)
    cell = mx.rnn.ResidualCell(mx.rnn.RNNCell(3, prefix='r_'))
    outputs, _ = cell.unroll(2, mx.sym.Variable('data'), merge_outputs=True)
    params = random_params(rs, 'rnn_tanh', 3, 3, 'r_')
    x = rs.normal(0, 1, (2, 2, 3))
    got = run(outputs, dict(params, data=x))[0]
    base, _ = ref.unroll('rnn_tanh', [x[:, 0], x[:, 1]], strip(params, 'r_'))
    np.testing.assert_allclose(got, np.stack(base, axis=1) + x, rtol=1e-5, atol=1e-5)


def test_zoneout_is_identity_at_inference_and_mixes_in_training():
    rs = np.random.RandomState(5)
    cell = mx.rnn.ZoneoutCell(mx.rnn.GRUCell(4, prefix='z_'), zoneout_outputs=0.5,
                              zoneout_states=0.5)
    outputs, _ = cell.unroll(3, mx.sym.Variable('data'), merge_outputs=True)
    params = random_params(rs, 'gru', 2, 4, 'z_')
    x = rs.normal(0, 1, (5, 3, 2))
    got = run(outputs, dict(params, data=x))[0]
    want, _ = ref.unroll('gru', [x[:, t] for t in range(3)], strip(params, 'z_'))
    np.testing.assert_allclose(got, np.stack(want, axis=1), rtol=1e-5, atol=1e-5)
    exe = outputs.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in dict(params, data=x).items()},
                       grad_req='null')
    train = exe.forward(is_train=True)[0].asnumpy()
    first = train[:, 0]   # step 0 keeps either the new output or the zero previous output
    assert np.all(np.isclose(first, want[0], atol=1e-5) | (first == 0))
    assert np.any(first == 0) and not np.allclose(train, got)


def test_lstm_gradient_by_finite_differences():
    rs = np.random.RandomState(6)
    cell = mx.rnn.LSTMCell(3, prefix='g_')
    outputs, _ = cell.unroll(2, mx.sym.Variable('data'), merge_outputs=True,
                             begin_state=cell.begin_state(dtype='float64'))
    location = dict(random_params(rs, 'lstm', 2, 3, 'g_'), data=rs.normal(0, 1, (2, 2, 2)))
    check_numeric_gradient(outputs, location, numeric_eps=1e-6, rtol=1e-4, atol=1e-6,
                           dtype=np.float64)


def test_lstm_forget_bias_initialisation():
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(4, forget_bias=2.5, prefix='p_'))
    out, _ = stack.unroll(2, mx.sym.Variable('data'), merge_outputs=True)
    assert out.attr_dict()['p_i2h_bias']['__init__'] == '["lstmbias", {"forget_bias": 2.5}]'
    mod = mx.mod.Module(out, label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[('data', (2, 2, 3))])
    mod.init_params()
    bias = mod.get_params()[0]['p_i2h_bias'].asnumpy()
    np.testing.assert_array_equal(bias, np.r_[np.zeros(4), np.full(4, 2.5), np.zeros(8)])
    np.testing.assert_array_equal(mod.get_params()[0]['p_h2h_bias'].asnumpy(), np.zeros(16))
