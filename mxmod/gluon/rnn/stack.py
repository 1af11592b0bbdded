"""Gluon cells that combine other cells on Symbols: SequentialRNNCell and
HybridSequentialRNNCell (layers stacked), BidirectionalCell (one cell forward in time, one
backward) and DropoutCell (dropout between stacked layers)."""
from ... import symbol
from ...base import MXNetError, numeric_types
from ...symbol import Symbol
from .base import (HybridRecurrentCell, RecurrentCell, _cells_begin_state, _cells_state_info,
                   _check_not_modified, _check_symbolic, _format_sequence, _get_begin_state,
                   _mask_sequence_variable_length, _reverse_sequences)
from ..block import _indent

__all__ = ['SequentialRNNCell', 'HybridSequentialRNNCell', 'DropoutCell', 'BidirectionalCell']


class _StackMixin(object):
    """Stacking behaviour shared by SequentialRNNCell and HybridSequentialRNNCell."""

    def __repr__(self):
        body = '\n'.join('(%s): %s' % (key, _indent(repr(cell), 2))
                         for key, cell in self._children.items())
        return '%s(\n%s\n)' % (type(self).__name__, body)

    def add(self, cell):
        """Append ``cell`` on top of the stack.

        Parameters
        ----------
        cell : RecurrentCell
        """
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):  # pylint: disable=arguments-differ
        """The begin states of every layer, in order (arguments as ``RecurrentCell.begin_state``).

        Returns
        -------
        list of Symbol
        """
        _check_not_modified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def __call__(self, inputs, states):
        _check_symbolic(type(self).__name__, [inputs, states])
        self._counter += 1
        next_states = []
        pos = 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise MXNetError('%s holds a BidirectionalCell, which cannot be stepped: use '
                                 'unroll()' % type(self).__name__)
            count = len(cell.state_info())
            inputs, state = cell(inputs, states[pos:pos + count])
            pos += count
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Unroll every layer in turn (see ``RecurrentCell.unroll``); the states of all layers
        are returned in order."""
        self.reset()
        inputs, _, batch_size = _format_sequence(length, inputs, layout, None)
        begin_state = _get_begin_state(self, begin_state, batch_size)
        last = len(self._children) - 1
        pos = 0
        next_states = []
        for i, cell in enumerate(self._children.values()):
            count = len(cell.state_info())
            inputs, states = cell.unroll(length, inputs=inputs,
                                         begin_state=begin_state[pos:pos + count],
                                         layout=layout,
                                         merge_outputs=merge_outputs if i == last else None,
                                         valid_length=valid_length)
            pos += count
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_StackMixin, RecurrentCell):
    """A stack of recurrent cells: each layer's output is the next layer's input.

    Parameters
    ----------
    prefix : str, optional
        Name prefix; 'sequentialrnncell<k>_' when None. Cells created inside
        ``with stack.name_scope():`` are named under it.
    params : ParameterDict, optional
        Parameters to share.
    """


class HybridSequentialRNNCell(_StackMixin, HybridRecurrentCell):
    """A stack of hybrid recurrent cells (same behaviour as SequentialRNNCell on Symbols).

    Parameters
    ----------
    prefix : str, optional
        Name prefix; 'hybridsequentialrnncell<k>_' when None.
    params : ParameterDict, optional
        Parameters to share.
    """

    def hybrid_forward(self, F, inputs, states):  # pylint: disable=arguments-differ
        return self(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the input of each step; the states pass through unchanged.

    Parameters
    ----------
    rate : float
        Fraction of the elements dropped (1 - the fraction kept).
    axes : tuple of int, default ()
        Axes along which the dropout mask is shared (none: regular dropout).
    prefix : str, optional
        Name prefix; 'dropout<k>_' when None.
    params : ParameterDict, optional
        Unused (the cell has no Parameters).
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if not isinstance(rate, numeric_types):
            raise TypeError('DropoutCell rate must be a number, got %r' % (rate,))
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return '%s(rate=%s, axes=%s)' % (type(self).__name__, self._rate, self._axes)

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return 'dropout'

    def hybrid_forward(self, F, inputs, states):  # pylint: disable=arguments-differ
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name='t%d_fwd' % self._counter)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Dropout over the whole sequence at once when it is one Symbol, else per step
        (see ``RecurrentCell.unroll``)."""
        self.reset()
        inputs, _, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, Symbol):
            return self.hybrid_forward(symbol, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class BidirectionalCell(HybridRecurrentCell):
    """Two cells over the same sequence, ``l_cell`` forward and ``r_cell`` backward in time;
    their outputs are concatenated on the feature axis. It can only be unrolled.

    Parameters
    ----------
    l_cell : RecurrentCell
        Cell run forward in time.
    r_cell : RecurrentCell
        Cell run backward in time.
    output_prefix : str, default 'bi_'
        Prefix of the concatenated outputs' names.
    """

    def __init__(self, l_cell, r_cell, output_prefix='bi_'):
        super().__init__(prefix='', params=None)
        self.register_child(l_cell, 'l_cell')
        self.register_child(r_cell, 'r_cell')
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise MXNetError('BidirectionalCell cannot be stepped: use unroll()')

    def __repr__(self):
        return '%s(forward=%r, backward=%r)' % (type(self).__name__, self._children['l_cell'],
                                                self._children['r_cell'])

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):  # pylint: disable=arguments-differ
        """The begin states of the forward cell, then of the backward cell.

        Returns
        -------
        list of Symbol
        """
        _check_not_modified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Unroll both directions (see ``RecurrentCell.unroll``); the states are the forward
        cell's followed by the backward cell's."""
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = _reverse_sequences(inputs, length, valid_length)
        begin_state = _get_begin_state(self, begin_state, batch_size)
        l_cell, r_cell = self._children.values()
        split = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=begin_state[:split],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=begin_state[split:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        reversed_r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, Symbol)
            l_outputs, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _ = _format_sequence(None, reversed_r_outputs, layout,
                                                        merge_outputs)
        if merge_outputs:
            reversed_r_outputs = symbol.stack(*reversed_r_outputs, axis=axis)
            outputs = symbol.concat(l_outputs, reversed_r_outputs, dim=2,
                                    name='%sout' % self._output_prefix)
        else:
            outputs = [symbol.concat(l_o, r_o, dim=1, name='%st%d' % (self._output_prefix, i))
                       for i, (l_o, r_o) in enumerate(zip(l_outputs, reversed_r_outputs))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, l_states + r_states
