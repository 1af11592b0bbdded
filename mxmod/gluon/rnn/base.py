"""Gluon's recurrent-cell protocol on Symbols: RecurrentCell (begin states, unroll over time,
variable-length masking), HybridRecurrentCell (one step built by ``hybrid_forward(F=mx.sym, ...)``
inside the cell's name scope) and the helpers that split, stack and reverse sequences."""
from ... import symbol
from ...base import string_types
from ...ndarray import NDArray
from ...symbol import Symbol
from ..block import Block
from ..hybrid_block import HybridBlock
from ..parameter import symbolic_only_error

__all__ = ['RecurrentCell', 'HybridRecurrentCell']


def _cells_state_info(cells, batch_size):
    return [info for cell in cells for info in cell.state_info(batch_size)]


def _cells_begin_state(cells, **kwargs):
    return [state for cell in cells for state in cell.begin_state(**kwargs)]


def _contains(args, kind):
    if isinstance(args, kind):
        return True
    if isinstance(args, (list, tuple)):
        return any(_contains(arg, kind) for arg in args)
    return False


def _check_symbolic(what, args):
    """Raise unless ``args`` (nested lists) hold Symbols and no NDArray."""
    if _contains(args, NDArray):
        raise symbolic_only_error('%s called on NDArrays' % what)
    if not _contains(args, Symbol):
        raise ValueError('%s expects Symbol inputs (a Symbol or a list of Symbols), got %r'
                         % (what, args))


def _check_not_modified(cell):
    if cell._modified:
        raise ValueError('%s (prefix %r) is wrapped by a modifier cell (e.g. ZoneoutCell, '
                         'ResidualCell): call the modifier cell instead of the base cell'
                         % (type(cell).__name__, cell.prefix))


def _get_begin_state(cell, begin_state, batch_size):
    if begin_state is None:
        begin_state = cell.begin_state(func=symbol.zeros, batch_size=batch_size)
    return begin_state


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """Bring ``inputs`` to one Symbol stacked on the time axis (``merge`` True), a list of
    per-step Symbols (``merge`` False), or leave it as given (``merge`` None).

    Returns ``(inputs, time_axis, batch_size)``; the batch size is 0 (unknown) for Symbols.
    """
    if inputs is None:
        raise ValueError('unroll(inputs=None) is no longer supported: create the input '
                         'variables outside unroll and pass them in')
    axis = layout.find('T')
    in_axis = in_layout.find('T') if in_layout is not None else axis
    _check_symbolic('unroll', inputs)
    if isinstance(inputs, Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ValueError('unroll takes a single-output Symbol or a list of Symbols, got '
                                 'a group of %d outputs: pass list(inputs) to unroll instead'
                                 % len(inputs.list_outputs()))
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise ValueError('unroll: length is %d but %d input Symbols were given'
                             % (length, len(inputs)))
        if merge is True:
            inputs = symbol.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, 0


def _mask_sequence_variable_length(data, length, valid_length, time_axis, merge):
    """Zero the steps past each sequence's ``valid_length``; a merged Symbol or a list back."""
    if not isinstance(data, Symbol):
        data = symbol.stack(*data, axis=time_axis)
    outputs = symbol.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                                  axis=time_axis)
    if not merge:
        outputs = list(symbol.split(outputs, num_outputs=length, axis=time_axis,
                                    squeeze_axis=True))
    return outputs


def _reverse_sequences(sequences, unroll_step, valid_length=None):
    """The list of per-step Symbols reversed in time (each sequence within its valid length)."""
    if valid_length is None:
        return list(reversed(sequences))
    reverse = symbol.SequenceReverse(symbol.stack(*sequences, axis=0),
                                     sequence_length=valid_length, use_sequence_length=True)
    return list(symbol.split(reverse, axis=0, num_outputs=unroll_step, squeeze_axis=True))


