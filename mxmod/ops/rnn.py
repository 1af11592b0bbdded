"""The fused recurrent operator ``RNN`` (modes rnn_relu, rnn_tanh, lstm, gru), forward and backward
through time, vectorised over the batch.

Data is ``(T, N, I)``. ``parameters`` is one flat vector packed as MXNet packs it (cuDNN layout):
for every layer and direction the input weights ``(G*H, I_layer)``, the recurrent weights
``(G*H, P or H)`` and, with a projection, the projection ``(P, H)``; then for every layer and
direction the input bias ``(G*H,)`` and the recurrent bias ``(G*H,)``. Gates are stacked in the
order LSTM i, f, g, o and GRU r, z, n, with MXNet's GRU candidate
``tanh(Wx x + bx + r*(Wh h + bh))``."""
from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from .rnn_steps import _GRU, _LSTM, _Vanilla, _back_direction, _run_direction

_NUM_GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}


def rnn_param_size(mode, num_layers, directions, state_size, input_size, projection_size=None):
    """Length of the flat ``parameters`` vector of a fused RNN."""
    gates = _NUM_GATES[mode] * state_size
    out = projection_size or state_size
    size = 0
    for layer in range(num_layers):
        width = input_size if layer == 0 else out * directions
        size += directions * ((width + out + 2) * gates + (projection_size or 0) * state_size)
    return size


class _Weights(object):
    """Views into the flat parameter (or gradient) vector for one layer and direction."""
    __slots__ = ('wx', 'wh', 'whr', 'bx', 'bh')


def _unpack(flat, p, directions, input_size):
    """Split ``flat`` into a list of _Weights (index ``layer * directions + direction``); views."""
    gates = _NUM_GATES[p.mode] * p.state_size
    out = p.projection_size or p.state_size
    units, pos = [], 0
    for layer in range(p.num_layers):
        width = input_size if layer == 0 else out * directions
        for _ in range(directions):
            w = _Weights()
            w.wx = flat[pos:pos + gates * width].reshape(gates, width)
            pos += gates * width
            w.wh = flat[pos:pos + gates * out].reshape(gates, out)
            pos += gates * out
            w.whr = None
            if p.projection_size:
                w.whr = flat[pos:pos + out * p.state_size].reshape(out, p.state_size)
                pos += out * p.state_size
            units.append(w)
    for w in units:
        w.bx = flat[pos:pos + gates]
        w.bh = flat[pos + gates:pos + 2 * gates]
        pos += 2 * gates
    return units


