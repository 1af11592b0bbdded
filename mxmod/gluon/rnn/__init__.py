"""``mx.gluon.rnn``: Gluon's recurrent cells, for symbolic use (call them on mx.sym Symbols, then
bind the graph or train it with mx.mod.Module). The fused layers (rnn.RNN, rnn.LSTM, rnn.GRU)
and imperative NDArray use are outside mxmod's scope."""
from . import rnn_cell  # noqa: F401
from .rnn_cell import *  # noqa: F401,F403
from .rnn_cell import __all__ as _CELLS
from ...out_of_scope import out_of_scope_error as _out_of_scope_error

__all__ = list(_CELLS)

COVERED = 'the recurrent cells (%s), used on Symbols' % ', '.join(_CELLS)


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise _out_of_scope_error('mxmod.gluon.rnn', name, COVERED)
