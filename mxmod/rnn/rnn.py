"""Checkpoints of models built from RNN cells: weights are unpacked per gate before saving (so the
files are readable cell by cell) and packed again after loading."""
import warnings

from ..model import save_checkpoint, load_checkpoint
from .base import BaseRNNCell

__all__ = ['rnn_unroll', 'save_rnn_checkpoint', 'load_rnn_checkpoint', 'do_rnn_checkpoint']


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix='', layout='NTC'):
    """Deprecated: use ``cell.unroll``. ``input_prefix`` is ignored."""
    warnings.warn('rnn_unroll is deprecated. Please call cell.unroll directly.')
    del input_prefix
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)


def _as_cells(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """Save ``prefix-symbol.json`` and ``prefix-%04d.params`` with the cells' weights unpacked.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
        The cells used in ``symbol``.
    prefix : str
    epoch : int
    symbol : Symbol
    arg_params : dict of str to NDArray
    aux_params : dict of str to NDArray
    """
    for cell in _as_cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """Load a checkpoint written by ``save_rnn_checkpoint`` and pack the cells' weights again.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
    prefix : str
    epoch : int

    Returns
    -------
    symbol : Symbol
    arg_params : dict of str to NDArray
    aux_params : dict of str to NDArray
    """
    sym, arg, aux = load_checkpoint(prefix, epoch)
    for cell in _as_cells(cells):
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback that saves an RNN checkpoint every ``period`` epochs.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
    prefix : str
    period : int, default 1

    Returns
    -------
    callable
        ``callback(iter_no, sym, arg, aux)`` saving epoch ``iter_no + 1``.
    """
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
