"""The fused RNN operator (every mode, bidirectional, stacked, given or zero states, sequence
lengths, parameters as an input) and mx.rnn cells unrolled, exported and compared with mxmod;
dynamic batch for both."""
import numpy as np
import pytest

import mxmod as mx

from .common import export_and_compare, import_and_compare, mx_forward, ort_run, random_params

R = np.random.RandomState(5)


def _x(*shape):
    return R.normal(0, 1, shape).astype(np.float32)


def _fused(mode, bidirectional, with_states, state_outputs=True, lengths=False, layers=2):
    data = mx.sym.Variable('data')
    inputs = [data, mx.sym.Variable('params')]
    if with_states:
        inputs.append(mx.sym.Variable('state'))
        if mode == 'lstm':
            inputs.append(mx.sym.Variable('cell'))
    else:
        d = 2 if bidirectional else 1
        inputs.append(mx.sym.zeros((layers * d, 0, 5)))
        if mode == 'lstm':
            inputs.append(mx.sym.zeros((layers * d, 0, 5)))
    if lengths:
        inputs.append(mx.sym.Variable('lengths'))
    out = mx.sym.RNN(*inputs, state_size=5, num_layers=layers, mode=mode,
                     bidirectional=bidirectional, state_outputs=state_outputs,
                     use_sequence_length=lengths, name='rnn')
    return out if state_outputs else out


def _inputs(net, mode, bidirectional, with_states, T=4, N=3):
    d = 2 if bidirectional else 1
    feed = {'data': _x(T, N, 6)}
    if with_states:
        feed['state'] = _x(2 * d, N, 5) * 0.5
        if mode == 'lstm':
            feed['cell'] = _x(2 * d, N, 5) * 0.5
    del net
    return feed


@pytest.mark.parametrize('mode', ['lstm', 'gru', 'rnn_tanh', 'rnn_relu'])
@pytest.mark.parametrize('bidirectional', [False, True])
@pytest.mark.parametrize('with_states', [False, True])
def test_fused_rnn(mode, bidirectional, with_states, tmp_path):
    net = _fused(mode, bidirectional, with_states)
    feed = _inputs(net, mode, bidirectional, with_states)
    shapes = {k: v.shape for k, v in feed.items()}
    args, auxs = random_params(net, shapes, scale=0.4)
    path, expected, _, _ = export_and_compare(net, feed, tmp_path, args, auxs)
    import_and_compare(path, feed, expected)


def test_fused_rnn_sequence_lengths(tmp_path):
    net = _fused('lstm', True, True, lengths=True, layers=1)
    feed = {'data': _x(5, 3, 6), 'state': _x(2, 3, 5), 'cell': _x(2, 3, 5),
            'lengths': np.array([5, 2, 3], dtype=np.float32)}
    args, auxs = random_params(net, {k: v.shape for k, v in feed.items()}, scale=0.4)
    export_and_compare(net, feed, tmp_path, args, auxs)


def test_fused_rnn_parameters_as_input(tmp_path):
    """Without a value for the flat parameters they are cut with Slice nodes at run time."""
    net = _fused('gru', True, False, state_outputs=False)
    feed = {'data': _x(4, 2, 6)}
    args, _ = random_params(net, {'data': (4, 2, 6)}, scale=0.4)
    feed['params'] = args.pop('params').asnumpy()
    export_and_compare(net, feed, tmp_path, args, {})


def test_fused_rnn_dynamic_batch_and_length(tmp_path):
    net = _fused('lstm', False, False, state_outputs=False)
    args, _ = random_params(net, {'data': (4, 3, 6)}, scale=0.4)
    path = str(tmp_path / 'rnn.onnx')
    mx.onnx.export_model(net, args, [(4, 3, 6)], np.float32, path, dynamic=True,
                         dynamic_input_shapes=[('time', 'batch', 6)])
    for shape in [(4, 3, 6), (7, 1, 6), (2, 5, 6)]:
        x = _x(*shape)
        np.testing.assert_allclose(ort_run(path, {'data': x})[0],
                                   mx_forward(net, args, {}, {'data': x})[0], rtol=1e-4,
                                   atol=1e-5)


def _cells(kind):
    if kind == 'lstm':
        return mx.rnn.LSTMCell(5, prefix='lstm_')
    if kind == 'gru':
        return mx.rnn.GRUCell(5, prefix='gru_')
    if kind == 'rnn':
        return mx.rnn.RNNCell(5, activation='relu', prefix='rnn_')
    if kind == 'stack':
        stack = mx.rnn.SequentialRNNCell()
        stack.add(mx.rnn.LSTMCell(5, prefix='l0_'))
        stack.add(mx.rnn.DropoutCell(0.3, prefix='drop_'))
        stack.add(mx.rnn.GRUCell(4, prefix='l1_'))
        return stack
    if kind == 'bidirectional':
        return mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(4, prefix='f_'),
                                        mx.rnn.LSTMCell(4, prefix='b_'))
    if kind == 'residual':
        return mx.rnn.ResidualCell(mx.rnn.GRUCell(6, prefix='res_'))
    return mx.rnn.FusedRNNCell(5, num_layers=2, mode='lstm', bidirectional=True,
                               prefix='fused_')


def _flat(states):
    out = []
    for s in states:
        out.extend(_flat(s) if isinstance(s, (list, tuple)) else [s])
    return out


@pytest.mark.parametrize('kind', ['lstm', 'gru', 'rnn', 'stack', 'bidirectional', 'residual',
                                  'fused'])
@pytest.mark.parametrize('merge', [True, False])
def test_unrolled_cells(kind, merge, tmp_path):
    cell = _cells(kind)
    outputs, states = cell.unroll(4, mx.sym.Variable('data'), layout='NTC',
                                  merge_outputs=merge)
    outputs = outputs if merge else mx.sym.Group(outputs)
    net = mx.sym.Group([outputs] + _flat(states)) if kind != 'fused' else outputs
    feed = {'data': _x(3, 4, 6)}
    args, auxs = random_params(net, {'data': (3, 4, 6)}, scale=0.4)
    path, expected, _, _ = export_and_compare(net, feed, tmp_path, args, auxs)
    import_and_compare(path, feed, expected)


def test_unrolled_cell_dynamic_batch(tmp_path):
    """Zero begin states of unrolled cells broadcast over a free batch size."""
    outputs, _ = _cells('stack').unroll(3, mx.sym.Variable('data'), merge_outputs=True)
    args, _ = random_params(outputs, {'data': (2, 3, 6)}, scale=0.4)
    path = str(tmp_path / 'cells.onnx')
    mx.onnx.export_model(outputs, args, [(2, 3, 6)], np.float32, path, dynamic=True,
                         dynamic_input_shapes=[(None, 3, 6)])
    for batch in (1, 4):
        x = _x(batch, 3, 6)
        np.testing.assert_allclose(ort_run(path, {'data': x})[0],
                                   mx_forward(outputs, args, {}, {'data': x})[0], rtol=1e-4,
                                   atol=1e-5)
