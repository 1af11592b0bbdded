"""Export conversion of the fused ``RNN`` operator: one ONNX LSTM / GRU / RNN node per layer.

MXNet packs every weight into one flat vector (cuDNN layout, gates LSTM i,f,g,o and GRU r,z,n);
ONNX wants per layer W (D, G*H, in), R (D, G*H, H) and B (D, 2*G*H) with gates LSTM i,o,f,c and
GRU z,r,h (``linear_before_reset=1`` is MXNet's GRU). The pieces are cut at export time when the
parameters are known, or with Slice nodes when they are a graph input."""
import numpy as np

from ..base import MXNetError
from ..ops.rnn import _NUM_GATES
from .base import exports, onnx_dtype

_ONNX_OP = {'lstm': 'LSTM', 'gru': 'GRU', 'rnn_relu': 'RNN', 'rnn_tanh': 'RNN'}
# position in MXNet's packing of each gate in ONNX's order
_GATE_ORDER = {'lstm': [0, 3, 1, 2], 'gru': [1, 0, 2], 'rnn_relu': [0], 'rnn_tanh': [0]}


def _unsupported(node, what):
    return MXNetError('mx.onnx: cannot export %s %r: %s' % (node.op_name, node.name, what))


class _Packing(object):
    """Cuts gate-reordered pieces out of the flat parameter vector (numpy or Slice nodes)."""

    def __init__(self, g, node):
        self.g, self.node = g, node
        self.flat = node.inputs[1]
        self.value = g.value(self.flat)
        self.order = _GATE_ORDER[node.p.mode]

    def piece(self, start, rows, cols):
        """The (G*rows, cols) block at ``start`` (gate-major) with gates in ONNX order."""
        gates = len(self.order)
        size = rows * cols
        if self.value is not None:
            block = self.value[start:start + gates * size].reshape(gates, rows, cols)
            return block[self.order].reshape(gates * rows, cols)
        g = self.g
        parts = [g.add('Slice', [self.flat, g.ints([start + k * size]),
                                 g.ints([start + (k + 1) * size]), g.ints([0])],
                       name=self.node.name + '_param') for k in self.order]
        joined = g.add('Concat', parts, name=self.node.name + '_param', axis=0)
        return g.add('Reshape', [joined, g.ints([gates * rows, cols])],
                     name=self.node.name + '_param')

    def stack(self, pieces, name):
        """Stack per-direction pieces on a new leading axis."""
        if all(isinstance(p, np.ndarray) for p in pieces):
            return self.g.const(np.stack(pieces), hint=name)
        g = self.g
        parts = [g.unsqueeze(p if isinstance(p, str) else g.const(p), [0], name=name)
                 for p in pieces]
        return g.add('Concat', parts, name=name, axis=0)

    def bias(self, bx, bh):
        """ONNX B of one direction: input then recurrent biases, each as a row."""
        if isinstance(bx, np.ndarray) and isinstance(bh, np.ndarray):
            return np.concatenate([bx.reshape(-1), bh.reshape(-1)])
        g = self.g
        flat = [g.add('Reshape', [b if isinstance(b, str) else g.const(b), g.ints([-1])])
                for b in (bx, bh)]
        return g.add('Concat', flat, name=self.node.name + '_B', axis=0)


def _layer_weights(pack, p, directions, input_size):
    """Per layer: (W, R, B) tensors; walks the flat vector in MXNet's order."""
    hidden = p.state_size
    gates = _NUM_GATES[p.mode]
    pos, mats = 0, []
    for layer in range(p.num_layers):
        width = input_size if layer == 0 else hidden * directions
        for _ in range(directions):
            w = pack.piece(pos, hidden, width)
            pos += gates * hidden * width
            r = pack.piece(pos, hidden, hidden)
            pos += gates * hidden * hidden
            mats.append((w, r))
    biases = []
    for _ in range(p.num_layers * directions):
        bx = pack.piece(pos, hidden, 1)
        bh = pack.piece(pos + gates * hidden, hidden, 1)
        pos += 2 * gates * hidden
        biases.append(pack.bias(bx, bh))
    out = []
    for layer in range(p.num_layers):
        units = range(layer * directions, (layer + 1) * directions)
        name = '%s_l%d' % (pack.node.name, layer)
        out.append((pack.stack([mats[u][0] for u in units], name + '_W'),
                    pack.stack([mats[u][1] for u in units], name + '_R'),
                    pack.stack([biases[u] for u in units], name + '_B')))
    return out


def _initial_state(g, node, index, layer, directions):
    """Layer ``layer``'s slice of a state input ('' when the state is a constant zero)."""
    if index >= len(node.inputs) or node.inputs[index] is None:
        return ''
    value = g.value(node.inputs[index])
    if value is not None and not value.any():
        return ''
    lo = layer * directions
    return g.add('Slice', [node.inputs[index], g.ints([lo]), g.ints([lo + directions]),
                           g.ints([0])], name='%s_l%d_state' % (node.name, layer))


def _node_attrs(p, directions):
    """Attributes of the ONNX LSTM/GRU/RNN node of every layer."""
    attrs = {'hidden_size': p.state_size,
             'direction': 'bidirectional' if directions == 2 else 'forward'}
    if p.mode == 'gru':
        attrs['linear_before_reset'] = 1
    if p.mode.startswith('rnn_'):
        attrs['activations'] = ['Relu' if p.mode == 'rnn_relu' else 'Tanh'] * directions
    return attrs


@exports('RNN')
def rnn(g, node):
    """LSTM / GRU / RNN nodes, one per layer; the output is (T, N, D*H), and with state_outputs
    the final states are concatenated over layers as MXNet returns them."""
    p = node.p
    if p.projection_size:
        raise _unsupported(node, 'projection_size (LSTMP has no ONNX operator)')
    if p.lstm_state_clip_min is not None or p.lstm_state_clip_max is not None:
        raise _unsupported(node, 'lstm_state_clip_min/max')
    directions = 2 if p.bidirectional else 1
    weights = _layer_weights(_Packing(g, node), p, directions, node.in_shapes[0][2])
    is_lstm = p.mode == 'lstm'
    lengths = ''
    if p.use_sequence_length:
        lengths = g.add('Cast', [node.inputs[-1]], name=node.name + '_lengths',
                        to=onnx_dtype(np.int32))
    x, finals = node.inputs[0], ([], [])
    attrs = _node_attrs(p, directions)
    for layer, (w, r, b) in enumerate(weights):
        name = '%s_l%d' % (node.name, layer)
        inputs = [x, w, r, b, lengths, _initial_state(g, node, 2, layer, directions)]
        if is_lstm:
            inputs.append(_initial_state(g, node, 3, layer, directions))
        outs = [g.fresh(name + '_Y'), g.fresh(name + '_Yh')]
        if is_lstm:
            outs.append(g.fresh(name + '_Yc'))
        g.add(_ONNX_OP[p.mode], inputs, outputs=outs, name=name, **attrs)
        seq = g.add('Transpose', [outs[0]], name=name + '_TNDH', perm=[0, 2, 1, 3])
        last = layer == p.num_layers - 1
        x = g.add('Reshape', [seq, g.ints([0, 0, -1])], name=name + '_out',
                  outputs=[node.out()] if last else 1)
        finals[0].append(outs[1])
        if is_lstm:
            finals[1].append(outs[2])
    produced = [x]
    if p.state_outputs:
        for k, states in enumerate(finals[:2 if is_lstm else 1]):
            produced.append(g.add('Concat', states, outputs=[node.out(k + 1)],
                                  name=node.name + '_states', axis=0))
    return produced
