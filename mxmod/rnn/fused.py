"""FusedRNNCell: a whole multi-layer (bidirectional) RNN/LSTM/GRU as one ``RNN`` operator over a
single flat parameter vector, with conversion to and from per-gate weights and to an equivalent
stack of steppable cells (``unfuse``)."""
import warnings

from .. import initializer
from .. import ndarray
from .. import symbol
from ..base import MXNetError
from ..initializer.fused_rnn import fused_rnn_pieces
from .base import BaseRNNCell, _normalize_sequence, _pop
from .cells import RNNCell, LSTMCell, GRUCell
from .stack import SequentialRNNCell, BidirectionalCell, DropoutCell

__all__ = ['FusedRNNCell']

_GATES = {'rnn_relu': [''], 'rnn_tanh': [''], 'lstm': ['_i', '_f', '_c', '_o'],
          'gru': ['_r', '_z', '_o']}


class FusedRNNCell(BaseRNNCell):
    """Several recurrent layers over all time steps in one fused ``RNN`` operator.

    Parameters
    ----------
    num_hidden : int
        Number of hidden units per layer and direction.
    num_layers : int, default 1
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}, default 'lstm'
    bidirectional : bool, default False
        Also run each layer backward in time; the output width doubles.
    dropout : float, default 0.
        Dropout between layers during training.
    get_next_state : bool, default False
        Return the final states (otherwise ``unroll`` returns an empty state list).
    forget_bias : float, default 1.0
        Initial forget-gate bias (LSTM), through the FusedRNN initializer.
    prefix : str, optional
        Defaults to ``'<mode>_'``.
    params : RNNParams, optional
    """

    def __init__(self, num_hidden, num_layers=1, mode='lstm', bidirectional=False,
                 dropout=0., get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if mode not in _GATES:
            raise ValueError('FusedRNNCell: mode must be one of %s, got %r' % (sorted(_GATES), mode))
        if prefix is None:
            prefix = '%s_' % mode
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ['l', 'r'] if bidirectional else ['l']
        init = initializer.FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get('parameters', init=init)

    @property
    def state_info(self):
        shape = ((self._bidirectional + 1) * self._num_layers, 0, self._num_hidden)
        return [{'shape': shape, '__layout__': 'LNC'}
                for _ in range((self._mode == 'lstm') + 1)]

    @property
    def _gate_names(self):
        return _GATES[self._mode]

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def _slice_weights(self, arr, li, lh):
        """Views of the flat vector ``arr`` named ``<prefix>l0_i2h_i_weight`` etc., for input
        size ``li`` and hidden size ``lh``."""
        total = self._param_size(li, lh)
        if arr.size != total:
            raise MXNetError('FusedRNNCell %r: parameter vector has %d elements, expected %d for '
                             'input size %d' % (self._prefix, arr.size, total, li))
        pieces = fused_rnn_pieces(total, lh, self._num_layers, self._mode, self._bidirectional)
        views = {}
        for name, pos, shape in pieces:
            count = shape[0] * (shape[1] if len(shape) > 1 else 1)
            views[self._prefix + name] = arr[pos:pos + count].reshape(shape)
        return views

    def _param_size(self, num_input, num_hidden):
        b, m, h = len(self._directions), self._num_gates, num_hidden
        return (num_input + h + 2) * h * m * b + (self._num_layers - 1) * m * h * (h + b * h + 2) * b

    def unpack_weights(self, args):
        args = dict(args)
        arr = _pop(args, self._parameter.name)
        b, m, h = len(self._directions), self._num_gates, self._num_hidden
        num_input = arr.size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2
        for name, view in self._slice_weights(arr, num_input, h).items():
            args[name] = view.copy()
        return args

    def pack_weights(self, args):
        args = dict(args)
        first_name = '%sl0_i2h%s_weight' % (self._prefix, self._gate_names[0])
        if first_name not in args:
            raise KeyError('parameter %r is missing; parameters given: %s'
                           % (first_name, sorted(args)))
        first = args[first_name]
        num_input = first.shape[1]
        total = self._param_size(num_input, self._num_hidden)
        arr = ndarray.zeros((total,), ctx=first.context, dtype=first.dtype)
        for name, view in self._slice_weights(arr, num_input, self._num_hidden).items():
            view[:] = _pop(args, name)
        args[self._parameter.name] = arr
        return args

    def __call__(self, inputs, states):
        raise MXNetError('FusedRNNCell cannot be stepped; use unroll() or unfuse() first')

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn('NTC layout detected. Consider using TNC for FusedRNNCell for faster '
                          'speed')
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise ValueError('FusedRNNCell: unsupported layout %r (time axis must be 0 or 1)'
                             % layout)
        if begin_state is None:
            begin_state = self.begin_state()
        states = {'state': begin_state[0]}
        if self._mode == 'lstm':
            states['state_cell'] = begin_state[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state, mode=self._mode,
                         name=self._prefix + 'rnn', **states)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            count = 2 if self._mode == 'lstm' else 1
            for k in range(1, count + 1):
                rnn[k]._set_attr(__layout__='LNC')
            outputs, states = rnn[0], [rnn[k] for k in range(1, count + 1)]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _make_layer_cell(self, prefix):
        if self._mode == 'rnn_relu':
            return RNNCell(self._num_hidden, activation='relu', prefix=prefix)
        if self._mode == 'rnn_tanh':
            return RNNCell(self._num_hidden, activation='tanh', prefix=prefix)
        if self._mode == 'lstm':
            return LSTMCell(self._num_hidden, prefix=prefix)
        return GRUCell(self._num_hidden, prefix=prefix)

    def unfuse(self):
        """An equivalent SequentialRNNCell of steppable cells (same parameter names once the
        fused vector is unpacked with ``unpack_weights``).

        Returns
        -------
        SequentialRNNCell
        """
        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(
                    self._make_layer_cell('%sl%d_' % (self._prefix, i)),
                    self._make_layer_cell('%sr%d_' % (self._prefix, i)),
                    output_prefix='%sbi_l%d_' % (self._prefix, i)))
            else:
                stack.add(self._make_layer_cell('%sl%d_' % (self._prefix, i)))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix='%s_dropout%d_' % (self._prefix, i)))
        return stack
