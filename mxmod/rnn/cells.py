"""The three steppable recurrent cells: RNNCell (Elman), LSTMCell and GRUCell, each built from two
FullyConnected layers (input-to-hidden and hidden-to-hidden) per step."""
from .. import initializer
from .. import symbol
from .base import BaseRNNCell

__all__ = ['RNNCell', 'LSTMCell', 'GRUCell']


def _nc_state(num_hidden):
    return {'shape': (0, num_hidden), '__layout__': 'NC'}


class _DenseCell(BaseRNNCell):
    """Shared set-up: i2h/h2h weight and bias variables and the two FullyConnected layers."""

    def __init__(self, num_hidden, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._make_params()

    def _make_params(self):
        self._iW = self.params.get('i2h_weight')
        self._iB = self.params.get('i2h_bias')
        self._hW = self.params.get('h2h_weight')
        self._hB = self.params.get('h2h_bias')

    def _step_name(self):
        self._counter += 1
        return '%st%d_' % (self._prefix, self._counter)

    def _dense(self, inputs, state, name, i2h_name, h2h_name):
        width = self._num_hidden * max(1, len(self._gate_names))
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=width, name=name + i2h_name)
        h2h = symbol.FullyConnected(data=state, weight=self._hW, bias=self._hB,
                                    num_hidden=width, name=name + h2h_name)
        return i2h, h2h


class RNNCell(_DenseCell):
    """Simple recurrent cell: ``h' = activation(W_i x + b_i + W_h h + b_h)``.

    Parameters
    ----------
    num_hidden : int
        Number of hidden units.
    activation : str or callable, default 'tanh'
        Activation type (e.g. 'tanh', 'relu') or a function ``f(symbol, name=...)``.
    prefix : str, default 'rnn_'
        Prefix of layer and weight names.
    params : RNNParams, optional
        Shared weights; created when None.
    """

    def __init__(self, num_hidden, activation='tanh', prefix='rnn_', params=None):
        super().__init__(num_hidden, prefix, params)
        self._activation = activation

    @property
    def state_info(self):
        return [_nc_state(self._num_hidden)]

    @property
    def _gate_names(self):
        return ('',)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._dense(inputs, states[0], name, 'i2h', 'h2h')
        output = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return output, [output]


class LSTMCell(_DenseCell):
    """Long short-term memory cell; gates along the 4*num_hidden axis in the order input,
    forget, transform (tanh), output; states ``[h, c]``.

    Parameters
    ----------
    num_hidden : int
        Number of hidden units.
    prefix : str, default 'lstm_'
        Prefix of layer and weight names.
    params : RNNParams, optional
        Shared weights; created when None.
    forget_bias : float, default 1.0
        Initial value of the forget-gate part of ``i2h_bias`` (through the LSTMBias initializer).
    """

    def __init__(self, num_hidden, prefix='lstm_', params=None, forget_bias=1.0):
        self._forget_bias = forget_bias
        super().__init__(num_hidden, prefix, params)

    def _make_params(self):
        # MXNet creates these in this order; the i2h bias carries the forget-gate offset
        self._iW = self.params.get('i2h_weight')
        self._hW = self.params.get('h2h_weight')
        self._iB = self.params.get('i2h_bias',
                                   init=initializer.LSTMBias(forget_bias=self._forget_bias))
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [_nc_state(self._num_hidden), _nc_state(self._num_hidden)]

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._dense(inputs, states[0], name, 'i2h', 'h2h')
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name='%sslice' % name)
        in_gate = symbol.Activation(gates[0], act_type='sigmoid', name='%si' % name)
        forget_gate = symbol.Activation(gates[1], act_type='sigmoid', name='%sf' % name)
        transform = symbol.Activation(gates[2], act_type='tanh', name='%sc' % name)
        out_gate = symbol.Activation(gates[3], act_type='sigmoid', name='%so' % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * transform,
                                        name='%sstate' % name)
        next_h = symbol._internal._mul(out_gate, symbol.Activation(next_c, act_type='tanh'),
                                       name='%sout' % name)
        return next_h, [next_h, next_c]


class GRUCell(_DenseCell):
    """Gated recurrent unit as cuDNN computes it: reset gate r, update gate z,
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``.

    Parameters
    ----------
    num_hidden : int
        Number of hidden units.
    prefix : str, default 'gru_'
        Prefix of layer and weight names.
    params : RNNParams, optional
        Shared weights; created when None.
    """

    def __init__(self, num_hidden, prefix='gru_', params=None):
        super().__init__(num_hidden, prefix, params)

    @property
    def state_info(self):
        return [_nc_state(self._num_hidden)]

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def __call__(self, inputs, states):
        name = self._step_name()
        prev_h = states[0]
        i2h, h2h = self._dense(inputs, prev_h, name, '_i2h', '_h2h')
        i2h_r, i2h_z, i2h_n = symbol.SliceChannel(i2h, num_outputs=3, name='%s_i2h_slice' % name)
        h2h_r, h2h_z, h2h_n = symbol.SliceChannel(h2h, num_outputs=3, name='%s_h2h_slice' % name)
        reset = symbol.Activation(i2h_r + h2h_r, act_type='sigmoid', name='%s_r_act' % name)
        update = symbol.Activation(i2h_z + h2h_z, act_type='sigmoid', name='%s_z_act' % name)
        candidate = symbol.Activation(i2h_n + reset * h2h_n, act_type='tanh',
                                      name='%s_h_act' % name)
        next_h = symbol._internal._plus((1. - update) * candidate, update * prev_h,
                                        name='%sout' % name)
        return next_h, [next_h]
