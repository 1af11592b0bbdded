"""Cells made of other cells: SequentialRNNCell (layers stacked), BidirectionalCell (one cell
forward, one backward in time) and the stateless DropoutCell between layers."""
from .. import symbol
from ..base import MXNetError, numeric_types
from .base import (BaseRNNCell, _cells_state_info, _cells_begin_state, _cells_unpack_weights,
                   _cells_pack_weights, _check_not_modified, _normalize_sequence)

__all__ = ['SequentialRNNCell', 'BidirectionalCell', 'DropoutCell']


def _adopt_params(owner, cells):
    """Share variables between a container cell and its children (MXNet's rules)."""
    if owner._override_cell_params:
        for cell in cells:
            if not cell._own_params:
                raise MXNetError('%s was given params, and so was its child cell %r: specify '
                                 'params for the container or for the child cells, not both'
                                 % (type(owner).__name__, cell._prefix))
            cell.params._params.update(owner.params._params)
    for cell in cells:
        owner.params._params.update(cell.params._params)


class SequentialRNNCell(BaseRNNCell):
    """A stack of cells: the output of each is the input of the next.

    Parameters
    ----------
    params : RNNParams, optional
        Shared weights for every child cell; created when None.
    """

    def __init__(self, params=None):
        super().__init__(prefix='', params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Append ``cell`` on top of the stack.

        Parameters
        ----------
        cell : BaseRNNCell
        """
        self._cells.append(cell)
        _adopt_params(self, [cell])

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):  # pylint: disable=arguments-differ
        """The begin states of every child cell, in order (see BaseRNNCell.begin_state)."""
        _check_not_modified(self)
        return _cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        pos = 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise MXNetError('SequentialRNNCell containing a BidirectionalCell cannot be '
                                 'stepped; use unroll()')
            count = len(cell.state_info)
            inputs, state = cell(inputs, states[pos:pos + count])
            pos += count
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        if begin_state is None:
            begin_state = self.begin_state()
        pos = 0
        next_states = []
        last = len(self._cells) - 1
        for i, cell in enumerate(self._cells):
            count = len(cell.state_info)
            inputs, states = cell.unroll(length, inputs=inputs,
                                         begin_state=begin_state[pos:pos + count],
                                         layout=layout,
                                         merge_outputs=merge_outputs if i == last else None)
            pos += count
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout applied to the inputs; no state and no weights.

    Parameters
    ----------
    dropout : float
        Fraction of the inputs dropped during training.
    prefix : str, default 'dropout_'
    params : RNNParams, optional
    """

    def __init__(self, dropout, prefix='dropout_', params=None):
        super().__init__(prefix, params)
        if not isinstance(dropout, numeric_types):
            raise TypeError('DropoutCell: dropout must be a number, got %r' % (dropout,))
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class BidirectionalCell(BaseRNNCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward in time and concatenates their outputs
    along the feature axis.

    Parameters
    ----------
    l_cell : BaseRNNCell
        Cell unrolled over the sequence in order.
    r_cell : BaseRNNCell
        Cell unrolled over the reversed sequence.
    params : RNNParams, optional
        Shared weights for both cells; created when None.
    output_prefix : str, default 'bi_'
        Prefix of the output names (``<prefix>t<k>`` or ``<prefix>out``).
    """

    def __init__(self, l_cell, r_cell, params=None, output_prefix='bi_'):
        super().__init__('', params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        _adopt_params(self, [l_cell, r_cell])
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        raise MXNetError('BidirectionalCell cannot be stepped; use unroll()')

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):  # pylint: disable=arguments-differ
        """The begin states of the left then the right cell (see BaseRNNCell.begin_state)."""
        _check_not_modified(self)
        return _cells_begin_state(self._cells, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        l_cell, r_cell = self._cells
        split = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=begin_state[:split],
                                            layout=layout, merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=begin_state[split:],
                                            layout=layout, merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = (isinstance(l_outputs, symbol.Symbol)
                             and isinstance(r_outputs, symbol.Symbol))
            if not merge_outputs:
                l_outputs = _as_steps(l_outputs, axis, length)
                r_outputs = _as_steps(r_outputs, axis, length)
        if merge_outputs:
            l_outputs = [l_outputs]
            r_outputs = [symbol.reverse(r_outputs, axis=axis)]
        else:
            r_outputs = list(reversed(r_outputs))
        outputs = []
        for i, (left, right) in enumerate(zip(l_outputs, r_outputs)):
            name = ('%sout' % self._output_prefix if merge_outputs
                    else '%st%d' % (self._output_prefix, i))
            outputs.append(symbol.Concat(left, right, dim=1 + merge_outputs, name=name))
        if merge_outputs:
            outputs = outputs[0]
        return outputs, [l_states, r_states]


def _as_steps(outputs, axis, length):
    if isinstance(outputs, symbol.Symbol):
        return list(symbol.SliceChannel(outputs, axis=axis, num_outputs=length, squeeze_axis=1))
    return outputs
