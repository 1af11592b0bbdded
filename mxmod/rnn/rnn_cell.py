"""``mx.rnn.rnn_cell``: every recurrent cell under the module name MXNet uses (the classes live in
base, cells, stack, fused, modifiers and conv_cells)."""
from .base import (RNNParams, BaseRNNCell, _normalize_sequence,  # noqa: F401
                   _cells_state_info, _cells_state_shape, _cells_begin_state,
                   _cells_unpack_weights, _cells_pack_weights)
from .cells import RNNCell, LSTMCell, GRUCell
from .stack import SequentialRNNCell, BidirectionalCell, DropoutCell
from .fused import FusedRNNCell
from .modifiers import ModifierCell, ZoneoutCell, ResidualCell
from .conv_cells import BaseConvRNNCell, ConvRNNCell, ConvLSTMCell, ConvGRUCell

__all__ = ['RNNParams', 'BaseRNNCell', 'RNNCell', 'LSTMCell', 'GRUCell', 'FusedRNNCell',
           'SequentialRNNCell', 'DropoutCell', 'ModifierCell', 'ZoneoutCell', 'ResidualCell',
           'BidirectionalCell', 'BaseConvRNNCell', 'ConvRNNCell', 'ConvLSTMCell', 'ConvGRUCell']
