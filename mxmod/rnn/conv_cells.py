"""Convolutional recurrent cells (ConvRNNCell, ConvLSTMCell, ConvGRUCell): the input-to-state and
state-to-state transforms are convolutions, states are feature maps."""
import functools

from .. import symbol
from ..base import MXNetError
from .base import BaseRNNCell

__all__ = ['BaseConvRNNCell', 'ConvRNNCell', 'ConvLSTMCell', 'ConvGRUCell']

_DEFAULT_ACTIVATION = functools.partial(symbol.LeakyReLU, act_type='leaky', slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """Abstract base of convolutional recurrent cells.

    Parameters
    ----------
    input_shape : tuple of int
        Shape of the input of one time step, e.g. (batch, channels, height, width).
    num_hidden : int
        Number of state channels.
    h2h_kernel, h2h_dilate : tuple of int
        State-to-state convolution (odd kernel; padded to keep the state's size).
    i2h_kernel, i2h_stride, i2h_pad, i2h_dilate : tuple of int
        Input-to-state convolution; it fixes the state's spatial size.
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer
        Initializers (or their names) stored on the weight variables.
    activation : str or callable
    prefix : str, default ''
    params : RNNParams, optional
    conv_layout : str, default 'NCHW'
    """

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride,
                 i2h_pad, i2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, activation, prefix='', params=None,
                 conv_layout='NCHW'):
        super().__init__(prefix=prefix, params=params)
        if any(k % 2 == 0 for k in h2h_kernel):
            raise ValueError('%s: h2h_kernel must be odd in every dimension, got %s'
                             % (type(self).__name__, tuple(h2h_kernel)))
        self._h2h_kernel = h2h_kernel
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(h2h_dilate, h2h_kernel))
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        self._state_shape = self._infer_state_shape()
        self._iW = self.params.get('i2h_weight', init=i2h_weight_initializer)
        self._hW = self.params.get('h2h_weight', init=h2h_weight_initializer)
        self._iB = self.params.get('i2h_bias', init=i2h_bias_initializer)
        self._hB = self.params.get('h2h_bias', init=h2h_bias_initializer)

    def _infer_state_shape(self):
        data = symbol.Variable('data')
        conv = symbol.Convolution(data=data, num_filter=self._num_hidden, kernel=self._i2h_kernel,
                                  stride=self._i2h_stride, pad=self._i2h_pad,
                                  dilate=self._i2h_dilate, layout=self._conv_layout)
        out_shape = conv.infer_shape(data=self._input_shape)[1][0]
        return (0,) + tuple(out_shape[1:])

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        info = {'shape': self._state_shape, '__layout__': self._conv_layout}
        return [dict(info) for _ in range(self._num_states)]

    _num_states = 2

    def _conv_forward(self, inputs, states, name):
        width = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name='%si2h' % name, data=inputs, num_filter=width,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate, weight=self._iW,
                                 bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name='%sh2h' % name, data=states[0], num_filter=width,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def _step_name(self):
        self._counter += 1
        return '%st%d_' % (self._prefix, self._counter)

    def __call__(self, inputs, states):
        raise MXNetError('BaseConvRNNCell is abstract: use ConvRNNCell, ConvLSTMCell or '
                         'ConvGRUCell')


class ConvRNNCell(BaseConvRNNCell):
    """Convolutional simple RNN cell: ``h' = activation(conv_i(x) + conv_h(h))``.

    Parameters are those of BaseConvRNNCell; ``prefix`` defaults to 'ConvRNN_' and
    ``activation`` to LeakyReLU(slope=0.2).
    """
    _num_states = 1

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_DEFAULT_ACTIVATION, prefix='ConvRNN_', params=None,
                 conv_layout='NCHW'):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride,
                         i2h_pad, i2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, activation, prefix=prefix,
                         params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ('',)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM cell (Shi et al., NIPS 2015); gates i, f, c, o along the channel axis,
    ``activation`` (default LeakyReLU(slope=0.2)) in place of tanh.

    Parameters are those of BaseConvRNNCell; ``prefix`` defaults to 'ConvLSTM_'.
    """
    _num_states = 2

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_DEFAULT_ACTIVATION, prefix='ConvLSTM_', params=None,
                 conv_layout='NCHW'):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride,
                         i2h_pad, i2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, activation, prefix=prefix,
                         params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, axis=self._conv_layout.find('C'),
                                    name='%sslice' % name)
        in_gate = symbol.Activation(gates[0], act_type='sigmoid', name='%si' % name)
        forget_gate = symbol.Activation(gates[1], act_type='sigmoid', name='%sf' % name)
        transform = self._get_activation(gates[2], self._activation, name='%sc' % name)
        out_gate = symbol.Activation(gates[3], act_type='sigmoid', name='%so' % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * transform,
                                        name='%sstate' % name)
        next_h = symbol._internal._mul(out_gate, self._get_activation(next_c, self._activation),
                                       name='%sout' % name)
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU cell; gates r, z, n along the channel axis, ``activation`` (default
    LeakyReLU(slope=0.2)) for the candidate state.

    Parameters are those of BaseConvRNNCell; ``prefix`` defaults to 'ConvGRU_'.
    """
    _num_states = 1

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_DEFAULT_ACTIVATION, prefix='ConvGRU_', params=None,
                 conv_layout='NCHW'):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride,
                         i2h_pad, i2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, activation, prefix=prefix,
                         params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        i2h_r, i2h_z, i2h_n = symbol.SliceChannel(i2h, num_outputs=3, name='%s_i2h_slice' % name)
        h2h_r, h2h_z, h2h_n = symbol.SliceChannel(h2h, num_outputs=3, name='%s_h2h_slice' % name)
        reset = symbol.Activation(i2h_r + h2h_r, act_type='sigmoid', name='%s_r_act' % name)
        update = symbol.Activation(i2h_z + h2h_z, act_type='sigmoid', name='%s_z_act' % name)
        candidate = self._get_activation(i2h_n + reset * h2h_n, self._activation,
                                         name='%s_h_act' % name)
        next_h = symbol._internal._plus((1. - update) * candidate, update * states[0],
                                        name='%sout' % name)
        return next_h, [next_h]
