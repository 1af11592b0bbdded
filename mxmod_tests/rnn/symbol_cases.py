"""Cell constructions shared by the oracle fixture generator and the tests: each case takes the
``mx`` module (MXNet or mxmod) and returns ``(symbol, shapes)`` where ``shapes`` are the input
shapes for infer_shape. Every case runs under a fresh NameManager so auto names start at 0."""


def _steps(mx, n, prefix='t'):
    return [mx.sym.Variable('%s%d_data' % (prefix, i)) for i in range(n)]


def rnn_relu_list(mx):
    cell = mx.rnn.RNNCell(5, activation='relu', prefix='rnn_')
    outs, states = cell.unroll(3, _steps(mx, 3))
    return mx.sym.Group(outs + states), {'t%d_data' % i: (2, 4) for i in range(3)}


def gru_merged_tnc(mx):
    cell = mx.rnn.GRUCell(5, prefix='gru_')
    data = mx.sym.Variable('data')
    outs, states = cell.unroll(4, data, layout='TNC', merge_outputs=True)
    return mx.sym.Group([outs] + states), {'data': (4, 2, 3)}


def lstm_list_in_merged_out(mx):
    cell = mx.rnn.LSTMCell(4, prefix='l_', forget_bias=2.5)
    outs, states = cell.unroll(3, _steps(mx, 3), merge_outputs=True)
    return mx.sym.Group([outs] + states), {'t%d_data' % i: (2, 3) for i in range(3)}


def stack_dropout(mx):
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(4, prefix='a_'))
    stack.add(mx.rnn.DropoutCell(0.3, prefix='d_'))
    stack.add(mx.rnn.GRUCell(3, prefix='b_'))
    data = mx.sym.Variable('data')
    outs, states = stack.unroll(3, data, merge_outputs=False)
    return mx.sym.Group(outs + states), {'data': (2, 3, 5)}


def bidirectional_merged(mx):
    cell = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(3, prefix='l_'),
                                    mx.rnn.GRUCell(3, prefix='r_'), output_prefix='bi_')
    data = mx.sym.Variable('data')
    outs, _ = cell.unroll(4, data, merge_outputs=True)
    return outs, {'data': (2, 4, 5)}


def zoneout_residual(mx):
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.ZoneoutCell(mx.rnn.GRUCell(4, prefix='z_'), zoneout_outputs=0.3,
                                 zoneout_states=0.2))
    stack.add(mx.rnn.ResidualCell(mx.rnn.RNNCell(4, prefix='res_')))
    outs, states = stack.unroll(3, _steps(mx, 3))
    return mx.sym.Group(outs + states), {'t%d_data' % i: (2, 4) for i in range(3)}


def residual_merged(mx):
    cell = mx.rnn.ResidualCell(mx.rnn.LSTMCell(3, prefix='r_'))
    data = mx.sym.Variable('data')
    outs, _ = cell.unroll(2, data, merge_outputs=True)
    return outs, {'data': (2, 2, 3)}


def fused_lstm_ntc_states(mx):
    cell = mx.rnn.FusedRNNCell(4, num_layers=2, mode='lstm', bidirectional=True,
                               get_next_state=True, prefix='f_')
    data = mx.sym.Variable('data')
    outs, states = cell.unroll(3, data, layout='NTC', merge_outputs=True)
    return mx.sym.Group([outs] + states), {'data': (2, 3, 5)}


def fused_gru_tnc_list(mx):
    cell = mx.rnn.FusedRNNCell(3, num_layers=1, mode='gru', dropout=0.2)
    data = mx.sym.Variable('data')
    outs, _ = cell.unroll(3, data, layout='TNC', merge_outputs=False)
    return mx.sym.Group(outs), {'data': (3, 2, 4)}


def unfused_bidirectional(mx):
    cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode='rnn_tanh', bidirectional=True,
                               dropout=0.5, prefix='u_').unfuse()
    outs, _ = cell.unroll(2, _steps(mx, 2))
    return mx.sym.Group(outs), {'t%d_data' % i: (2, 4) for i in range(2)}


def begin_state_variable(mx):
    cell = mx.rnn.LSTMCell(3, prefix='v_')
    states = cell.begin_state(func=mx.sym.Variable)
    outs, states = cell.unroll(2, _steps(mx, 2), begin_state=states)
    return mx.sym.Group(outs + states), {'t0_data': (2, 4), 't1_data': (2, 4),
                                         'v_begin_state_0': (2, 3), 'v_begin_state_1': (2, 3)}


def conv_lstm(mx):
    cell = mx.rnn.ConvLSTMCell(input_shape=(1, 2, 5, 4), num_hidden=3, prefix='cl_')
    outs, states = cell.unroll(2, _steps(mx, 2))
    return mx.sym.Group(outs + states), {'t%d_data' % i: (1, 2, 5, 4) for i in range(2)}


def conv_gru_stride(mx):
    cell = mx.rnn.ConvGRUCell(input_shape=(2, 1, 6, 6), num_hidden=2, i2h_kernel=(3, 3),
                              i2h_stride=(2, 2), i2h_pad=(1, 1), h2h_kernel=(3, 3),
                              h2h_dilate=(2, 2), activation='tanh', prefix='cg_')
    outs, states = cell.unroll(2, _steps(mx, 2))
    return mx.sym.Group(outs + states), {'t%d_data' % i: (2, 1, 6, 6) for i in range(2)}


def conv_rnn(mx):
    cell = mx.rnn.ConvRNNCell(input_shape=(1, 2, 4, 4), num_hidden=2, prefix='cr_')
    outs, states = cell.unroll(2, _steps(mx, 2))
    return mx.sym.Group(outs + states), {'t%d_data' % i: (1, 2, 4, 4) for i in range(2)}


CASES = [rnn_relu_list, gru_merged_tnc, lstm_list_in_merged_out, stack_dropout,
         bidirectional_merged, zoneout_residual, residual_merged, fused_lstm_ntc_states,
         fused_gru_tnc_list, unfused_bidirectional, begin_state_variable, conv_lstm,
         conv_gru_stride, conv_rnn]


def build(mx, case):
    """Run ``case`` under a fresh NameManager; returns (symbol, shapes)."""
    with mx.name.NameManager():
        return case(mx)
