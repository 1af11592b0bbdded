"""Gluon's modifier cells on Symbols: a ModifierCell wraps a base cell (which must then only be
used through the wrapper): ZoneoutCell (randomly keeps previous outputs/states) and ResidualCell
(adds the input to the output)."""
from ... import symbol
from ...base import MXNetError
from ...symbol import Symbol
from .base import HybridRecurrentCell, _check_not_modified, _format_sequence, \
    _mask_sequence_variable_length
from .stack import BidirectionalCell

__all__ = ['ModifierCell', 'ZoneoutCell', 'ResidualCell']


class ModifierCell(HybridRecurrentCell):
    """Base of cells that modify another cell; the wrapper is named ``<base prefix><alias>``
    and shares the base cell's Parameters.

    Parameters
    ----------
    base_cell : RecurrentCell
        The cell to modify; it must not be modified already.
    """

    def __init__(self, base_cell):
        if base_cell._modified:
            raise MXNetError('cell %s is already modified: one cell cannot be modified twice'
                             % base_cell.name)
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        """The base cell's ParameterDict."""
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=symbol.zeros, **kwargs):  # pylint: disable=arguments-differ
        """The base cell's begin states (arguments as ``RecurrentCell.begin_state``).

        Returns
        -------
        list of Symbol
        """
        _check_not_modified(self)
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def __repr__(self):
        return '%s(%r)' % (type(self).__name__, self.base_cell)


class ZoneoutCell(ModifierCell):
    """Zoneout: during training each output and state element keeps its previous value with
    probability ``zoneout_outputs`` / ``zoneout_states`` (a Dropout mask chooses).

    Parameters
    ----------
    base_cell : RecurrentCell
        The cell to modify (not a BidirectionalCell).
    zoneout_outputs : float, default 0
        Probability of keeping the previous output.
    zoneout_states : float, default 0
        Probability of keeping the previous state.
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, BidirectionalCell):
            raise MXNetError('BidirectionalCell does not support zoneout since it cannot be '
                             'stepped: wrap the cells inside it in ZoneoutCell instead')
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return '%s(p_out=%s, p_state=%s, %r)' % (type(self).__name__, self.zoneout_outputs,
                                                 self.zoneout_states, self.base_cell)

    def _alias(self):
        return 'zoneout'

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):  # pylint: disable=arguments-differ
        p_outputs, p_states = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def mask(prob, like):
            return F.Dropout(F.ones_like(like), p=prob)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        output = next_output
        if p_outputs != 0.:
            output = F.where(mask(p_outputs, next_output), next_output, prev_output)
        if p_states != 0.:
            next_states = [F.where(mask(p_states, new), new, old)
                           for new, old in zip(next_states, states)]
        self._prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Residual connection (Wu et al., 2016): the output is the base cell's output plus the
    input.

    Parameters
    ----------
    base_cell : RecurrentCell
        The cell to modify; its output size must equal its input size.
    """

    def hybrid_forward(self, F, inputs, states):  # pylint: disable=arguments-differ
        output, states = self.base_cell(inputs, states)
        output = F.elemwise_add(output, inputs, name='t%d_fwd' % self._counter)
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Unroll the base cell and add the inputs to its outputs (see
        ``RecurrentCell.unroll``)."""
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, Symbol)
        inputs, axis, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(inputs, length, valid_length, axis,
                                                    merge_outputs)
        if merge_outputs:
            return symbol.elemwise_add(outputs, inputs), states
        return [symbol.elemwise_add(out, inp) for out, inp in zip(outputs, inputs)], states
