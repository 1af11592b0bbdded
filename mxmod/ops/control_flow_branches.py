"""``_while_loop`` and ``_cond``: the operators behind ``mx.sym.contrib.while_loop`` and
``mx.sym.contrib.cond`` (see control_flow.py for the common part and ``_foreach``).

MXNet registers no shape inference for these two (their outputs' shapes are known only once
they ran); mxmod infers them through the subgraphs (a while loop's per-step outputs have
``max_iterations`` rows, the rows after the last iteration are zeros), so that graphs holding
them bind with ``simple_bind`` and in Modules."""
import numpy as np

from ..base import MXNetError
from .base import Param, register
from .control_flow import SubgraphOperator, accumulate, as_bool, fresh, keeps_frames
from .subgraph import infer_subgraph


def merge_type(op_name, what, old, new):
    """Combine two partial dtypes of one value; an error when both are known and differ."""
    if old is not None and new is not None and np.dtype(old) != np.dtype(new):
        raise MXNetError('%s: type inconsistent for %s: %s and %s'
                         % (op_name, what, np.dtype(old).name, np.dtype(new).name))
    return old if old is not None else new


class _Branching(SubgraphOperator):
    """What the two share: writing a subgraph's inferred input values back to the operator's
    inputs they come from."""

    def put_back(self, kind, values, locs, found):
        for i, value in zip(locs, found):
            values[i] = self.combine(kind, 'input %d' % i, values[i], value)

    def combine(self, kind, what, old, new):
        """Merge two partial shapes (``kind='shape'``) or dtypes."""
        if kind == 'shape':
            return self.merge(what, old, new)
        return merge_type(self.op_name, what, old, new)

    def infer_shapes_now(self, in_shapes, out_shapes):
        return self.infer_now('shape', in_shapes, out_shapes)

    def infer_types_now(self, in_types, out_types):
        return self.infer_now('type', in_types, out_types)


@register
class WhileLoop(_Branching):
    """Run the ``func`` subgraph while the ``cond`` subgraph gives true, at most
    ``max_iterations`` times (``mx.sym.contrib.while_loop``).

    Inputs are what either subgraph reads; ``cond_input_locs`` and ``func_input_locs`` pick each
    one's inputs among them, ``func_var_locs`` the loop variables among func's inputs. Outputs
    are func's per-step outputs (``max_iterations`` rows), then the final loop variables.
    """
    op_name = '_while_loop'
    subgraph_count = 2
    params = {'num_args': Param('int', lower=2), 'num_outputs': Param('int', lower=1),
              'num_out_data': Param('int', lower=0), 'max_iterations': Param('int', lower=1),
              'cond_input_locs': Param('shape'), 'func_input_locs': Param('shape'),
              'func_var_locs': Param('shape')}

    def setup(self):
        p = self.p
        n_in = p.num_args - 2
        if p.num_outputs - p.num_out_data != len(p.func_var_locs):
            raise MXNetError('_while_loop: num_outputs (%d) - num_out_data (%d) must equal the '
                             'number of loop variables (%d)'
                             % (p.num_outputs, p.num_out_data, len(p.func_var_locs)))
        self.check_counts(('cond_input_locs', p.cond_input_locs, n_in),
                          ('func_input_locs', p.func_input_locs, n_in),
                          ('func_var_locs', p.func_var_locs, len(p.func_input_locs)))
        # the position among cond's inputs of each loop variable (None: cond does not read it)
        self._cond_of_var = []
        for loc in p.func_var_locs:
            pos = p.func_input_locs[loc]
            hits = [j for j, c in enumerate(p.cond_input_locs) if c == pos]
            self._cond_of_var.append(hits[-1] if hits else None)

    def subgraph_arity(self):
        p = self.p
        return [(len(p.cond_input_locs), 1), (len(p.func_input_locs), p.num_outputs)]

    # ---- inference -------------------------------------------------------------------------
    def _sync_vars(self, kind, ins, outs):
        """A loop variable's input and final output share shape and dtype."""
        p = self.p
        for k, loc in enumerate(p.func_var_locs):
            pos, out = p.func_input_locs[loc], p.num_out_data + k
            ins[pos] = outs[out] = self.combine(kind, 'loop variable %d' % k, ins[pos], outs[out])

    def infer_now(self, kind, ins, outs):
        p = self.p
        cond_g, func_g = self._subgraphs
        n_data = p.num_out_data
        self._sync_vars(kind, ins, outs)
        found, _ = infer_subgraph(cond_g, kind, [ins[i] for i in p.cond_input_locs], [None])
        self.put_back(kind, ins, p.cond_input_locs, found)
        self._sync_vars(kind, ins, outs)
        if kind == 'shape':
            seeds = [tuple(s[1:]) if s is not None and len(s) > 1 else None for s in outs[:n_data]]
        else:
            seeds = list(outs[:n_data])
        found, got = infer_subgraph(func_g, kind, [ins[i] for i in p.func_input_locs],
                                    seeds + outs[n_data:])
        self.put_back(kind, ins, p.func_input_locs, found)
        for j in range(n_data):
            if got[j] is not None:
                step = (p.max_iterations,) + tuple(got[j]) if kind == 'shape' else got[j]
                outs[j] = self.combine(kind, 'output %d' % j, outs[j], step)
        for j in range(n_data, p.num_outputs):
            outs[j] = self.combine(kind, 'output %d' % j, outs[j], got[j])
        self._sync_vars(kind, ins, outs)
        return ins, outs

    # ---- computation -----------------------------------------------------------------------
    def forward(self, octx, inputs, aux):
        cond_run, func_run = self.runners()
        p = self.p
        keep = keeps_frames(octx)
        cond_in = [inputs[i] for i in p.cond_input_locs]
        func_in = [inputs[i] for i in p.func_input_locs]
        frames, rows = [], [[] for _ in range(p.num_out_data)]
        steps = 0
        while steps < p.max_iterations:
            flag = cond_run.forward(octx, cond_in, False)[0][0]
            if not as_bool(self.op_name, flag):
                break
            outs, frame = func_run.forward(octx, func_in, keep)
            steps += 1
            frames.append(frame)
            for j in range(p.num_out_data):
                rows[j].append(outs[j])
            for k, loc in enumerate(p.func_var_locs):
                func_in[loc] = outs[p.num_out_data + k]
                if self._cond_of_var[k] is not None:
                    cond_in[self._cond_of_var[k]] = func_in[loc]
        octx.saved['frames'] = frames if keep else None
        finals = fresh([func_in[loc] for loc in p.func_var_locs], inputs)
        return self._stacked(octx, inputs, rows) + finals

    def _stacked(self, octx, inputs, rows):
        """Each per-step output: ``max_iterations`` rows, the steps' values then zeros."""
        xp, p = octx.xp, self.p
        out = []
        if rows and not rows[0]:
            shapes, types = self.output_specs(octx, inputs)
        for j, row in enumerate(rows):
            if not row:
                out.append(self.zeros(octx, shapes[j], types[j], 'output %d' % j))
                continue
            arr = xp.zeros((p.max_iterations,) + tuple(row[0].shape), dtype=row[0].dtype)
            arr[:len(row)] = xp.stack(row)
            out.append(arr)
        return out

    def backward(self, octx, out_grads, inputs, outputs, aux):
        func_run = self.runners()[1]
        frames = octx.saved.get('frames')
        if frames is None:
            raise MXNetError('_while_loop: backward needs a forward that kept its iterations '
                             '(run forward with the gradients bound, or under autograd.record)')
        p = self.p
        need = octx.need_grad or [True] * len(inputs)
        var_pos = set(p.func_var_locs)
        sub_need = [i in var_pos or need[loc] for i, loc in enumerate(p.func_input_locs)]
        grads = [None] * len(inputs)
        state_grads = list(out_grads[p.num_out_data:])
        for t in range(len(frames) - 1, -1, -1):
            ogs = [g[t] for g in out_grads[:p.num_out_data]] + state_grads
            got = func_run.backward(frames[t], ogs, sub_need)
            for i, (loc, grad) in enumerate(zip(p.func_input_locs, got)):
                if i not in var_pos:
                    grads[loc] = accumulate(grads[loc], grad)
            state_grads = [got[loc] for loc in p.func_var_locs]
        for loc, grad in zip(p.func_var_locs, state_grads):
            pos = p.func_input_locs[loc]
            grads[pos] = accumulate(grads[pos], grad)
        return [g if wanted else None for g, wanted in zip(grads, need)]


