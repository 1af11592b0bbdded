"""``mx.gluon.rnn.rnn_cell``: every Gluon recurrent cell under the module name MXNet uses (the
classes live in base, cells, stack and modifiers)."""
from .base import RecurrentCell, HybridRecurrentCell
from .cells import RNNCell, LSTMCell, GRUCell
from .stack import SequentialRNNCell, HybridSequentialRNNCell, DropoutCell, BidirectionalCell
from .modifiers import ModifierCell, ZoneoutCell, ResidualCell

__all__ = ['RecurrentCell', 'HybridRecurrentCell', 'RNNCell', 'LSTMCell', 'GRUCell',
           'SequentialRNNCell', 'HybridSequentialRNNCell', 'DropoutCell', 'ModifierCell',
           'ZoneoutCell', 'ResidualCell', 'BidirectionalCell']
