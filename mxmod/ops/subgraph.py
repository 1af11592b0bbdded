"""Subgraphs held by control-flow operators (``_foreach``, ``_while_loop``, ``_cond``): a Symbol
compiled once into steps that run on arrays, forward (keeping what backward reads when asked) and
backward (from output gradients to input gradients), and the subgraph's shape and type inference
from partial values of its inputs and outputs.

A subgraph's inputs are its variables in ``list_inputs()`` order, as MXNet numbers them in the
operators' ``*_locs`` parameters."""
from ..base import MXNetError
from .base import OpContext


class _Step(object):
    """One operator node of a subgraph: value indices of its inputs, auxiliary states, outputs."""
    __slots__ = ('node', 'op', 'inputs', 'aux', 'outputs')

    def __init__(self, node, inputs, aux, outputs):
        self.node = node
        self.op = node.op
        self.inputs = inputs
        self.aux = aux
        self.outputs = outputs


class Frame(object):
    """What one forward run keeps for its backward: every value and every step's OpContext."""
    __slots__ = ('values', 'contexts')

    def __init__(self, values, contexts):
        self.values = values
        self.contexts = contexts


class SubgraphRunner(object):
    """A subgraph compiled for repeated runs on arrays (numpy or cupy).

    Parameters
    ----------
    sym : Symbol
        The subgraph; its variables are its inputs, its outputs the values it returns.
    """

    def __init__(self, sym):
        self.symbol = sym
        order = sym._topo()
        index = {}
        self.input_nodes, self.input_slots, self.steps = [], [], []
        for node in order:
            base = len(index)
            for i in range(node.num_outputs()):
                index[(id(node), i)] = base + i
            if node.op is None:
                self.input_nodes.append(node)
                self.input_slots.append(base)
                continue
            nargs = len(node.op.list_arguments())
            ins = [index[(id(src), i)] for src, i in node.inputs]
            self.steps.append(_Step(node, ins[:nargs], ins[nargs:],
                                    list(range(base, len(index)))))
        self.slots = len(index)
        self.head_slots = [index[(id(node), i)] for node, i in sym._outputs]
        # per step: its forward, the value indices it reads and writes, and the need_grad
        # a step of a kept run gets (all True: a backward follows)
        self._program = [(step.op.forward, step.inputs, step.aux, step.outputs,
                          [True] * len(step.inputs)) for step in self.steps]
        self._step_shapes = {}
        self._requires = {}

    @property
    def num_inputs(self):
        """Number of inputs (variables)."""
        return len(self.input_slots)

    @property
    def num_outputs(self):
        """Number of outputs."""
        return len(self.head_slots)

    # ---- forward -------------------------------------------------------------------
    def forward(self, octx, inputs, keep):
        """Run the subgraph on ``inputs`` (arrays in input order) in the mode and on the device of
        ``octx`` (the control-flow operator's context).

        Returns
        -------
        (list of arrays, Frame or None)
            The outputs, and what backward needs when ``keep`` is true.
        """
        values = [None] * self.slots
        for slot, arr in zip(self.input_slots, inputs):
            values[slot] = arr
        contexts = [] if keep else None
        shapes = self.step_shapes([a.shape for a in inputs])
        xp, ctx, is_train = octx.xp, octx.ctx, octx.is_train
        for (forward, ins, aux, outs, all_true), out_shapes in zip(self._program, shapes):
            # need_grad set: a backward follows (nested control-flow operators keep their frames)
            sctx = OpContext(xp, ctx, is_train, all_true if keep else None, out_shapes)
            res = forward(sctx, [values[s] for s in ins], [values[s] for s in aux] if aux else [])
            for slot, val in zip(outs, res):
                values[slot] = val
            if keep:
                contexts.append(sctx)
        outs = [values[s] for s in self.head_slots]
        return outs, (Frame(values, contexts) if keep else None)

    def step_shapes(self, input_shapes):
        """Output shapes of every step for inputs of ``input_shapes`` (inferred once per distinct
        tuple of shapes); source operators read them to resolve unknown dimensions."""
        key = tuple(input_shapes)
        found = self._step_shapes.get(key)
        if found is not None:
            return found
        from ..symbol.infer import infer_shapes  # pylint: disable=import-outside-toplevel
        known = {n.name: s for n, s in zip(self.input_nodes, input_shapes)}
        table = infer_shapes(self.symbol, known, True)
        found = [[table.get((id(step.node), i)) for i in range(len(step.outputs))]
                 for step in self.steps]
        if len(self._step_shapes) < 64:
            self._step_shapes[key] = found
        return found

    # ---- backward ------------------------------------------------------------------
    def backward(self, frame, out_grads, need):
        """Gradients of the inputs from the gradients of the outputs.

        Parameters
        ----------
        frame : Frame
            What the forward run kept.
        out_grads : list of array or None
            One per output; None where no gradient flows in.
        need : sequence of bool
            Which inputs need a gradient.

        Returns
        -------
        list of array or None
            One per input: None where none is needed or none flows.
        """
        values, contexts = frame.values, frame.contexts
        grads = [None] * self.slots
        for slot, grad in zip(self.head_slots, out_grads):
            if grad is not None:
                grads[slot] = grad if grads[slot] is None else grads[slot] + grad
        for k, op, ins, outs, aux, wanted in self._backward_program(tuple(map(bool, need))):
            ogs = [grads[s] for s in outs]
            if not op.is_loss:
                if len(ogs) == 1:
                    if ogs[0] is None:
                        continue
                elif all(g is None for g in ogs):
                    continue
                elif any(g is None for g in ogs):
                    ogs = [g if g is not None else contexts[k].xp.zeros_like(values[s])
                           for g, s in zip(ogs, outs)]
            sctx = contexts[k]
            sctx.need_grad = wanted
            res = op.backward(sctx, ogs, [values[s] for s in ins], [values[s] for s in outs],
                              [values[s] for s in aux] if aux else [])
            for slot, grad, want in zip(ins, res, wanted):
                if want and grad is not None:
                    old = grads[slot]
                    grads[slot] = grad if old is None else old + grad
        return [grads[s] if n else None for s, n in zip(self.input_slots, need)]

    def _backward_program(self, need):
        """The steps backward runs when the inputs of ``need`` want gradients, last first:
        those that depend on such an input and pass gradients on, with which of their inputs
        want one."""
        found = self._requires.get(need)
        if found is None:
            requires = [False] * self.slots
            for slot, wanted in zip(self.input_slots, need):
                requires[slot] = wanted
            found = []
            for k, step in enumerate(self.steps):
                if any(requires[s] for s in step.inputs):
                    for s in step.outputs:
                        requires[s] = True
                    if step.op.propagates_grad:
                        found.append((k, step.op, step.inputs, step.outputs, step.aux,
                                      [requires[s] for s in step.inputs]))
            found.reverse()
            self._requires[need] = found
        return found


