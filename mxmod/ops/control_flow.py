"""Control-flow operators: ``_foreach`` (here), ``_while_loop`` and ``_cond``
(control_flow_branches.py), MXNet's operators behind ``mx.sym.contrib.foreach``, ``while_loop``
and ``cond``.

Each holds its subgraphs (Symbols, written into symbol JSON as the node's "subgraphs") and runs
them with :class:`mxmod.ops.subgraph.SubgraphRunner`. Forward keeps each iteration's values when
a backward will follow (the executor bound it with gradients, or autograd is recording), and
backward walks the iterations in reverse, carrying the loop states' gradients from one to the
previous and summing the gradients of the inputs every iteration reads."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from .subgraph import SubgraphRunner, check_subgraph, infer_subgraph

_MEMO_LIMIT = 256


def keeps_frames(octx):
    """True when a backward will follow this forward: the executor planned one for the step
    (``need_grad`` is set at bind time), an enclosing subgraph keeps its values, or autograd
    records the call."""
    if octx.need_grad is not None:
        return True
    from ..ndarray import tape  # pylint: disable=import-outside-toplevel
    return tape.is_recording()


def as_bool(op_name, value):
    """The truth of a condition subgraph's output, which must hold one element."""
    if int(np.prod(value.shape)) != 1:
        raise MXNetError('%s: the condition must give one value, got an array of shape %s'
                         % (op_name, tuple(value.shape)))
    return bool(value.reshape(-1)[0].item())


def accumulate(old, new):
    """``old + new`` where either may be None."""
    if new is None:
        return old
    return new if old is None else old + new


def fresh(outputs, inputs):
    """The outputs, with a copy of any that is one of the input arrays (an output must not
    share memory with an input)."""
    ids = {id(a) for a in inputs}
    return [o.copy() if id(o) in ids else o for o in outputs]


def locs_text(locs):
    """A list of locations as MXNet's Python API writes it into the attributes: ``[0, 2]``."""
    return '[%s]' % ', '.join(str(int(i)) for i in locs)


class SubgraphOperator(Operator):
    """Base of the operators that hold subgraphs.

    Subclasses set ``subgraph_count`` and implement ``subgraph_arity`` (the inputs and outputs
    each subgraph must have). ``subgraphs`` is assigned after construction (by
    ``mx.sym.contrib`` or the JSON reader), since the node's string attributes do not hold them.
    """
    subgraph_count = 1
    accepts_subgraphs = True

    def __init__(self, attrs=None):
        self._subgraphs = None
        self._runners = None
        self._memo = {}
        super().__init__(attrs)

    @property
    def subgraphs(self):
        """The subgraphs (list of Symbol), or None before they are given."""
        return self._subgraphs

    @subgraphs.setter
    def subgraphs(self, graphs):
        from ..symbol.symbol import Symbol  # pylint: disable=import-outside-toplevel
        graphs = list(graphs)
        if len(graphs) != self.subgraph_count:
            raise MXNetError('%s takes %d subgraph(s), got %d'
                             % (self.op_name, self.subgraph_count, len(graphs)))
        for k, (graph, (n_in, n_out)) in enumerate(zip(graphs, self.subgraph_arity())):
            if not isinstance(graph, Symbol):
                raise TypeError('%s: subgraph %d must be a Symbol, got %s'
                                % (self.op_name, k, type(graph).__name__))
            check_subgraph(self.op_name, k, graph, n_in, n_out)
        self._subgraphs = graphs
        self._runners = [SubgraphRunner(g) for g in graphs]
        self._memo = {}

    def subgraph_arity(self):
        """(inputs, outputs) each subgraph must have (None: not fixed)."""
        raise NotImplementedError(self.op_name)

    def runners(self):
        """The compiled subgraphs; an error when the operator was made without them."""
        if self._runners is None:
            raise MXNetError('%s has no subgraphs: create it with mx.sym.contrib (foreach, '
                             'while_loop, cond) or load it from symbol JSON that holds them'
                             % self.op_name)
        return self._runners

    def list_arguments(self):
        return ['data%d' % i for i in range(self.p.num_args - self.subgraph_count)]

    def list_outputs(self):
        count = self.p.num_outputs
        return ['output'] if count == 1 else ['output%d' % i for i in range(count)]

    def check_counts(self, *groups):
        """Raise unless the locations of ``groups`` ((name, locs, bound) triples) lie in
        [0, bound)."""
        for name, locs, bound in groups:
            bad = [i for i in locs if not 0 <= i < bound]
            if bad:
                raise MXNetError('%s: %s %s must lie in [0, %d)'
                                 % (self.op_name, name, list(locs), bound))

    def memoized(self, kind, ins, outs, compute):
        """``compute(ins, outs)`` for inference, remembered per distinct partial values (the
        inference loop asks every operator many times)."""
        key = (kind, tuple(ins), tuple(outs))
        found = self._memo.get(key)
        if found is None:
            found = compute(list(ins), list(outs))
            if len(self._memo) < _MEMO_LIMIT:
                self._memo[key] = found
        return list(found[0]), list(found[1])

    def infer_shape(self, in_shapes, out_shapes):
        self.runners()
        return self.memoized('shape', in_shapes, out_shapes, self.infer_shapes_now)

    def infer_type(self, in_types, out_types):
        self.runners()
        return self.memoized('type', in_types, out_types, self.infer_types_now)

    def merge(self, what, old, new):
        """Combine two partial shapes of one value (an error naming it when they differ)."""
        return merge_shape(self.op_name, what, old, new)

    def output_specs(self, octx, inputs):
        """Shapes and dtypes of the outputs for these inputs (bind-time shapes when given)."""
        _, types = self.infer_type([np.dtype(a.dtype).name for a in inputs],
                                   [None] * self.p.num_outputs)
        shapes = octx.out_shapes
        if not shapes or any(s is None for s in shapes):
            _, shapes = self.infer_shape([tuple(a.shape) for a in inputs],
                                         [None] * self.p.num_outputs)
        return shapes, types

    def zeros(self, octx, shape, dtype, what):
        """A zero array for output ``what``; all but its first dimension (a loop's length,
        which may be 0) must be known."""
        if shape is None or not all(shape[1:]):
            raise MXNetError('%s: the shape of %s is not known (%s)' % (self.op_name, what, shape))
        return octx.xp.zeros(shape, dtype=dtype or 'float32')


