"""Modifier cells wrap a base cell and change what it computes: ZoneoutCell (randomly keep the
previous output/state) and ResidualCell (add the input to the output)."""
from .. import symbol
from ..base import MXNetError
from .base import BaseRNNCell, _check_not_modified, _normalize_sequence
from .fused import FusedRNNCell
from .stack import SequentialRNNCell, BidirectionalCell

__all__ = ['ModifierCell', 'ZoneoutCell', 'ResidualCell']


class ModifierCell(BaseRNNCell):
    """Base of cells that modify another cell. Once wrapped, the base cell must not be used
    directly; use the modifier cell.

    Parameters
    ----------
    base_cell : BaseRNNCell
    """

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):  # pylint: disable=arguments-renamed
        """The begin states of the base cell (see BaseRNNCell.begin_state)."""
        _check_not_modified(self)
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise MXNetError('%s does not define a step' % type(self).__name__)


def _zoneout_mask(prob, like):
    return symbol.Dropout(symbol.ones_like(like), p=prob)


class ZoneoutCell(ModifierCell):
    """Zoneout: during training each unit keeps its previous output (state) with probability
    ``zoneout_outputs`` (``zoneout_states``) instead of taking the new one.

    Parameters
    ----------
    base_cell : BaseRNNCell
        A steppable cell (not fused, not bidirectional).
    zoneout_outputs : float, default 0.
    zoneout_states : float, default 0.
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, FusedRNNCell):
            raise MXNetError('FusedRNNCell does not support zoneout: unfuse() it first')
        if isinstance(base_cell, BidirectionalCell):
            raise MXNetError('BidirectionalCell does not support zoneout (it cannot be stepped); '
                             'wrap the cells inside it instead')
        if isinstance(base_cell, SequentialRNNCell) and any(
                isinstance(c, BidirectionalCell) for c in base_cell._cells):
            raise MXNetError('a SequentialRNNCell holding a BidirectionalCell does not support '
                             'zoneout; wrap the cells inside it instead')
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)
        prev_output = self.prev_output if self.prev_output is not None else symbol.zeros((0, 0))
        output = next_output
        if self.zoneout_outputs != 0.:
            mask = _zoneout_mask(self.zoneout_outputs, next_output)
            output = symbol.where(mask, next_output, prev_output)
        if self.zoneout_states != 0.:
            next_states = [symbol.where(_zoneout_mask(self.zoneout_states, new), new, old)
                           for new, old in zip(next_states, states)]
        self.prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Adds the input of each step to the base cell's output (Wu et al., 2016).

    Parameters
    ----------
    base_cell : BaseRNNCell
        Its output width must equal its input width.
    """

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name='%s_plus_residual' % output.name)
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state,
                                                    layout=layout, merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, symbol.Symbol)
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs, name='%s_plus_residual' % outputs.name)
        else:
            outputs = [symbol.elemwise_add(out, inp, name='%s_plus_residual' % out.name)
                       for out, inp in zip(outputs, inputs)]
        return outputs, states
