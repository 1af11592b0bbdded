"""FusedRNN: initialize the single flat parameter vector of the fused ``RNN`` operator.

The vector holds, for each layer and direction ('l', then 'r' when bidirectional), the
input-to-hidden weights of every gate and then the hidden-to-hidden weights of every gate;
after all weights come the biases in the same order (i2h gates, then h2h gates). Each piece
is initialized as a separate named parameter (``l0_i2h_f_weight`` ...)."""
import numpy as np

from ..base import string_types
from ..ndarray import from_xp
from .base import Initializer, InitDesc, register, create

__all__ = ['FusedRNN', 'fused_rnn_pieces']

_GATES = {'rnn_relu': [''], 'rnn_tanh': [''], 'lstm': ['_i', '_f', '_c', '_o'],
          'gru': ['_r', '_z', '_o']}


def _gate_names(mode):
    if mode not in _GATES:
        raise ValueError('FusedRNN: mode must be one of %s, got %r' % (sorted(_GATES), mode))
    return _GATES[mode]


def fused_rnn_pieces(size, num_hidden, num_layers, mode, bidirectional=False):
    """Split a fused RNN parameter vector into named pieces.

    Parameters
    ----------
    size : int
        Number of elements of the flat parameter vector.
    num_hidden, num_layers : int
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}
    bidirectional : bool, default False

    Returns
    -------
    list of (str, int, tuple)
        ``(name, offset, shape)`` of every piece, in storage order.
    """
    gates = _gate_names(mode)
    dirs = ['l', 'r'] if bidirectional else ['l']
    b, m, h = len(dirs), len(gates), num_hidden
    num_input = size // b // h // m - (num_layers - 1) * (h + b * h + 2) - h - 2
    pieces, pos = [], 0
    for layer in range(num_layers):
        in_shape = (h, num_input) if layer == 0 else (h, b * h)
        for direction in dirs:
            for kind, shape in (('i2h', in_shape), ('h2h', (h, h))):
                for gate in gates:
                    pieces.append(('%s%d_%s%s_weight' % (direction, layer, kind, gate), pos, shape))
                    pos += shape[0] * shape[1]
    for layer in range(num_layers):
        for direction in dirs:
            for kind in ('i2h', 'h2h'):
                for gate in gates:
                    pieces.append(('%s%d_%s%s_bias' % (direction, layer, kind, gate), pos, (h,)))
                    pos += h
    if pos != size or num_input <= 0:
        raise ValueError('FusedRNN: a parameter vector of %d elements does not fit %d layer(s) of '
                         '%d hidden units in mode %r (bidirectional=%s)'
                         % (size, num_layers, num_hidden, mode, bidirectional))
    return pieces


@register
class FusedRNN(Initializer):
    """Initialize the parameters of a fused RNN layer piece by piece.

    Parameters
    ----------
    init : Initializer, str or None
        Initializer of the unpacked pieces (a ``dumps()`` string is accepted); None uses the
        global initializer of the InitDesc.
    num_hidden : int
    num_layers : int
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}
    bidirectional : bool, default False
    forget_bias : float, default 1.0
        Value of both forget-gate bias pieces (i2h and h2h) in 'lstm' mode.
    """

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False, forget_bias=1.0):
        if isinstance(init, string_types):
            init = create(init)
        _gate_names(mode)
        super(FusedRNN, self).__init__(init=init.dumps() if init is not None else None,
                                       num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                                       bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _init_weight(self, desc, arr):  # pylint: disable=arguments-renamed
        global_init = getattr(desc, 'global_init', None)
        if self._init is None and global_init is None:
            raise ValueError('FusedRNN(init=None) initializing %s needs an InitDesc with a '
                             'global_init to fall back to' % (desc,))
        flat = arr.context.xp.zeros(arr.size, dtype=arr.dtype)
        pieces = fused_rnn_pieces(arr.size, self._num_hidden, self._num_layers, self._mode,
                                  self._bidirectional)
        for name, pos, shape in pieces:
            piece = from_xp(flat[pos:pos + int(np.prod(shape))].reshape(shape), arr.context)
            if self._mode == 'lstm' and name.endswith('_f_bias'):
                piece[:] = self._forget_bias
            elif self._init is None:
                global_init(InitDesc(name, global_init=global_init), piece)
            else:
                self._init(InitDesc(name, global_init=global_init), piece)
        arr[:] = from_xp(flat.reshape(arr.shape), arr.context)
