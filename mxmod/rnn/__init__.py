"""``mx.rnn``: symbolic recurrent cells (RNN, LSTM, GRU, fused, stacked, bidirectional, modifier
and convolutional), bucketed sentence iterators and RNN checkpoints, as in MXNet 1.9.1."""
from . import rnn_cell  # noqa: F401
from .rnn_cell import *  # noqa: F401,F403
from . import rnn  # noqa: F401
from .rnn import *  # noqa: F401,F403
from . import io  # noqa: F401
from .io import *  # noqa: F401,F403