def slice_first(shape):
    """The shape of one step of an array of ``shape`` (MXNet gives a 1-D array's step (1,))."""
    if shape is None:
        return None
    return tuple(shape[1:]) if len(shape) > 1 else (1,)


@register
class Foreach(SubgraphOperator):
    """Run the body subgraph on each slice of the data inputs along axis 0, carrying the loop
    states from one iteration to the next (``mx.sym.contrib.foreach``).

    Inputs are the data arrays, the initial states, then the other arrays the body reads; the
    ``*_locs`` parameters give where each sits among the body's inputs. Outputs are the body's
    per-step outputs stacked along a new axis 0, then the final states.
    """
    op_name = '_foreach'
    params = {'num_args': Param('int', lower=1), 'num_outputs': Param('int'),
              'num_out_data': Param('int'), 'in_state_locs': Param('shape'),
              'in_data_locs': Param('shape'), 'remain_locs': Param('shape')}

    def setup(self):
        p = self.p
        n_sub = p.num_args - 1
        if not p.in_data_locs:
            raise MXNetError('_foreach: in_data_locs is empty; the loop needs a data input')
        given = len(p.in_data_locs) + len(p.in_state_locs) + len(p.remain_locs)
        if given != n_sub:
            raise MXNetError('_foreach: in_data_locs, in_state_locs and remain_locs name %d '
                             'inputs, num_args - 1 = %d' % (given, n_sub))
        if p.num_outputs - p.num_out_data != len(p.in_state_locs) or p.num_out_data < 0:
            raise MXNetError('_foreach: num_outputs (%d) - num_out_data (%d) must equal the '
                             'number of states (%d)' % (p.num_outputs, p.num_out_data,
                                                        len(p.in_state_locs)))
        self.check_counts(('in_data_locs', p.in_data_locs, n_sub),
                          ('in_state_locs', p.in_state_locs, n_sub),
                          ('remain_locs', p.remain_locs, n_sub))

    def subgraph_arity(self):
        return [(self.p.num_args - 1, self.p.num_outputs)]

    def _split(self, values):
        p = self.p
        n_data, n_state = len(p.in_data_locs), len(p.in_state_locs)
        return (values[:n_data], values[n_data:n_data + n_state], values[n_data + n_state:])

    # ---- inference -------------------------------------------------------------------------
    def _length(self, in_shapes, out_shapes):
        firsts = [s[0] for s in list(in_shapes[:len(self.p.in_data_locs)]) +
                  list(out_shapes[:self.p.num_out_data]) if s]
        return next((d for d in firsts if d), 0)

    def infer_shapes_now(self, in_shapes, out_shapes):
        p = self.p
        data, states, remain = self._split(in_shapes)
        length = self._length(in_shapes, out_shapes)
        states = [self.merge('state %d' % k, s, out_shapes[p.num_out_data + k])
                  for k, s in enumerate(states)]
        sub_in = [None] * (p.num_args - 1)
        for loc, shape in zip(p.in_data_locs, data):
            sub_in[loc] = slice_first(shape)
        for loc, shape in zip(list(p.in_state_locs) + list(p.remain_locs), states + remain):
            sub_in[loc] = shape
        sub_out = [slice_first(s) for s in out_shapes[:p.num_out_data]] + states
        sub_in, sub_out = infer_subgraph(self._subgraphs[0], 'shape', sub_in, sub_out)
        new_out = [None if s is None else (length,) + tuple(s) for s in sub_out[:p.num_out_data]]
        new_out += sub_out[p.num_out_data:]
        new_in = []
        for shape, loc in zip(data, p.in_data_locs):
            got = sub_in[loc]
            one_d = shape is not None and len(shape) == 1
            new_in.append(None if got is None else (length,) if one_d else (length,) + got)
        new_in += [sub_in[loc] for loc in list(p.in_state_locs) + list(p.remain_locs)]
        for k in range(len(states)):
            both = self.merge('state %d' % k, new_in[len(data) + k], new_out[p.num_out_data + k])
            new_in[len(data) + k] = new_out[p.num_out_data + k] = both
        return new_in, new_out

    def infer_types_now(self, in_types, out_types):
        p = self.p
        sub_in = [None] * (p.num_args - 1)
        for loc, dtype in zip(list(p.in_data_locs) + list(p.in_state_locs) + list(p.remain_locs),
                              in_types):
            sub_in[loc] = dtype
        for k, loc in enumerate(p.in_state_locs):
            sub_in[loc] = sub_in[loc] or out_types[p.num_out_data + k]
        sub_in, sub_out = infer_subgraph(self._subgraphs[0], 'type', sub_in, list(out_types))
        locs = list(p.in_data_locs) + list(p.in_state_locs) + list(p.remain_locs)
        return [sub_in[loc] for loc in locs], sub_out

    # ---- computation -----------------------------------------------------------------------
    def forward(self, octx, inputs, aux):
        runner = self.runners()[0]
        p = self.p
        data, states, remain = self._split(inputs)
        length = data[0].shape[0]
        for k, arr in enumerate(data):
            if arr.shape[0] != length:
                raise MXNetError('_foreach: data input %d has %d steps along axis 0, input 0 has '
                                 '%d' % (k, arr.shape[0], length))
        keep = keeps_frames(octx)
        sub_in = [None] * runner.num_inputs
        for loc, arr in zip(p.remain_locs, remain):
            sub_in[loc] = arr
        frames, steps = [], [[] for _ in range(p.num_out_data)]
        for t in range(length):
            for loc, arr in zip(p.in_data_locs, data):
                sub_in[loc] = arr[t] if arr.ndim > 1 else arr[t:t + 1]
            for loc, arr in zip(p.in_state_locs, states):
                sub_in[loc] = arr
            outs, frame = runner.forward(octx, sub_in, keep)
            frames.append(frame)
            for j in range(p.num_out_data):
                steps[j].append(outs[j])
            states = outs[p.num_out_data:]
        octx.saved['frames'] = frames if keep else None
        if length == 0:
            shapes, types = self.output_specs(octx, inputs)
            stacked = [self.zeros(octx, shapes[j], types[j], 'output %d' % j)
                       for j in range(p.num_out_data)]
        else:
            stacked = [octx.xp.stack(step) for step in steps]
        return stacked + fresh(states, inputs)

    def backward(self, octx, out_grads, inputs, outputs, aux):
        runner = self.runners()[0]
        frames = octx.saved.get('frames')
        if frames is None:
            raise MXNetError('_foreach: backward needs a forward that kept its iterations (run '
                             'forward with the gradients bound, or under autograd.record)')
        p = self.p
        xp = octx.xp
        need = octx.need_grad or [True] * len(inputs)
        data, _, remain = self._split(inputs)
        n_data, n_state = len(data), len(p.in_state_locs)
        sub_need = [False] * runner.num_inputs
        for loc, wanted in zip(p.in_data_locs, need[:n_data]):
            sub_need[loc] = wanted
        for loc in p.in_state_locs:
            sub_need[loc] = True
        for loc, wanted in zip(p.remain_locs, need[n_data + n_state:]):
            sub_need[loc] = wanted
        data_grads = [xp.zeros(arr.shape, arr.dtype) if wanted else None
                      for arr, wanted in zip(data, need)]
        remain_grads = [None] * len(remain)
        state_grads = list(out_grads[p.num_out_data:])
        for t in range(len(frames) - 1, -1, -1):
            ogs = [g[t] for g in out_grads[:p.num_out_data]] + state_grads
            got = runner.backward(frames[t], ogs, sub_need)
            for grad, loc, arr in zip(data_grads, p.in_data_locs, data):
                if grad is not None and got[loc] is not None:
                    grad[t if arr.ndim > 1 else slice(t, t + 1)] = got[loc]
            state_grads = [got[loc] for loc in p.in_state_locs]
            for k, loc in enumerate(p.remain_locs):
                remain_grads[k] = accumulate(remain_grads[k], got[loc])
        return data_grads + state_grads + remain_grads


from . import control_flow_branches  # noqa: E402,F401  pylint: disable=wrong-import-position
