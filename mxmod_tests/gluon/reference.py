"""Numpy references (float64) of Gluon's recurrent cells, one step and unrolled, with the
configurable activations of RNNCell and LSTMCell, and variable-length bidirectional runs."""
import numpy as np

ACTIVATIONS = {
    'tanh': np.tanh,
    'relu': lambda x: np.maximum(x, 0),
    'sigmoid': lambda x: 1.0 / (1.0 + np.exp(-x)),
    'softrelu': lambda x: np.log1p(np.exp(x)),
    'softsign': lambda x: x / (1.0 + np.abs(x)),
}


def _dense(x, h, p):
    return (x @ p['i2h_weight'].T + p['i2h_bias'], h @ p['h2h_weight'].T + p['h2h_bias'])


def rnn_step(x, states, p, activation='tanh'):
    i2h, h2h = _dense(x, states[0], p)
    h = ACTIVATIONS[activation](i2h + h2h)
    return h, [h]


def lstm_step(x, states, p, activation='tanh', recurrent_activation='sigmoid'):
    act, gate = ACTIVATIONS[activation], ACTIVATIONS[recurrent_activation]
    i2h, h2h = _dense(x, states[0], p)
    i, f, g, o = np.split(i2h + h2h, 4, axis=1)
    c = gate(f) * states[1] + gate(i) * act(g)
    h = gate(o) * act(c)
    return h, [h, c]


def gru_step(x, states, p):
    sigmoid = ACTIVATIONS['sigmoid']
    i2h, h2h = _dense(x, states[0], p)
    i_r, i_z, i_n = np.split(i2h, 3, axis=1)
    h_r, h_z, h_n = np.split(h2h, 3, axis=1)
    r, z = sigmoid(i_r + h_r), sigmoid(i_z + h_z)
    n = np.tanh(i_n + r * h_n)
    h = (1 - z) * n + z * states[0]
    return h, [h]


NUM_STATES = {rnn_step: 1, lstm_step: 2, gru_step: 1}


def unroll(step, xs, params, states=None, **kwargs):
    """Run ``step`` over the per-step inputs ``xs``; returns (outputs, final states)."""
    if states is None:
        hidden = params['h2h_weight'].shape[1]
        states = [np.zeros((xs[0].shape[0], hidden))] * NUM_STATES[step]
    outputs = []
    for x in xs:
        out, states = step(x, states, params, **kwargs)
        outputs.append(out)
    return outputs, states


def unroll_valid(step, xs, params, valid, **kwargs):
    """Unroll each batch row over its first ``valid[b]`` steps only: outputs past the valid length
    are zeros, states are those of the last valid step."""
    outputs = [np.zeros((x.shape[0], params['h2h_weight'].shape[1])) for x in xs]
    finals = None
    for b, length in enumerate(valid):
        outs, states = unroll(step, [x[b:b + 1] for x in xs[:length]], params, **kwargs)
        for t, out in enumerate(outs):
            outputs[t][b] = out[0]
        finals = [np.zeros((len(valid),) + s.shape[1:]) for s in states] if finals is None \
            else finals
        for final, state in zip(finals, states):
            final[b] = state[0]
    return outputs, finals


def bidirectional_valid(step, xs, l_params, r_params, valid):
    """Forward cell over each valid prefix, backward cell over it reversed; outputs concatenated
    on features and zero past the valid length."""
    fwd, _ = unroll_valid(step, xs, l_params, valid)
    bwd = [np.zeros_like(f) for f in fwd]
    for b, length in enumerate(valid):
        rev = [x[b:b + 1] for x in xs[:length]][::-1]
        outs, _ = unroll(step, rev, r_params)
        for t, out in enumerate(outs[::-1]):
            bwd[t][b] = out[0]
    return [np.concatenate([f, r], axis=1) for f, r in zip(fwd, bwd)]
