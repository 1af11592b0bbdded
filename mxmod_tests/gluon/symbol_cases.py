"""Gluon recurrent-cell constructions shared by gen_fixtures.py (run with MXNet 1.9.1) and the
tests (run with mxmod). Each case takes the ``mx`` module and returns a dict: ``sym`` (the graph),
``cell``, ``states`` (the returned state symbols), ``shapes`` (for infer_shape and forward) and
``fixed`` (arrays that must not be random, e.g. valid lengths)."""
import numpy as np

BATCH, STEPS, FEATURES, HIDDEN = 3, 3, 5, 4


def _steps(mx, prefix='t', count=STEPS):
    return [mx.sym.Variable('%s%d_data' % (prefix, i)) for i in range(count)]


def _step_shapes(prefix='t', count=STEPS):
    return {'%s%d_data' % (prefix, i): (BATCH, FEATURES) for i in range(count)}


def _result(mx, cell, outputs, states, shapes, fixed=None):
    outputs = outputs if isinstance(outputs, list) else [outputs]
    return {'sym': mx.sym.Group(outputs + list(states)), 'cell': cell, 'states': states,
            'shapes': shapes, 'fixed': fixed or {}}


def lstm_test_rnn(mx):
    """The construction of MXNet's test_rnn.py::test_lstm."""
    cell = mx.gluon.rnn.LSTMCell(100, prefix='rnn_')
    outputs, states = cell.unroll(3, [mx.sym.Variable('rnn_t%d_data' % i) for i in range(3)])
    shapes = {'rnn_t%d_data' % i: (10, 50) for i in range(3)}
    return _result(mx, cell, outputs, states, shapes)


def _lstm_activation(act):
    def build(mx):
        cell = mx.gluon.rnn.LSTMCell(HIDDEN, prefix='l_', activation=act,
                                     recurrent_activation=act)
        outputs, states = cell.unroll(STEPS, _steps(mx))
        return _result(mx, cell, outputs, states, _step_shapes())
    build.__name__ = 'lstm_act_' + act
    return build


def _rnn_activation(act):
    def build(mx):
        cell = mx.gluon.rnn.RNNCell(HIDDEN, activation=act, prefix='r_')
        outputs, states = cell.unroll(STEPS, _steps(mx))
        return _result(mx, cell, outputs, states, _step_shapes())
    build.__name__ = 'rnn_act_' + act
    return build


def gru_list(mx):
    cell = mx.gluon.rnn.GRUCell(HIDDEN, prefix='g_')
    outputs, states = cell.unroll(STEPS, _steps(mx))
    return _result(mx, cell, outputs, states, _step_shapes())


def lstm_merged_ntc(mx):
    cell = mx.gluon.rnn.LSTMCell(HIDDEN, prefix='m_')
    outputs, states = cell.unroll(STEPS, mx.sym.Variable('data'), merge_outputs=True)
    return _result(mx, cell, outputs, states, {'data': (BATCH, STEPS, FEATURES)})


def gru_merged_tnc(mx):
    cell = mx.gluon.rnn.GRUCell(HIDDEN, prefix='m_')
    outputs, states = cell.unroll(STEPS, mx.sym.Variable('data'), layout='TNC',
                                  merge_outputs=True)
    return _result(mx, cell, outputs, states, {'data': (STEPS, BATCH, FEATURES)})


def rnn_symbol_in_list_out(mx):
    cell = mx.gluon.rnn.RNNCell(HIDDEN, prefix='s_')
    outputs, states = cell.unroll(STEPS, mx.sym.Variable('data'), merge_outputs=False)
    return _result(mx, cell, outputs, states, {'data': (BATCH, STEPS, FEATURES)})


def auto_prefixes(mx):
    lstm = mx.gluon.rnn.LSTMCell(HIDDEN)
    gru = mx.gluon.rnn.GRUCell(HIDDEN, input_size=HIDDEN)
    outputs, states = lstm.unroll(2, _steps(mx, count=2))
    outputs, more = gru.unroll(2, outputs)
    return _result(mx, gru, outputs, states + more, _step_shapes(count=2))


def sequential_name_scope(mx):
    stack = mx.gluon.rnn.SequentialRNNCell()
    with stack.name_scope():
        stack.add(mx.gluon.rnn.LSTMCell(HIDDEN))
        stack.add(mx.gluon.rnn.DropoutCell(0.5))
        stack.add(mx.gluon.rnn.GRUCell(HIDDEN))
    outputs, states = stack.unroll(STEPS, mx.sym.Variable('data'), merge_outputs=True)
    return _result(mx, stack, outputs, states, {'data': (BATCH, STEPS, FEATURES)})


def hybrid_sequential_steps(mx):
    stack = mx.gluon.rnn.HybridSequentialRNNCell(prefix='hs_')
    with stack.name_scope():
        stack.add(mx.gluon.rnn.RNNCell(HIDDEN, activation='relu'))
        stack.add(mx.gluon.rnn.LSTMCell(HIDDEN))
    states = stack.begin_state(func=mx.sym.Variable)
    outputs = []
    for step in _steps(mx, count=2):
        out, states = stack(step, states)
        outputs.append(out)
    shapes = dict(_step_shapes(count=2), hs_rnn0_begin_state_0=(BATCH, HIDDEN),
                  hs_lstm0_begin_state_0=(BATCH, HIDDEN), hs_lstm0_begin_state_1=(BATCH, HIDDEN))
    return _result(mx, stack, outputs, states, shapes)


