"""Unrolled mx.gluon.rnn cells computed by the executor against numpy references: every
activation of RNNCell and LSTMCell, GRUCell, layouts, given begin states, stacks,
variable-length bidirectional runs, residual cells, gradients, and Module training."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.test_utils import check_numeric_gradient

from . import reference as ref

BATCH, STEPS, FEATURES, HIDDEN = 3, 4, 5, 6


def random_params(rs, gates, num_input, hidden, prefix):
    width = gates * hidden
    return {prefix + 'i2h_weight': rs.uniform(-0.7, 0.7, (width, num_input)),
            prefix + 'i2h_bias': rs.uniform(-0.5, 0.5, (width,)),
            prefix + 'h2h_weight': rs.uniform(-0.7, 0.7, (width, hidden)),
            prefix + 'h2h_bias': rs.uniform(-0.5, 0.5, (width,))}


def strip(params, prefix):
    return {k[len(prefix):]: v for k, v in params.items() if k.startswith(prefix)}


def run(sym, arrays):
    args = {k: mx.nd.array(v) for k, v in arrays.items()}
    return [o.asnumpy() for o in sym.eval(mx.cpu(), **args)]


def check_unrolled(cell, gates, step, layout='NTC', **kwargs):
    rs = np.random.RandomState(0)
    outputs, states = cell.unroll(STEPS, mx.sym.Variable('data'), layout=layout,
                                  merge_outputs=True)
    params = random_params(rs, gates, FEATURES, HIDDEN, cell.prefix)
    x = rs.normal(0, 1, (BATCH, STEPS, FEATURES))
    data = x if layout == 'NTC' else x.transpose(1, 0, 2)
    got = run(mx.sym.Group([outputs] + states), dict(params, data=data))
    want_out, want_states = ref.unroll(step, [x[:, t] for t in range(STEPS)],
                                       strip(params, cell.prefix), **kwargs)
    np.testing.assert_allclose(got[0], np.stack(want_out, axis=layout.find('T')),
                               rtol=1e-5, atol=1e-5)
    assert len(got) == 1 + len(want_states)
    for g, w in zip(got[1:], want_states):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('activation', ['tanh', 'relu', 'sigmoid', 'softrelu', 'softsign'])
def test_rnn_cell_activations(activation):
    cell = mx.gluon.rnn.RNNCell(HIDDEN, activation=activation, prefix='r_')
    check_unrolled(cell, 1, ref.rnn_step, activation=activation)


@pytest.mark.parametrize('activation,recurrent', [('tanh', 'sigmoid'), ('relu', 'relu'),
                                                  ('softsign', 'softrelu'), ('sigmoid', 'tanh')])
def test_lstm_cell_activations(activation, recurrent):
    cell = mx.gluon.rnn.LSTMCell(HIDDEN, prefix='l_', activation=activation,
                                 recurrent_activation=recurrent)
    check_unrolled(cell, 4, ref.lstm_step, activation=activation, recurrent_activation=recurrent)


@pytest.mark.parametrize('layout', ['NTC', 'TNC'])
def test_gru_cell_layouts(layout):
    check_unrolled(mx.gluon.rnn.GRUCell(HIDDEN, prefix='g_'), 3, ref.gru_step, layout=layout)


def test_steps_with_given_begin_state():
    rs = np.random.RandomState(1)
    cell = mx.gluon.rnn.LSTMCell(HIDDEN, prefix='v_')
    states = cell.begin_state(func=mx.sym.var)
    assert [s.name for s in states] == ['v_begin_state_0', 'v_begin_state_1']
    outputs = []
    for i in range(3):
        out, states = cell(mx.sym.var('x%d' % i), states)
        outputs.append(out)
    params = random_params(rs, 4, FEATURES, HIDDEN, 'v_')
    xs = [rs.normal(0, 1, (BATCH, FEATURES)) for _ in range(3)]
    h0, c0 = rs.normal(0, 1, (BATCH, HIDDEN)), rs.normal(0, 1, (BATCH, HIDDEN))
    arrays = dict(params, v_begin_state_0=h0, v_begin_state_1=c0,
                  **{'x%d' % i: x for i, x in enumerate(xs)})
    got = run(mx.sym.Group(outputs + states), arrays)
    want_out, want_states = ref.unroll(ref.lstm_step, xs, strip(params, 'v_'), [h0, c0])
    for g, w in zip(got, want_out + want_states):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_sequential_stack():
    rs = np.random.RandomState(2)
    stack = mx.gluon.rnn.SequentialRNNCell(prefix='s_')
    with stack.name_scope():
        stack.add(mx.gluon.rnn.GRUCell(HIDDEN))
        stack.add(mx.gluon.rnn.LSTMCell(HIDDEN))
    outputs, _ = stack.unroll(STEPS, mx.sym.Variable('data'), merge_outputs=False)
    params = dict(random_params(rs, 3, FEATURES, HIDDEN, 's_gru0_'),
                  **random_params(rs, 4, HIDDEN, HIDDEN, 's_lstm0_'))
    x = rs.normal(0, 1, (BATCH, STEPS, FEATURES))
    got = run(mx.sym.Group(outputs), dict(params, data=x))
    mid, _ = ref.unroll(ref.gru_step, [x[:, t] for t in range(STEPS)], strip(params, 's_gru0_'))
    want, _ = ref.unroll(ref.lstm_step, mid, strip(params, 's_lstm0_'))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_valid_length_lstm_and_bidirectional():
    rs = np.random.RandomState(3)
    valid = [4, 1, 3]
    lstm = mx.gluon.rnn.LSTMCell(HIDDEN, prefix='u_')
    data, valid_length = mx.sym.Variable('data'), mx.sym.Variable('valid_length')
    out, states = lstm.unroll(STEPS, data, merge_outputs=True, valid_length=valid_length)
    bi = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.RNNCell(HIDDEN, prefix='bl_'),
                                        mx.gluon.rnn.RNNCell(HIDDEN, prefix='br_'))
    # one variable per name: two different Variable('data') in one graph are refused
    bi_out, _ = bi.unroll(STEPS, data, merge_outputs=False, valid_length=valid_length)
    params = dict(random_params(rs, 4, FEATURES, HIDDEN, 'u_'),
                  **random_params(rs, 1, FEATURES, HIDDEN, 'bl_'),
                  **random_params(rs, 1, FEATURES, HIDDEN, 'br_'))
    x = rs.normal(0, 1, (BATCH, STEPS, FEATURES))
    got = run(mx.sym.Group([out] + states + bi_out),
              dict(params, data=x, valid_length=np.array(valid, dtype=np.float32)))
    xs = [x[:, t] for t in range(STEPS)]
    want_out, want_states = ref.unroll_valid(ref.lstm_step, xs, strip(params, 'u_'), valid)
    np.testing.assert_allclose(got[0], np.stack(want_out, axis=1), rtol=1e-5, atol=1e-5)
    for g, w in zip(got[1:3], want_states):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    want_bi = ref.bidirectional_valid(ref.rnn_step, xs, strip(params, 'bl_'),
                                      strip(params, 'br_'), valid)
    for g, w in zip(got[3:], want_bi):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_residual_adds_inputs():
    rs = np.random.RandomState(4)
    cell = mx.gluon.rnn.ResidualCell(mx.gluon.rnn.GRUCell(FEATURES, prefix='res_'))
    outputs, _ = cell.unroll(STEPS, mx.sym.Variable('data'), merge_outputs=True)
    params = random_params(rs, 3, FEATURES, FEATURES, 'res_')
    x = rs.normal(0, 1, (BATCH, STEPS, FEATURES))
    got = run(outputs, dict(params, data=x))[0]
    want, _ = ref.unroll(ref.gru_step, [x[:, t] for t in range(STEPS)], strip(params, 'res_'))
    np.testing.assert_allclose(got, np.stack(want, axis=1) + x, rtol=1e-5, atol=1e-5)


def test_gru_gradients_match_finite_differences():
    rs = np.random.RandomState(5)
    cell = mx.gluon.rnn.GRUCell(3, prefix='gg_')
    cell.collect_params().setattr('dtype', 'float64')
    outputs, _ = cell.unroll(2, mx.sym.Variable('data'), merge_outputs=True,
                             begin_state=cell.begin_state(dtype='float64'))
    arrays = dict(random_params(rs, 3, 2, 3, 'gg_'), data=rs.normal(0, 1, (2, 2, 2)))
    check_numeric_gradient(mx.sym.sum(outputs), arrays, numeric_eps=1e-4, rtol=1e-3, atol=1e-4,
                           dtype=np.float64)


@pytest.mark.filterwarnings('ignore:Parameters already initialized')
def test_module_trains_a_gluon_lstm():
    rs = np.random.RandomState(6)
    cell = mx.gluon.rnn.LSTMCell(8, prefix='lm_', h2h_bias_initializer='ones')
    outputs, _ = cell.unroll(STEPS, mx.sym.Variable('data'), merge_outputs=True)
    pred = mx.sym.FullyConnected(outputs, num_hidden=1, name='fc')
    sym = mx.sym.LinearRegressionOutput(pred, name='lro')
    x = rs.normal(0, 1, (32, STEPS, FEATURES)).astype(np.float32)
    y = x[:, :, 0].sum(axis=1, keepdims=True)
    train = mx.io.NDArrayIter(x, y, batch_size=8, label_name='lro_label')
    mod = mx.mod.Module(sym, data_names=['data'], label_names=['lro_label'])
    mod.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
    mod.init_params(mx.init.Uniform(0.1))
    args, _ = mod.get_params()
    np.testing.assert_array_equal(args['lm_h2h_bias'].asnumpy(), np.ones(32))
    np.testing.assert_array_equal(args['lm_i2h_bias'].asnumpy(), np.zeros(32))
    before = mod.score(train, 'mse')[0][1]
    train.reset()
    mod.fit(train, num_epoch=8, optimizer='adam', optimizer_params={'learning_rate': 0.02})
    assert mod.score(train, 'mse')[0][1] < 0.5 * before
