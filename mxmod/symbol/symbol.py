"""The Symbol: a handle on some outputs of a graph of operator nodes."""
from ..base import MXNetError, NotImplementedForSymbol, string_types, write_file_atomic
from .graph import Node, topo_order, aux_variable_ids, listed_attrs, normalize_attrs, make_op
from .var_names import check_unique_variables, check_bindable

# times attributes were set on a node of some graph (its operator may have changed with them):
# what a Symbol keeps of its graph's variables, and what binds share, is made again after one
_EDITS = [0]


def graph_edits():
    """A number that changes whenever attributes are set on some node of some graph."""
    return _EDITS[0]


class Symbol(object):
    """A symbolic value: the outputs ``[(node, index), ...]`` of a graph.

    Symbols are built with ``mx.sym.Variable`` and the operator functions in ``mx.sym``, combined by
    calling (composition), grouping and arithmetic, then bound to devices to give Executors.
    """
    __slots__ = ('_outputs', '_order', '_variables', '__weakref__')

    def __init__(self, outputs):
        self._outputs = list(outputs)
        check_unique_variables(self._outputs)

    # ---- structure ------------------------------------------------------
    def _heads(self):
        return [node for node, _ in self._outputs]

    def _topo(self):
        """The graph's nodes in topological order (a new list). The order is kept with the
        outputs it was made for (nodes never change their inputs; composing in place gives the
        symbol a new outputs list), so listing arguments, binding and inference walk the graph
        once."""
        cached = getattr(self, '_order', None)
        if cached is None or cached[0] is not self._outputs:
            cached = (self._outputs, topo_order(self._heads()))
            self._order = cached
        return list(cached[1])

    def _arg_nodes(self):
        """(argument variable nodes, auxiliary state variable nodes), in graph order (new
        lists; kept like the order, and made again after an operator of the graph changed)."""
        cached = getattr(self, '_variables', None)
        if cached is None or cached[0] is not self._outputs or cached[1] != _EDITS[0]:
            order = self._topo()
            aux = aux_variable_ids(order)
            variables = [n for n in order if n.op is None]
            cached = (self._outputs, _EDITS[0], [n for n in variables if id(n) not in aux],
                      [n for n in variables if id(n) in aux])
            self._variables = cached
        return list(cached[2]), list(cached[3])

    @property
    def name(self):
        """Name of the node every output comes from (None for a group of several nodes)."""
        nodes = {id(node) for node, _ in self._outputs}
        if len(nodes) != 1:
            return None
        return self._outputs[0][0].name

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([out]) for out in self._outputs)

    def __getitem__(self, index):
        if isinstance(index, string_types):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise ValueError('There is no output named %r; outputs are %s' % (index, names))
            if len(matches) > 1:
                raise ValueError('There are multiple outputs named %r' % index)
            index = matches[0]
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError('Symbol output index %d out of range (%d outputs)'
                             % (index, len(self._outputs)))
        return Symbol([self._outputs[index]])

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, 'bool')

    def __repr__(self):
        if self.name is not None:
            return '<Symbol %s>' % self.name
        return '<Symbol group [%s]>' % ', '.join(s.name or '?' for s in self)

    # ---- listing --------------------------------------------------------
    def list_arguments(self):
        """Names of the arguments (inputs that are not auxiliary states), in graph order."""
        return [n.name for n in self._arg_nodes()[0]]

    def list_auxiliary_states(self):
        """Names of the auxiliary states (e.g. BatchNorm moving statistics)."""
        return [n.name for n in self._arg_nodes()[1]]

    def list_inputs(self):
        """Names of all variables (arguments and auxiliary states), in graph order."""
        return [n.name for n in self._topo() if n.op is None]

    def list_outputs(self):
        """Names of the outputs (``<node>_<output>``, or the variable's name)."""
        return [node.output_name(i) for node, i in self._outputs]

    def get_internals(self):
        """A group of every visible output of every node, in graph order."""
        outs = []
        for node in self._topo():
            count = 1 if node.op is None else node.op.num_visible_outputs()
            outs.extend((node, i) for i in range(count))
        return Symbol(outs)

    def get_children(self):
        """A group of the inputs of this symbol's node(s), or None for a variable."""
        outs, seen = [], set()
        for node, _ in self._outputs:
            if id(node) not in seen:
                seen.add(id(node))
                outs.extend(node.inputs)
        return Symbol(outs) if outs else None

    def _gen_atomic_symbol(self):
        """A new symbol applying this symbol's operator (same attributes) to fresh variables."""
        node = self._outputs[0][0]
        if node.op is None:
            raise MXNetError('_gen_atomic_symbol: %r is a variable, not an operator' % node.name)
        names = node.op.list_arguments() + node.op.list_auxiliary_states()
        inputs = [(Node(None, n, {}), 0) for n in names]
        atomic = Node(node.op, node.name, dict(node.attrs), inputs)
        return Symbol([(atomic, i) for i in range(node.op.num_visible_outputs())])

    # ---- attributes -----------------------------------------------------
    def attr(self, key):
        """The attribute ``key`` of a single-output symbol, or None."""
        if len(self._outputs) != 1:
            return None
        return listed_attrs(self._outputs[0][0].attrs).get(key)

    def list_attr(self, recursive=False):
        """Attributes of this symbol's node (``recursive=True``: of every node, keys ``name$key``)."""
        if recursive:
            out = {}
            for node in self._topo():
                for k, v in listed_attrs(node.attrs).items():
                    out['%s$%s' % (node.name, k)] = v
            return out
        if len(self._outputs) != 1:
            return {}
        return listed_attrs(self._outputs[0][0].attrs)

    def attr_dict(self):
        """Attributes of every node that has some: ``{node name: {key: value}}``."""
        return {n.name: listed_attrs(n.attrs) for n in self._topo() if n.attrs}

    def _set_attr(self, **kwargs):
        """Set string attributes on this symbol's node."""
        new = normalize_attrs(kwargs)
        _EDITS[0] += 1
        for node, _ in self._outputs:
            if node.op is not None:
                _reparse_op(node, new)
            node.attrs.update(new)

    # ---- composition ----------------------------------------------------
    def __call__(self, *args, **kwargs):
        """Return a copy whose variables are replaced by the given symbols (positionally in
        list_arguments order, or by name)."""
        name = kwargs.pop('name', None)
        arg_names = self.list_arguments()
        if args and kwargs:
            raise TypeError('compose only accept input Symbols either as positional or keyword arguments, not both')
        if len(args) > len(arg_names):
            raise MXNetError('too many positional inputs: %d given, symbol has %d arguments %s'
                             % (len(args), len(arg_names), arg_names))
        subst = dict(zip(arg_names, args))
        for key, val in kwargs.items():
            subst[key] = val
        for key, val in subst.items():
            if not isinstance(val, Symbol) or len(val) != 1:
                raise TypeError('compose expects single-output Symbols, got %r for %r' % (val, key))
        result = _substitute(self, {k: v._outputs[0] for k, v in subst.items()})
        if name is not None and len(result._outputs) == 1 and result._outputs[0][0].op is not None:
            result._outputs[0][0].name = name
        return result

    def _compose(self, *args, **kwargs):
        """In-place composition (MXNet's private API)."""
        self._outputs = self(*args, **kwargs)._outputs

    def __copy__(self):
        return _substitute(self, {})

    def __deepcopy__(self, memo):
        return _substitute(self, {})

    def copy(self):
        """Deep copy of the graph."""
        return _substitute(self, {})

    def __getstate__(self):
        return {'handle': self.tojson()}

    def __setstate__(self, state):
        from .json_io import load_json  # pylint: disable=import-outside-toplevel
        self._outputs = load_json(state['handle'])._outputs

    # ---- inference ------------------------------------------------------
    def _known(self, what, args, kwargs):
        if args and kwargs:
            raise ValueError('Can only specify known argument %ss either by positional or kwargs way.'
                             % what)
        if args:
            return dict(zip(self.list_arguments(), args))
        names = self.list_arguments()
        for key in kwargs:
            if key not in names and key not in self.list_auxiliary_states():
                raise MXNetError('infer_%s: argument name %r not found; the arguments are %s'
                                 % (what, key, names))
        return kwargs

    def infer_shape(self, *args, **kwargs):
        """Infer shapes of arguments, outputs and auxiliary states from given argument shapes.

        Returns ``(arg_shapes, out_shapes, aux_shapes)``, or ``(None, None, None)`` when some shape
        cannot be determined."""
        res = self._infer_shape_impl(False, *args, **kwargs)
        return res

    def infer_shape_partial(self, *args, **kwargs):
        """Like infer_shape but returns what is known (unknown shapes are ``()``, unknown dims 0)."""
        return self._infer_shape_impl(True, *args, **kwargs)

    def _infer_shape_impl(self, partial, *args, **kwargs):
        from .infer import infer_shapes, to_user  # pylint: disable=import-outside-toplevel
        from ..ops.base import unknown  # pylint: disable=import-outside-toplevel
        known = self._known('shape', args, kwargs)
        for key, shape in known.items():
            if shape is not None and not isinstance(shape, (tuple, list)):
                raise TypeError('Arguments need to be shapes (tuple), got %s=%r' % (key, shape))
        shapes = infer_shapes(self, known, partial)
        args_nodes, aux_nodes = self._arg_nodes()
        arg_s = [shapes.get((id(n), 0)) for n in args_nodes]
        aux_s = [shapes.get((id(n), 0)) for n in aux_nodes]
        out_s = [shapes.get((id(n), i)) for n, i in self._outputs]
        if not partial and any(unknown(s) for s in arg_s + aux_s + out_s):
            return (None, None, None)
        return ([to_user(s) for s in arg_s], [to_user(s) for s in out_s], [to_user(s) for s in aux_s])

    def infer_type(self, *args, **kwargs):
        """Infer dtypes of arguments, outputs and auxiliary states (numpy types).

        Returns ``(None, None, None)`` when some type cannot be determined."""
        return self._infer_type_impl(False, *args, **kwargs)

    def infer_type_partial(self, *args, **kwargs):
        """Like infer_type, with None for unknown types."""
        return self._infer_type_impl(True, *args, **kwargs)

    def _infer_type_impl(self, partial, *args, **kwargs):
        from .infer import infer_types  # pylint: disable=import-outside-toplevel
        import numpy as np  # pylint: disable=import-outside-toplevel
        known = self._known('type', args, kwargs)
        types = infer_types(self, known)
        args_nodes, aux_nodes = self._arg_nodes()
        conv = [[types.get((id(n), 0)) for n in args_nodes],
                [types.get((id(n), i)) for n, i in self._outputs],
                [types.get((id(n), 0)) for n in aux_nodes]]
        if not partial and any(t is None for group in conv for t in group):
            return (None, None, None)
        return tuple([None if t is None else np.dtype(t).type for t in group] for group in conv)

    # ---- binding --------------------------------------------------------
    def simple_bind(self, ctx, grad_req='write', type_dict=None, stype_dict=None, group2ctx=None,
                    shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
        """Allocate arrays from inferred shapes/types and bind them to ``ctx``; returns an Executor."""
        from ..executor.bind import simple_bind  # pylint: disable=import-outside-toplevel
        check_bindable(self, 'simple_bind')
        return simple_bind(self, ctx, grad_req, type_dict, group2ctx, shared_arg_names,
                           shared_exec, shared_buffer, kwargs, stype_dict)

    def bind(self, ctx, args, args_grad=None, grad_req='write', aux_states=None, group2ctx=None,
             shared_exec=None):
        """Bind given arrays to ``ctx``; returns an Executor."""
        from ..executor.bind import bind  # pylint: disable=import-outside-toplevel
        check_bindable(self, 'bind')
        return bind(self, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec)

    def eval(self, ctx=None, **kwargs):
        """Bind to ``ctx`` with the given NDArrays, run forward and return the outputs."""
        from ..context import current_context  # pylint: disable=import-outside-toplevel
        exe = self.bind(ctx or current_context(), kwargs, grad_req='null')
        return exe.forward()

    # ---- serialization --------------------------------------------------
    def tojson(self, remove_amp_cast=True):
        """MXNet's symbol JSON."""
        from .json_io import to_json  # pylint: disable=import-outside-toplevel
        return to_json(self)

    def save(self, fname, remove_amp_cast=True):
        """Write the symbol JSON to ``fname``."""
        if not isinstance(fname, string_types):
            raise TypeError('fname must be a string, got %s' % type(fname).__name__)
        write_file_atomic(fname, self.tojson())

    def debug_str(self):
        """A readable listing of the graph's nodes."""
        lines = []
        for node in self._topo():
            if node.op is None:
                lines.append('Variable:%s' % node.name)
                continue
            lines.append('--------------------')
            lines.append('Op:%s, Name=%s' % (node.op.op_name, node.name))
            lines.append('Inputs:')
            for i, (src, idx) in enumerate(node.inputs):
                lines.append('\targ[%d]=%s(%d)' % (i, src.name, idx))
            if node.attrs:
                lines.append('Attrs:')
                for k, v in sorted(node.attrs.items()):
                    lines.append('\t%s=%s' % (k, v))
        return '\n'.join(lines) + '\n'

    def __str__(self):
        return self.__repr__()


def _substitute(sym, subst):
    """Copy the graph of ``sym``, replacing variables named in ``subst`` by (node, index) entries."""
    mapping = {}
    for node in sym._topo():
        if node.op is None:
            if node.name in subst:
                mapping[id(node)] = subst[node.name]
            else:
                mapping[id(node)] = (Node(None, node.name, dict(node.attrs)), 0)
            continue
        inputs = []
        for src, idx in node.inputs:
            new_src, base = mapping[id(src)]
            inputs.append((new_src, idx if src.op is not None else base))
        mapping[id(node)] = (Node(node.op, node.name, dict(node.attrs), inputs), 0)
    outs = []
    for node, idx in sym._outputs:
        new, base = mapping[id(node)]
        outs.append((new, idx if node.op is not None else base))
    return Symbol(outs)


def Group(symbols):  # pylint: disable=invalid-name
    """Group several symbols into one multi-output symbol."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError('Expected a list of symbols as input')
    outs = []
    for s in symbols:
        outs.extend(s._outputs)
    return Symbol(outs)



def _reparse_op(node, new):
    """Attributes set on an operator node go through its parameter parser, as in MXNet: an
    unknown one is refused (before anything is stored), a parameter takes effect."""
    from ..ops.base import get_op, unknown_argument_error  # pylint: disable=import-outside-toplevel
    cls = get_op(node.op.op_name)
    if not cls.params or getattr(cls, 'accepts_any_params', False):
        return
    merged = dict(node.attrs, **new)
    for key in new:
        if key not in cls.params and not (key.startswith('__') and key.endswith('__')):
            raise unknown_argument_error(cls, key, merged)
    if any(key in cls.params for key in new):
        node.op = make_op(node.op.op_name, merged)