def infer_subgraph(sym, kind, inputs, outputs):
    """Complete the shapes (``kind='shape'``, internal form: tuples with 0 for unknown
    dimensions, None when unknown) or dtypes (``kind='type'``: dtype names or None) of a
    subgraph's inputs and outputs from what is known of both.

    Returns
    -------
    (list, list)
        The inputs' and the outputs' values.
    """
    from ..symbol.infer import infer_shapes, infer_types  # pylint: disable=import-outside-toplevel
    variables = [n for n in sym._topo() if n.op is None]
    known = {n.name: v for n, v in zip(variables, inputs) if v is not None}
    if kind == 'shape':
        table = infer_shapes(sym, known, True, heads=outputs)
    else:
        table = infer_types(sym, known, heads=outputs)
    return ([table.get((id(n), 0)) for n in variables],
            [table.get((id(n), i)) for n, i in sym._outputs])


def check_subgraph(op_name, index, sym, num_inputs, num_outputs):
    """Raise an MXNetError unless subgraph ``index`` of ``op_name`` has the numbers of inputs
    and outputs its parameters give."""
    got_in, got_out = len(sym.list_inputs()), len(sym._outputs)
    if num_inputs is not None and got_in != num_inputs:
        raise MXNetError('%s: subgraph %d has %d inputs %s, the parameters give %d'
                         % (op_name, index, got_in, sym.list_inputs(), num_inputs))
    if num_outputs is not None and got_out != num_outputs:
        raise MXNetError('%s: subgraph %d has %d outputs, the parameters give %d'
                         % (op_name, index, got_out, num_outputs))