class RecurrentCell(Block):
    """Abstract base of Gluon recurrent cells, used on Symbols: one step is
    ``cell(inputs, states)``, a sequence is ``cell.unroll(length, inputs)``.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the cell's symbol names and (when ``params`` is None) its Parameter names.
    params : ParameterDict, optional
        Parameters shared with another cell; new ones are created when None.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step and begin-state counters (and the children's) before a new graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """The shape and ``__layout__`` of each state.

        Parameters
        ----------
        batch_size : int, default 0
            Batch dimension of the shapes (0: inferred later).

        Returns
        -------
        list of dict
        """
        raise NotImplementedError('%s does not define state_info()' % type(self).__name__)

    def begin_state(self, batch_size=0, func=symbol.zeros, **kwargs):
        """Symbols for the states before the first step.

        Parameters
        ----------
        batch_size : int, default 0
            Batch dimension of the state shapes (0: inferred when the graph is bound).
        func : callable, default mx.sym.zeros
            Called as ``func(name=..., shape=..., __layout__=..., **kwargs)`` per state, e.g.
            ``mx.sym.zeros``, ``mx.sym.uniform`` or ``mx.sym.var`` (to feed states as inputs).
        **kwargs
            Further arguments of ``func`` (``dtype``, ``low``, ...).

        Returns
        -------
        list of Symbol
            Named ``<prefix>begin_state_<k>``.
        """
        _check_not_modified(self)
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info or {}, **kwargs)
            state = func(name='%sbegin_state_%d' % (self._prefix, self._init_counter), **info)
            if isinstance(state, NDArray):
                raise symbolic_only_error('%s.begin_state(func=%s)'
                                          % (type(self).__name__, getattr(func, '__name__', func)))
            states.append(state)
        return states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Unroll the cell over ``length`` time steps.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : Symbol or list of Symbol
            One Symbol of shape (batch, length, ...) for layout 'NTC' or (length, batch, ...)
            for 'TNC', or a list of ``length`` Symbols of shape (batch, ...).
        begin_state : list of Symbol, optional
            Initial states; ``begin_state()`` (zeros) when None.
        layout : str, default 'NTC'
            Layout of ``inputs`` and of merged outputs.
        merge_outputs : bool, optional
            True: one Symbol stacked on the time axis; False: a list of per-step Symbols;
            None: whichever the cell produces.
        valid_length : Symbol, optional
            Shape (batch,): the length of each sequence. Outputs past it are zeros and the
            returned states are those of each sequence's last valid step.

        Returns
        -------
        outputs : Symbol or list of Symbol
        states : list of Symbol
        """
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, begin_state, batch_size)
        outputs, all_states = [], []
        for step in range(length):
            output, states = self(inputs[step], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [symbol.SequenceLast(symbol.stack(*per_step, axis=0),
                                          sequence_length=valid_length,
                                          use_sequence_length=True, axis=0)
                      for per_step in zip(*all_states)]
            outputs = _mask_sequence_variable_length(outputs, length, valid_length, axis, True)
        outputs, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):  # pylint: disable=invalid-name
        """Apply ``activation``: 'tanh', 'relu', 'sigmoid' and 'softsign' as their own operators,
        another string through ``Activation(act_type=...)``, else call it."""
        func = {'tanh': F.tanh, 'relu': F.relu, 'sigmoid': F.sigmoid,
                'softsign': F.softsign}.get(activation) \
            if isinstance(activation, string_types) else None
        if func is not None:
            return func(inputs, **kwargs)
        if isinstance(activation, string_types):
            return F.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One time step (the counter that names the step's symbols advances).

        Parameters
        ----------
        inputs : Symbol
            Input of this step, shape (batch, features).
        states : list of Symbol
            States from the previous step or from ``begin_state()``.

        Returns
        -------
        output : Symbol
        states : list of Symbol
        """
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell whose step is ``hybrid_forward(F, inputs, states, **params)``, a
    HybridBlock: on Symbols (``F = mx.sym``, each registered Parameter passed as its variable)
    the step's symbols are named inside the cell's name scope (``<prefix>t<step>_...``); on
    NDArrays (``F = mx.nd``, the Parameters' values) one step is computed, as in the body of
    ``mx.nd.contrib.foreach``; as the child of a hybridized block it joins that block's graph.
    Unrolling and begin states stay symbolic."""

    def forward(self, inputs, states):
        """One time step through ``hybrid_forward``.

        Parameters
        ----------
        inputs : Symbol or NDArray
        states : list of Symbol or of NDArray

        Returns
        -------
        output : Symbol or NDArray
        states : list of Symbol or of NDArray
        """
        if not _contains([inputs, states], NDArray):
            _check_symbolic(type(self).__name__, [inputs, states])
        self._counter += 1
        return HybridBlock.forward(self, inputs, states)

    def hybrid_forward(self, F, inputs, states, **kwargs):  # pylint: disable=invalid-name
        """The symbols of one step; defined by subclasses."""
        raise NotImplementedError('%s does not define hybrid_forward()' % type(self).__name__)
