"""Gluon's three steppable cells on Symbols: RNNCell (Elman), LSTMCell and GRUCell. Each owns
i2h/h2h weights and biases (``<prefix>i2h_weight`` ...) and builds one step from two
FullyConnected layers, with MXNet 1.9.1's gate order and node names."""
from .base import HybridRecurrentCell

__all__ = ['RNNCell', 'LSTMCell', 'GRUCell']


class _DenseCell(HybridRecurrentCell):
    """Shared set-up: the four Parameters of a cell with ``gates`` gates and its repr."""

    def __init__(self, hidden_size, gates, initializers, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._num_gates = gates
        width = gates * hidden_size
        i2h_w, h2h_w, i2h_b, h2h_b = initializers
        self.i2h_weight = self.params.get('i2h_weight', shape=(width, input_size), init=i2h_w,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get('h2h_weight', shape=(width, hidden_size), init=h2h_w,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get('i2h_bias', shape=(width,), init=i2h_b,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get('h2h_bias', shape=(width,), init=h2h_b,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}]

    def _mapping(self):
        shape = self.i2h_weight.shape
        return '%s -> %s' % (shape[1] if shape[1] else None, shape[0])

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, self._mapping())

    def _dense(self, F, inputs, state, weights, prefix):  # pylint: disable=invalid-name
        i2h_weight, h2h_weight, i2h_bias, h2h_bias = weights
        width = self._num_gates * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias,
                               num_hidden=width, name=prefix + 'i2h')
        h2h = F.FullyConnected(data=state, weight=h2h_weight, bias=h2h_bias,
                               num_hidden=width, name=prefix + 'h2h')
        return i2h, h2h


class RNNCell(_DenseCell):
    r"""Elman recurrent cell: :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})`.

    Parameters
    ----------
    hidden_size : int
        Number of hidden units.
    activation : str or callable, default 'tanh'
        'tanh', 'relu', 'sigmoid', 'softsign', another ``Activation`` act_type, or a function
        ``f(symbol, name=...)``.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer, optional
        Initializers of the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers of the biases.
    input_size : int, default 0
        Number of input features (0: inferred from the data).
    prefix : str, optional
        Name prefix; 'rnn<k>_' when None.
    params : ParameterDict, optional
        Parameters to share.
    """

    def __init__(self, hidden_size, activation='tanh',
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, 1, (i2h_weight_initializer, h2h_weight_initializer,
                                          i2h_bias_initializer, h2h_bias_initializer),
                         input_size, prefix, params)
        self._activation = activation

    def _alias(self):
        return 'rnn'

    def __repr__(self):
        return '%s(%s, %s)' % (type(self).__name__, self._mapping(), self._activation)

    def hybrid_forward(self, F, inputs, states,  # pylint: disable=arguments-differ
                       i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = 't%d_' % self._counter
        i2h, h2h = self._dense(F, inputs, states[0],
                               (i2h_weight, h2h_weight, i2h_bias, h2h_bias), prefix)
        summed = F.elemwise_add(i2h, h2h, name=prefix + 'plus0')
        output = self._get_activation(F, summed, self._activation, name=prefix + 'out')
        return output, [output]


class LSTMCell(_DenseCell):
    r"""Long short-term memory cell; gates in the order input, forget, cell, output:
    :math:`c_t = f_t c_{t-1} + i_t g_t`, :math:`h_t = o_t \tanh(c_t)` (the final tanh is
    ``activation``); states ``[h, c]``.

    Parameters
    ----------
    hidden_size : int
        Number of hidden units.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer, optional
        Initializers of the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers of the biases.
    input_size : int, default 0
        Number of input features (0: inferred from the data).
    prefix : str, optional
        Name prefix; 'lstm<k>_' when None.
    params : ParameterDict, optional
        Parameters to share.
    activation : str or callable, default 'tanh'
        Activation of the cell candidate and of the cell state.
    recurrent_activation : str or callable, default 'sigmoid'
        Activation of the input, forget and output gates.
    """

    def __init__(self, hidden_size,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 input_size=0, prefix=None, params=None, activation='tanh',
                 recurrent_activation='sigmoid'):
        super().__init__(hidden_size, 4, (i2h_weight_initializer, h2h_weight_initializer,
                                          i2h_bias_initializer, h2h_bias_initializer),
                         input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._hidden_size), '__layout__': 'NC'},
                {'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}]

    def _alias(self):
        return 'lstm'

    def hybrid_forward(self, F, inputs, states,  # pylint: disable=arguments-differ
                       i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = 't%d_' % self._counter
        i2h, h2h = self._dense(F, inputs, states[0],
                               (i2h_weight, h2h_weight, i2h_bias, h2h_bias), prefix)
        gates = F.SliceChannel(F.elemwise_add(i2h, h2h, name=prefix + 'plus0'),
                               num_outputs=4, name=prefix + 'slice')
        gate_act, cell_act = self._recurrent_activation, self._activation
        in_gate = self._get_activation(F, gates[0], gate_act, name=prefix + 'i')
        forget_gate = self._get_activation(F, gates[1], gate_act, name=prefix + 'f')
        candidate = self._get_activation(F, gates[2], cell_act, name=prefix + 'c')
        out_gate = self._get_activation(F, gates[3], gate_act, name=prefix + 'o')
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + 'mul0'),
                                F.elemwise_mul(in_gate, candidate, name=prefix + 'mul1'),
                                name=prefix + 'state')
        squashed = F.Activation(next_c, act_type=cell_act, name=prefix + 'activation0')
        next_h = F.elemwise_mul(out_gate, squashed, name=prefix + 'out')
        return next_h, [next_h, next_c]


class GRUCell(_DenseCell):
    r"""Gated recurrent unit as cuDNN computes it (the reset gate applies after the recurrent
    product): :math:`n_t = \tanh(W_{in} x_t + b_{in} + r_t (W_{hn} h_{t-1} + b_{hn}))`,
    :math:`h_t = (1 - z_t) n_t + z_t h_{t-1}`; gates in the order reset, update, new.

    Parameters
    ----------
    hidden_size : int
        Number of hidden units.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer, optional
        Initializers of the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers of the biases.
    input_size : int, default 0
        Number of input features (0: inferred from the data).
    prefix : str, optional
        Name prefix; 'gru<k>_' when None.
    params : ParameterDict, optional
        Parameters to share.
    """

    def __init__(self, hidden_size,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, 3, (i2h_weight_initializer, h2h_weight_initializer,
                                          i2h_bias_initializer, h2h_bias_initializer),
                         input_size, prefix, params)

    def _alias(self):
        return 'gru'

    def hybrid_forward(self, F, inputs, states,  # pylint: disable=arguments-differ
                       i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = 't%d_' % self._counter
        prev_h = states[0]
        i2h, h2h = self._dense(F, inputs, prev_h,
                               (i2h_weight, h2h_weight, i2h_bias, h2h_bias), prefix)
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3, name=prefix + 'i2h_slice')
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3, name=prefix + 'h2h_slice')
        reset = F.Activation(F.elemwise_add(i2h_r, h2h_r, name=prefix + 'plus0'),
                             act_type='sigmoid', name=prefix + 'r_act')
        update = F.Activation(F.elemwise_add(i2h_z, h2h_z, name=prefix + 'plus1'),
                              act_type='sigmoid', name=prefix + 'z_act')
        candidate = F.Activation(
            F.elemwise_add(i2h_n, F.elemwise_mul(reset, h2h_n, name=prefix + 'mul0'),
                           name=prefix + 'plus2'),
            act_type='tanh', name=prefix + 'h_act')
        ones = F.ones_like(update, name=prefix + 'ones_like0')
        keep_new = F.elemwise_mul(F.elemwise_sub(ones, update, name=prefix + 'minus0'),
                                  candidate, name=prefix + 'mul1')
        next_h = F.elemwise_add(keep_new, F.elemwise_mul(update, prev_h, name=prefix + 'mul20'),
                                name=prefix + 'out')
        return next_h, [next_h]