@register
class RNN(Operator):
    """Fused multi-layer (bi)directional RNN / LSTM / GRU over TNC data (MXNet's ``RNN``)."""
    op_name = 'RNN'
    params = {
        'state_size': Param('int'), 'num_layers': Param('int'),
        'bidirectional': Param('bool', False),
        'mode': Param('str', choices=('rnn_relu', 'rnn_tanh', 'lstm', 'gru')),
        'p': Param('float', 0.0), 'state_outputs': Param('bool', False),
        'projection_size': Param('int?', None),
        'lstm_state_clip_min': Param('float?', None), 'lstm_state_clip_max': Param('float?', None),
        'lstm_state_clip_nan': Param('bool', False),
        'use_sequence_length': Param('bool', False),
    }

    def setup(self):
        p = self.p
        if p.state_size <= 0 or p.num_layers <= 0:
            raise MXNetError('RNN: state_size and num_layers must be positive, got %d and %d'
                             % (p.state_size, p.num_layers))
        if not 0 <= p.p < 1:
            raise MXNetError('RNN: dropout p must be in [0, 1), got %s' % p.p)
        clip = (p.lstm_state_clip_min, p.lstm_state_clip_max)
        if p.mode != 'lstm' and (p.projection_size or clip != (None, None)):
            raise MXNetError('RNN: projection_size and lstm_state_clip_* need mode="lstm", got %r'
                             % p.mode)
        if (clip[0] is None) != (clip[1] is None) or (clip[0] is not None and clip[1] < clip[0]):
            raise MXNetError('RNN: lstm_state_clip_min and lstm_state_clip_max must be given '
                             'together with min <= max, got %s and %s' % clip)
        if p.projection_size is not None and not 0 < p.projection_size <= p.state_size:
            raise MXNetError('RNN: projection_size must be in [1, state_size=%d], got %d'
                             % (p.state_size, p.projection_size))
        self.directions = 2 if p.bidirectional else 1
        self.hidden_out = p.projection_size or p.state_size
        if p.mode == 'lstm':
            self.cell = _LSTM(None if clip[0] is None else clip + (p.lstm_state_clip_nan,))
        elif p.mode == 'gru':
            self.cell = _GRU()
        else:
            self.cell = _Vanilla(relu=p.mode == 'rnn_relu')

    def list_arguments(self):
        names = ['data', 'parameters', 'state']
        if self.p.mode == 'lstm':
            names.append('state_cell')
        if self.p.use_sequence_length:
            names.append('sequence_length')
        return names

    def list_outputs(self):
        if not self.p.state_outputs:
            return ['output']
        return ['output', 'state_output'] + (['statecell_output'] if self.p.mode == 'lstm' else [])

    # ---- inference ------------------------------------------------------------------------------
    def _data_shape(self, in_shapes, out_shapes):
        """data's shape; as MXNet, RNN infers from data forwards only (the states, parameters
        and outputs do not give data's dims)."""
        data = in_shapes[0]
        if data is not None and len(data) != 3:
            raise MXNetError('RNN: data must be 3-D (sequence length, batch, input size), got %s'
                             % (data,))
        return data

    def infer_shape(self, in_shapes, out_shapes):
        p, name = self.p, self.op_name
        data = self._data_shape(list(in_shapes), list(out_shapes))
        if data is None:
            return list(in_shapes), list(out_shapes)
        steps, batch, width = data
        layers = p.num_layers * self.directions
        size = rnn_param_size(p.mode, p.num_layers, self.directions, p.state_size, width,
                              p.projection_size) if width else 0
        want = [data, (size,), (layers, batch, self.hidden_out)]
        outs = [(steps, batch, self.directions * self.hidden_out)]
        if p.mode == 'lstm':
            want.append((layers, batch, p.state_size))
        if p.use_sequence_length:
            want.append((batch,))
        if p.state_outputs:
            outs += want[2:4] if p.mode == 'lstm' else want[2:3]
        names = self.list_arguments() + self.list_outputs()
        ins = [merge_shape(name, n, s, w) for n, s, w in zip(names, in_shapes, want)]
        outs = [merge_shape(name, n, s, w)
                for n, s, w in zip(names[len(ins):], out_shapes, outs)]
        return ins, outs

    def infer_type(self, in_types, out_types):
        seq = len(in_types) - 1 if self.p.use_sequence_length else None
        known = [t for i, t in enumerate(in_types) if t is not None and i != seq]
        known += [t for t in out_types if t is not None]
        if not known:
            return list(in_types), list(out_types)
        dtype = known[0]
        types = [dtype if i != seq else (t or dtype) for i, t in enumerate(in_types)]
        return types, [dtype] * len(out_types)

    # ---- computation ----------------------------------------------------------------------------
    def _valid(self, xp, inputs):
        if not self.p.use_sequence_length:
            return None
        data, lengths = inputs[0], inputs[-1].astype('int64')
        return (xp.arange(data.shape[0])[:, None] < lengths[None, :])[:, :, None]

    def forward(self, octx, inputs, aux):
        xp, p = octx.xp, self.p
        data, flat, h0 = inputs[0], inputs[1], inputs[2]
        c0 = inputs[3] if p.mode == 'lstm' else None
        units = _unpack(flat, p, self.directions, data.shape[2])
        valid = self._valid(xp, inputs)
        layer_in, per_layer, h_last, c_last = data, [], [], []
        for layer in range(p.num_layers):
            outs, records = [], []
            for d in range(self.directions):
                k = layer * self.directions + d
                y, h, c, rec = _run_direction(xp, self.cell, units[k], layer_in, h0[k],
                                              None if c0 is None else c0[k], d == 1, valid)
                outs.append(y)
                records.append(rec)
                h_last.append(h)
                c_last.append(c)
            layer_out = outs[0] if len(outs) == 1 else xp.concatenate(outs, axis=2)
            mask = None
            if octx.is_train and p.p > 0 and layer < p.num_layers - 1:
                keep = octx.rng.uniform(0, 1, layer_out.shape) >= p.p
                mask = keep.astype(layer_out.dtype) / layer_out.dtype.type(1 - p.p)
                layer_out = layer_out * mask
            per_layer.append((layer_in, records, mask))
            layer_in = layer_out
        if octx.is_train:   # keep the step caches for backward only when training
            octx.saved['rnn'] = (per_layer, valid)
        else:
            octx.saved.pop('rnn', None)
        results = [layer_in]
        if p.state_outputs:
            results.append(xp.stack(h_last))
            if c0 is not None:
                results.append(xp.stack(c_last))
        return results

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, p = octx.xp, self.p
        if 'rnn' not in octx.saved:     # forward ran in inference mode: recompute with caches
            train, octx.is_train = octx.is_train, True
            self.forward(octx, inputs, aux)
            octx.is_train = train
        per_layer, valid = octx.saved['rnn']
        valid = None if valid is None else valid.astype(inputs[0].dtype)
        lstm = p.mode == 'lstm'
        h0 = inputs[2]
        dhy = _grad_or_zeros(xp, out_grads, 1, h0) if p.state_outputs else xp.zeros_like(h0)
        dcy = None
        if lstm:
            dcy = (_grad_or_zeros(xp, out_grads, 2, inputs[3]) if p.state_outputs
                   else xp.zeros_like(inputs[3]))
        d_flat = xp.zeros_like(inputs[1])
        units = _unpack(inputs[1], p, self.directions, inputs[0].shape[2])
        gunits = _unpack(d_flat, p, self.directions, inputs[0].shape[2])
        dh0, dc0 = xp.zeros_like(h0), None if not lstm else xp.zeros_like(inputs[3])
        d_out = _grad_or_zeros(xp, out_grads, 0, outputs[0])
        width = self.hidden_out
        for layer in range(p.num_layers - 1, -1, -1):
            layer_in, records, mask = per_layer[layer]
            if mask is not None:
                d_out = d_out * mask
            d_in = None
            for d in range(self.directions):
                k = layer * self.directions + d
                dx, dh, dc = _back_direction(
                    xp, self.cell, units[k], gunits[k], layer_in,
                    d_out[:, :, d * width:(d + 1) * width], dhy[k],
                    None if dcy is None else dcy[k], records[d], d == 1, valid)
                d_in = dx if d_in is None else d_in + dx
                dh0[k] = dh
                if lstm:
                    dc0[k] = dc
            d_out = d_in
        grads = [d_out, d_flat, dh0] + ([dc0] if lstm else [])
        if p.use_sequence_length:
            grads.append(xp.zeros_like(inputs[-1]))
        return grads


def _grad_or_zeros(xp, grads, index, like):
    """Head gradient ``index`` or zeros shaped like ``like`` when absent."""
    if index < len(grads) and grads[index] is not None:
        return grads[index]
    return xp.zeros_like(like)