@register
class Cond(_Branching):
    """Run the ``then_branch`` or the ``else_branch`` subgraph as the ``cond`` subgraph gives
    true or false (``mx.sym.contrib.cond``); each subgraph reads the inputs its ``*_locs``
    parameter names."""
    op_name = '_cond'
    subgraph_count = 3
    params = {'num_args': Param('int', lower=3), 'num_outputs': Param('int', lower=1),
              'cond_input_locs': Param('shape'), 'then_input_locs': Param('shape'),
              'else_input_locs': Param('shape')}

    def setup(self):
        p = self.p
        n_in = p.num_args - 3
        self.check_counts(('cond_input_locs', p.cond_input_locs, n_in),
                          ('then_input_locs', p.then_input_locs, n_in),
                          ('else_input_locs', p.else_input_locs, n_in))

    def subgraph_arity(self):
        p = self.p
        return [(len(p.cond_input_locs), 1), (len(p.then_input_locs), p.num_outputs),
                (len(p.else_input_locs), p.num_outputs)]

    def _branch_locs(self):
        return [self.p.cond_input_locs, self.p.then_input_locs, self.p.else_input_locs]

    def infer_now(self, kind, ins, outs):
        for k, (graph, locs) in enumerate(zip(self._subgraphs, self._branch_locs())):
            found, got = infer_subgraph(graph, kind, [ins[i] for i in locs],
                                        [None] if k == 0 else outs)
            self.put_back(kind, ins, locs, found)
            if k:
                outs = [self.combine(kind, 'output %d' % j, old, new)
                        for j, (old, new) in enumerate(zip(outs, got))]
        return ins, outs

    def forward(self, octx, inputs, aux):
        runners = self.runners()
        locs = self._branch_locs()
        flag = runners[0].forward(octx, [inputs[i] for i in locs[0]], False)[0][0]
        branch = 1 if as_bool(self.op_name, flag) else 2
        keep = keeps_frames(octx)
        outs, frame = runners[branch].forward(octx, [inputs[i] for i in locs[branch]], keep)
        octx.saved['branch'] = (branch, frame) if keep else None
        return fresh(outs, inputs)

    def backward(self, octx, out_grads, inputs, outputs, aux):
        taken = octx.saved.get('branch')
        if taken is None:
            raise MXNetError('_cond: backward needs a forward that kept its branch (run forward '
                             'with the gradients bound, or under autograd.record)')
        branch, frame = taken
        need = octx.need_grad or [True] * len(inputs)
        locs = self._branch_locs()[branch]
        got = self.runners()[branch].backward(frame, list(out_grads), [need[i] for i in locs])
        grads = [None] * len(inputs)
        for loc, grad in zip(locs, got):
            grads[loc] = accumulate(grads[loc], grad)
        return grads
