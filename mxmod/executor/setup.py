"""The set-up half of the Executor (a mixin): device of each step and value, storage types,
which values backward needs and when each can be freed, and the per-step programs the hot loops
run (resolved once per bind)."""
import numpy as np

from ..context import xp_of
from ..ndarray.ndarray import from_xp
from . import fastpath, gradient_writes, storage


class ExecutorSetup(object):
    """Bind-time set-up of :class:`mxmod.executor.executor.Executor`."""

    def _step_ctx(self, step):
        group = step.node.attrs.get('__ctx_group__')
        return self._group2ctx.get(group, self._ctx) if group else self._ctx

    def _slot_ctx(self, slot):
        step = self._plan.producer.get(slot)
        if step is not None:
            return step.ctx
        if slot in self._plan.arg_slots:
            return self.arg_arrays[self._plan.arg_slots.index(slot)].context
        return self.aux_arrays[self._plan.aux_slots.index(slot)].context

    def _zeros(self, slot):
        ctx = self._slot_ctx(slot)
        shape, dtype = self._shapes[slot], self._dtypes[slot] or 'float32'
        xp = xp_of(ctx)
        if xp is np:
            return np.zeros(shape or (), dtype=dtype)
        with xp.cuda.Device(ctx.device_id):
            return xp.zeros(shape or (), dtype=dtype)

    def _install_storage(self):
        """Storage types of values and gradients; sparse steps get dispatching functions."""
        plan = self._plan
        known = {n: a.stype for n, a in zip(plan.arg_names + plan.aux_names,
                                             list(self.arg_arrays) + list(self.aux_arrays))}
        sparse = storage.install(self, known)
        if sparse:
            storage.patch_programs(self)
        return sparse

    def _new_output(self, slot):
        ctx = self._slot_ctx(slot)
        if self._stypes[slot] != 'default':
            return storage.empty_like_slot(self, slot, ctx)
        return from_xp(self._zeros(slot), ctx)

    def _prepare_gradients(self, mirror):
        plan = self._plan
        self._grad_slots = {slot for slot, req, g in zip(plan.arg_slots, self._grad_req, self._grad_list)
                            if req != 'null' and g is not None}
        self._backward_steps = plan.mark_gradients(self._grad_slots)
        kept = plan.lifetimes(self._backward_steps, mirror)
        self._kept = kept
        self._free_train = [list(s.free_after) for s in plan.steps]
        infer_keep = set(plan.head_slots) | set(plan.arg_slots) | set(plan.aux_slots)
        last = {}
        for step in plan.steps:
            for s in step.inputs + step.aux:
                last[s] = step.index
        self._free_infer = [[] for _ in plan.steps]
        for slot, idx in last.items():
            if slot not in infer_keep:
                self._free_infer[idx].append(slot)
        self._last_read = self._backward_last_reads()
        # an inference pass frees what backward reads; once a backward has followed one (MXNet
        # allows it: neural-style does it every step), inference passes keep those values
        self._values_kept = None
        self._keep_infer = getattr(self, '_keep_infer', False)
        self._compile()

    def _compile(self):
        """Resolve at bind time what the hot loops need per step."""
        plan = self._plan
        self._single_ctx = all(o.ctx == self._ctx for o in self._octx) and all(
            a.context == self._ctx for a in list(self.arg_arrays) + list(self.aux_arrays))
        self._fwd_program = [(step.op.forward, octx, tuple(step.inputs), tuple(step.aux),
                              tuple(step.outputs)) for step, octx in zip(plan.steps, self._octx)]
        fastpath.share_derived(self)
        gradient_writes.plan(self)
        for step in self._backward_steps:
            octx = self._octx[step.index]
            producer = plan.producer
            octx.need_grad = [s in self._grad_slots or (s in producer and producer[s].needs_grad)
                              for s in step.inputs]
            uses = step.op.backward_uses
            step.read_inputs = 'inputs' in uses
            step.read_outputs = 'outputs' in uses
            step.no_inputs = [None] * len(step.inputs)
            step.no_outputs = [None] * len(step.outputs)
        self._fast_backward = self._single_ctx and not any(s.mirror for s in plan.steps)
        self._bwd_program = fastpath.compile_backward(self)

    def _backward_last_reads(self):
        """For each backward step, the recomputed/kept slots that no later backward step reads."""
        plan = self._plan
        seen, out = set(), []
        for step in reversed(self._backward_steps):
            reads = set(plan._backward_reads(step)) - seen
            seen |= reads
            out.append(reads)
        return list(reversed(out))
