"""Import conversion of ONNX's LSTM, GRU and RNN nodes as MXNet's fused ``RNN`` operator (one
layer each): W, R and B are packed into MXNet's flat parameter vector, gates reordered."""
import numpy as np

from .base import imports
from .onnx2mx_nn import unsupported

# ONNX gate k is MXNet gate _MX_GATE[mode][k]; as an index list: the ONNX gate of each MXNet gate
_ONNX_OF_MX_GATE = {'LSTM': [0, 2, 3, 1], 'GRU': [1, 0, 2], 'RNN': [0]}
_DEFAULT_ACTS = {'LSTM': ['Sigmoid', 'Tanh', 'Tanh'], 'GRU': ['Sigmoid', 'Tanh'], 'RNN': ['Tanh']}


def _mode(imp, node, directions):
    acts = node.attr('activations')
    if node.op_type == 'RNN':
        acts = acts or ['Tanh'] * directions
        if set(acts) == {'Relu'}:
            return 'rnn_relu'
        if set(acts) == {'Tanh'}:
            return 'rnn_tanh'
        raise unsupported(node, 'activations %s' % acts)
    if acts and acts != _DEFAULT_ACTS[node.op_type] * directions:
        raise unsupported(node, 'activations %s' % acts)
    if node.op_type == 'GRU' and not node.attr('linear_before_reset', 0):
        raise unsupported(node, 'linear_before_reset=0 (MXNet applies the reset gate after the '
                                'recurrent product)')
    return node.op_type.lower()


def _packed(imp, node, hidden, directions):
    """MXNet's flat parameter vector from ONNX's W, R, B."""
    w = imp.const(node.inputs[1], node, 'W')
    r = imp.const(node.inputs[2], node, 'R')
    gates = len(_ONNX_OF_MX_GATE[node.op_type])
    if len(node.inputs) > 3 and node.inputs[3]:
        b = imp.const(node.inputs[3], node, 'B')
    else:
        b = np.zeros((directions, 2 * gates * hidden), dtype=w.dtype)
    order = _ONNX_OF_MX_GATE[node.op_type]

    def regate(block):
        return block.reshape((gates, hidden) + block.shape[1:])[order].reshape(-1)
    weights = []
    for d in range(directions):
        weights += [regate(w[d]), regate(r[d])]
    biases = []
    for d in range(directions):
        biases += [regate(b[d][:gates * hidden]), regate(b[d][gates * hidden:])]
    return np.concatenate(weights + biases).astype(w.dtype)


def _state(imp, node, index, directions, hidden):
    if len(node.inputs) > index and node.inputs[index]:
        return imp.symbol(node.inputs[index])
    return imp.sym.zeros(shape=(directions, 0, hidden))


@imports('LSTM', 'GRU', 'RNN')
def recurrent(imp, node):
    """RNN with state_outputs; Y comes back as (T, D, N, H), Y_h and Y_c as (D, N, H)."""
    if node.attr('clip') is not None or node.attr('input_forget', 0):
        raise unsupported(node, 'clip / input_forget')
    direction = node.attr('direction', 'forward')
    if direction == 'reverse':
        raise unsupported(node, "direction='reverse'")
    directions = 2 if direction == 'bidirectional' else 1
    hidden = node.attr('hidden_size')
    mode = _mode(imp, node, directions)
    x = imp.symbol(node.inputs[0])
    if node.attr('layout', 0):
        x = imp.sym.transpose(x, axes=(1, 0, 2))
    inputs = [x, imp.parameter(_packed(imp, node, hidden, directions), node.inputs[1]),
              _state(imp, node, 5, directions, hidden)]
    if mode == 'lstm':
        inputs.append(_state(imp, node, 6, directions, hidden))
    lengths = len(node.inputs) > 4 and node.inputs[4]
    if lengths:
        inputs.append(imp.sym.Cast(imp.symbol(node.inputs[4]), dtype='float32'))
    out = imp.sym.RNN(*inputs, state_size=hidden, num_layers=1, mode=mode,
                      bidirectional=directions == 2, state_outputs=True,
                      use_sequence_length=bool(lengths), name=imp.node_name(node))
    seq = imp.sym.Reshape(out[0], shape=(0, 0, directions, hidden))
    y = imp.sym.transpose(seq, axes=(0, 2, 1, 3))
    states = [out[1], out[2]] if mode == 'lstm' else [out[1]]
    if node.attr('layout', 0):
        y = imp.sym.transpose(y, axes=(2, 0, 1, 3))
        states = [imp.sym.transpose(s, axes=(1, 0, 2)) for s in states]
    return [y] + states


@imports('ReverseSequence')
def reverse_sequence(imp, node):
    """SequenceReverse over the valid lengths (time-major data)."""
    if node.attr('time_axis', 0) != 0 or node.attr('batch_axis', 1) != 1:
        raise unsupported(node, 'batch-major data (time_axis=1)')
    lengths = imp.sym.Cast(imp.symbol(node.inputs[1]), dtype='float32')
    return imp.sym.SequenceReverse(imp.symbol(node.inputs[0]), lengths, use_sequence_length=True,
                                   name=imp.node_name(node))