def bidirectional_merged(mx):
    cell = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.LSTMCell(HIDDEN, prefix='l_'),
                                          mx.gluon.rnn.GRUCell(HIDDEN, prefix='r_'))
    outputs, states = cell.unroll(STEPS, mx.sym.Variable('data'), merge_outputs=True)
    return _result(mx, cell, outputs, states, {'data': (BATCH, STEPS, FEATURES)})


def bidirectional_list_valid_length(mx):
    cell = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.RNNCell(HIDDEN, prefix='l_'),
                                          mx.gluon.rnn.RNNCell(HIDDEN, prefix='r_'))
    outputs, states = cell.unroll(STEPS, _steps(mx), merge_outputs=False,
                                  valid_length=mx.sym.Variable('valid_length'))
    shapes = dict(_step_shapes(), valid_length=(BATCH,))
    return _result(mx, cell, outputs, states, shapes,
                   {'valid_length': np.array([3, 1, 2], dtype=np.float32)})


def lstm_valid_length(mx):
    cell = mx.gluon.rnn.LSTMCell(HIDDEN, prefix='v_')
    outputs, states = cell.unroll(STEPS, mx.sym.Variable('data'), merge_outputs=True,
                                  valid_length=mx.sym.Variable('valid_length'))
    shapes = {'data': (BATCH, STEPS, FEATURES), 'valid_length': (BATCH,)}
    return _result(mx, cell, outputs, states, shapes,
                   {'valid_length': np.array([2, 3, 1], dtype=np.float32)})


def residual_merged(mx):
    cell = mx.gluon.rnn.ResidualCell(mx.gluon.rnn.GRUCell(FEATURES, prefix='res_'))
    outputs, states = cell.unroll(STEPS, mx.sym.Variable('data'), merge_outputs=True)
    return _result(mx, cell, outputs, states, {'data': (BATCH, STEPS, FEATURES)})


def residual_steps(mx):
    cell = mx.gluon.rnn.ResidualCell(mx.gluon.rnn.RNNCell(FEATURES, prefix='rs_'))
    states = cell.begin_state()
    outputs = []
    for step in _steps(mx, count=2):
        out, states = cell(step, states)
        outputs.append(out)
    return _result(mx, cell, outputs, states, _step_shapes(count=2))


def zoneout(mx):
    cell = mx.gluon.rnn.ZoneoutCell(mx.gluon.rnn.LSTMCell(HIDDEN, prefix='z_'),
                                    zoneout_outputs=0.3, zoneout_states=0.2)
    outputs, states = cell.unroll(STEPS, _steps(mx))
    return _result(mx, cell, outputs, states, _step_shapes())


def shared_params_and_attrs(mx):
    first = mx.gluon.rnn.GRUCell(HIDDEN, prefix='a_',
                                 i2h_weight_initializer=mx.init.Xavier(magnitude=2.0),
                                 h2h_bias_initializer='ones')
    second = mx.gluon.rnn.GRUCell(HIDDEN, prefix='b_', params=first.collect_params(),
                                  input_size=FEATURES, h2h_bias_initializer='ones')
    first.collect_params().setattr('lr_mult', 0.5)
    second.collect_params('.*bias').setattr('wd_mult', 0.0)
    outputs, states = first.unroll(2, _steps(mx, count=2))
    more_outputs, more = second.unroll(2, _steps(mx, 'u', count=2))
    shapes = dict(_step_shapes(count=2), **_step_shapes('u', count=2))
    return _result(mx, second, outputs + more_outputs, states + more, shapes)


def begin_state_kwargs(mx):
    cell = mx.gluon.rnn.LSTMCell(HIDDEN, prefix='k_')
    begin = cell.begin_state(func=mx.sym.uniform, low=0.0, high=0.5, dtype='float32')
    outputs, states = cell.unroll(2, _steps(mx, count=2), begin_state=begin)
    return _result(mx, cell, outputs, states, _step_shapes(count=2))


CASES = ([lstm_test_rnn]
         + [_lstm_activation(act) for act in ('relu', 'sigmoid', 'softrelu', 'tanh', 'softsign')]
         + [_rnn_activation(act) for act in ('tanh', 'relu', 'softrelu')]
         + [gru_list, lstm_merged_ntc, gru_merged_tnc, rnn_symbol_in_list_out, auto_prefixes,
            sequential_name_scope, hybrid_sequential_steps, bidirectional_merged,
            bidirectional_list_valid_length, lstm_valid_length, residual_merged, residual_steps,
            zoneout, shared_params_and_attrs, begin_state_kwargs])

# Cases whose forward is deterministic (no random begin state), frozen numerically.
NUMERIC = [case.__name__ for case in CASES if case.__name__ not in ('begin_state_kwargs',)]


def build(mx, case):
    """Run ``case`` under a fresh NameManager (so automatic names start from 0)."""
    with mx.name.NameManager():
        return case(mx)


def arrays(sym, shapes, fixed, seed=0):
    """Deterministic float32 inputs for every argument of ``sym`` (``fixed`` ones as given)."""
    arg_shapes, _, _ = sym.infer_shape(**shapes)
    rs = np.random.RandomState(seed)
    out = {}
    for name, shape in zip(sym.list_arguments(), arg_shapes):
        out[name] = fixed[name] if name in fixed else \
            rs.uniform(-1, 1, shape).astype(np.float32)
    return out
