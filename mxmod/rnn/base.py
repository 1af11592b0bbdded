"""The cell protocol of ``mx.rnn``: RNNParams (shared variables), BaseRNNCell (begin states, unroll,
weight packing per gate) and the helpers that split or stack a sequence along its time axis."""
from .. import ndarray
from .. import symbol
from ..base import MXNetError, string_types

__all__ = ['RNNParams', 'BaseRNNCell']


def _cells_state_info(cells):
    return [info for cell in cells for info in cell.state_info]


def _cells_state_shape(cells):
    return [shape for cell in cells for shape in cell.state_shape]


def _cells_begin_state(cells, **kwargs):
    return [state for cell in cells for state in cell.begin_state(**kwargs)]


def _cells_unpack_weights(cells, args):
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def _cells_pack_weights(cells, args):
    for cell in cells:
        args = cell.pack_weights(args)
    return args


def _check_not_modified(cell):
    if cell._modified:
        raise MXNetError('%s (prefix %r) is wrapped by a modifier cell (e.g. ZoneoutCell, '
                         'ResidualCell): use the modifier cell instead of the base cell'
                         % (type(cell).__name__, cell._prefix))


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """Bring ``inputs`` to one merged symbol (``merge`` True), a list of per-step symbols
    (``merge`` False) or leave it as it is (``merge`` None).

    Returns ``(inputs, axis)`` where ``axis`` is the time axis of ``layout``.
    """
    if inputs is None:
        raise ValueError('unroll(inputs=None) is no longer supported: create the input '
                         'variables outside unroll and pass them in')
    axis = layout.find('T')
    in_axis = in_layout.find('T') if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ValueError('unroll takes a single-output symbol or a list of symbols, got a '
                                 'group of %d outputs: pass list(inputs) instead'
                                 % len(inputs.list_outputs()))
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise ValueError('unroll: length is %d but %d input symbols were given'
                             % (length, len(inputs)))
        if merge is True:
            steps = [symbol.expand_dims(step, axis=axis) for step in inputs]
            inputs = symbol.Concat(*steps, dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class RNNParams(object):
    """A container of the variables of one or several cells, for sharing weights.

    Parameters
    ----------
    prefix : str
        Prepended to the name of every variable created by this container.
    """

    def __init__(self, prefix=''):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, created (with ``kwargs`` for ``Variable``) on first use.

        Parameters
        ----------
        name : str
            Name of the variable without the prefix.
        **kwargs
            Passed to ``mx.sym.Variable`` when the variable is created (e.g. ``init``).

        Returns
        -------
        Symbol
        """
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell(object):
    """Abstract base of recurrent cells: one step is ``cell(inputs, states)``.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the names of the cell's layers and (when ``params`` is None) its weights.
    params : RNNParams, optional
        Container of shared weights; a new one with ``prefix`` is created when None.
    """

    def __init__(self, prefix='', params=None):
        self._own_params = params is None
        if params is None:
            params = RNNParams(prefix)
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step and begin-state counters before building another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, '_cells', ()):
            cell.reset()

    def __call__(self, inputs, states):
        """One time step.

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
        raise MXNetError('%s cannot be stepped: it defines no single-step computation; '
                         'use unroll()' % type(self).__name__)

    @property
    def params(self):
        """The RNNParams of this cell (once read, they are no longer considered its own)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """List of dicts with the ``shape`` and ``__layout__`` of each state."""
        raise MXNetError('%s does not define state_info' % type(self).__name__)

    @property
    def state_shape(self):
        """The shape of each state (0 marks the batch size, inferred later)."""
        return [info['shape'] for info in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def begin_state(self, func=symbol.zeros, **kwargs):
        """Symbols for the states before the first step.

        Parameters
        ----------
        func : callable, default mx.sym.zeros
            Called as ``func(name=..., shape=..., __layout__=..., **kwargs)`` per state, e.g.
            ``mx.sym.zeros``, ``mx.sym.uniform`` or ``mx.sym.Variable``.
        **kwargs
            Further arguments of ``func``.

        Returns
        -------
        list of Symbol
            Named ``<prefix>begin_state_<k>``.
        """
        _check_not_modified(self)
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            name = '%sbegin_state_%d' % (self._prefix, self._init_counter)
            states.append(func(name=name, **kwargs))
        return states

    def unpack_weights(self, args):
        """Split each fused i2h/h2h weight and bias into one array per gate.

        Parameters
        ----------
        args : dict of str to NDArray
            Parameters, e.g. ``Module.get_params()[0]``.

        Returns
        -------
        dict of str to NDArray
            A new dict with ``<prefix>i2h<gate>_weight`` etc. in place of the fused arrays.
        """
        args = dict(args)
        if not self._gate_names:
            return args
        size = self._num_hidden
        for group in ('i2h', 'h2h'):
            weight = _pop(args, '%s%s_weight' % (self._prefix, group))
            bias = _pop(args, '%s%s_bias' % (self._prefix, group))
            for j, gate in enumerate(self._gate_names):
                stem = '%s%s%s' % (self._prefix, group, gate)
                args[stem + '_weight'] = weight[j * size:(j + 1) * size].copy()
                args[stem + '_bias'] = bias[j * size:(j + 1) * size].copy()
        return args

    def pack_weights(self, args):
        """Join per-gate weights and biases back into the fused i2h/h2h arrays.

        Parameters
        ----------
        args : dict of str to NDArray
            Parameters as returned by ``unpack_weights``.

        Returns
        -------
        dict of str to NDArray
        """
        args = dict(args)
        if not self._gate_names:
            return args
        for group in ('i2h', 'h2h'):
            stems = ['%s%s%s' % (self._prefix, group, gate) for gate in self._gate_names]
            weights = [_pop(args, stem + '_weight') for stem in stems]
            biases = [_pop(args, stem + '_bias') for stem in stems]
            args['%s%s_weight' % (self._prefix, group)] = ndarray.Concat(*weights, dim=0)
            args['%s%s_bias' % (self._prefix, group)] = ndarray.Concat(*biases, dim=0)
        return args

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        """Unroll the cell over ``length`` time steps.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : Symbol or list of Symbol
            One symbol of shape (batch, length, ...) for layout 'NTC' or (length, batch, ...)
            for 'TNC', or a list of ``length`` symbols of shape (batch, ...).
        begin_state : list of Symbol, optional
            Initial states; ``begin_state()`` when None.
        layout : str, default 'NTC'
            Layout of ``inputs`` (and of merged outputs).
        merge_outputs : bool, optional
            True: one symbol stacked along the time axis; False: a list of per-step symbols;
            None: whichever the cell produces naturally.

        Returns
        -------
        outputs : Symbol or list of Symbol
        states : list of Symbol
            States after the last step.
        """
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for step in range(length):
            output, states = self(inputs[step], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        """``Activation(act_type=activation)`` for a string, else ``activation(inputs, **kwargs)``."""
        if isinstance(activation, string_types):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


def _pop(args, name):
    if name not in args:
        raise KeyError('parameter %r is missing; parameters given: %s' % (name, sorted(args)))
    return args.pop(name)
