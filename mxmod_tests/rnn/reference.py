"""Numpy references of the recurrent cells (float64), one step and unrolled."""
import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def rnn_step(x, states, p, activation='tanh'):
    pre = x @ p['i2h_weight'].T + p['i2h_bias'] + states[0] @ p['h2h_weight'].T + p['h2h_bias']
    h = np.tanh(pre) if activation == 'tanh' else np.maximum(pre, 0)
    return h, [h]


def lstm_step(x, states, p):
    h, c = states
    pre = x @ p['i2h_weight'].T + p['i2h_bias'] + h @ p['h2h_weight'].T + p['h2h_bias']
    i, f, g, o = np.split(pre, 4, axis=1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h = sigmoid(o) * np.tanh(c)
    return h, [h, c]


def gru_step(x, states, p):
    h = states[0]
    gi = x @ p['i2h_weight'].T + p['i2h_bias']
    gh = h @ p['h2h_weight'].T + p['h2h_bias']
    ir, iz, i_n = np.split(gi, 3, axis=1)
    hr, hz, h_n = np.split(gh, 3, axis=1)
    r, z = sigmoid(ir + hr), sigmoid(iz + hz)
    n = np.tanh(i_n + r * h_n)
    h = (1 - z) * n + z * h
    return h, [h]


STEPS = {'rnn_tanh': rnn_step, 'rnn_relu': lambda x, s, p: rnn_step(x, s, p, 'relu'),
         'lstm': lstm_step, 'gru': gru_step}
NUM_STATES = {'rnn_tanh': 1, 'rnn_relu': 1, 'lstm': 2, 'gru': 1}


def unroll(mode, xs, params, states=None):
    """Run ``mode`` over the list of per-step inputs ``xs``; returns (outputs, states)."""
    hidden = params['h2h_weight'].shape[1]
    if states is None:
        states = [np.zeros((xs[0].shape[0], hidden))] * NUM_STATES[mode]
    outs = []
    for x in xs:
        out, states = STEPS[mode](x, states, params)
        outs.append(out)
    return outs, states


def stacked(mode, xs, layers, bidirectional):
    """Multi-layer (optionally bidirectional) recurrence; ``layers`` is a list of per-layer
    [forward params] or [forward params, backward params]. Returns per-step outputs."""
    for dirs in layers:
        fwd, _ = unroll(mode, xs, dirs[0])
        if bidirectional:
            bwd, _ = unroll(mode, xs[::-1], dirs[1])
            xs = [np.concatenate([f, b], axis=1) for f, b in zip(fwd, bwd[::-1])]
        else:
            xs = fwd
    return xs
