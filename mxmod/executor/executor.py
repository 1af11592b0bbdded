"""The Executor: a symbol bound to a device with its argument, gradient and auxiliary arrays.

forward walks the plan's steps; backward walks the gradient steps, summing the gradients of values
used more than once, recomputing mirrored values, and writes each argument's gradient according to
its grad_req (write / add / null)."""
import numpy as np

from ..base import MXNetError, DeferredOpError
from ..context import device_scope, xp_of
from ..ndarray.ndarray import NDArray, on_device, _put, defer_error
from ..ops.base import OpContext
from .. import rng, threads
from ..profiler.hooks import run_op, track_bound_arrays
from ..profiler.state import PROFILER
from . import (buffers, fastpath, fuse_elemwise, fuse_lstm, fuse_products, fusion,
               gradient_writes, numerics, storage)
from .monitoring import monitored_backward, report_forward, report_backward
from .setup import ExecutorSetup
from .utilities import ExecutorUtilities


class Executor(ExecutorSetup, ExecutorUtilities):
    """A bound symbol. Created by ``Symbol.bind`` / ``Symbol.simple_bind``, not directly."""

    def __init__(self, symbol, ctx, plan, arrays, grad_req, group2ctx=None, mirror=None,
                 outputs=None, optimized=None, fuse=True):
        self._unfused_plan, self._mirror = plan, mirror
        if fuse:        # unrolled LSTMCell layers as one step each (fuse_lstm.py), merged
            plan = fuse_lstm.fuse(plan, ctx, arrays, group2ctx, mirror)     # products
            plan, shapes, dtypes = fuse_products.fuse(plan, ctx, arrays, group2ctx, mirror)
            plan, shapes, dtypes = fuse_elemwise.fuse(plan, ctx, arrays, group2ctx, mirror,
                                                      shapes, dtypes)      # elementwise groups
            arrays = tuple(arrays[:3]) + (shapes, dtypes)
        self._symbol = symbol
        self._optimized = optimized if optimized is not None else symbol
        self._ctx = ctx
        self._plan = plan
        self._group2ctx = group2ctx or {}
        self.arg_arrays, self._grad_list, self.aux_arrays, shapes, dtypes = arrays
        self._grad_req = grad_req
        self._shapes, self._dtypes = shapes, dtypes
        self._monitor = None
        self._monitor_all = False
        self._vals = [None] * plan.slots
        self._octx = [OpContext(xp_of(self._step_ctx(s)), self._step_ctx(s)) for s in plan.steps]
        for step, octx in zip(plan.steps, self._octx):
            step.ctx = octx.ctx
            octx.out_shapes = [shapes[s] for s in step.outputs]
        self._prepare_gradients(mirror)
        self._has_sparse = self._install_storage()
        self._blocks = [] if self._has_sparse else buffers.install(self)
        self.outputs = outputs or [self._new_output(s) for s in plan.head_slots]
        self._local_outputs = (not self._has_sparse and self._single_ctx
                               and all(o.context == self._ctx for o in self.outputs))
        self._arg_index = {n: i for i, n in enumerate(plan.arg_names)}
        self._grad_hook = None
        self._reported = set()      # gradients reported during their step (grad_ready)
        fastpath.compile_hot(self)
        numerics.install(self)
        fusion.install(self)

    # ---- running ------------------------------------------------------------------
    @on_device
    def forward(self, is_train=False, **kwargs):
        """Run the graph. Keyword arrays are copied into the arguments of those names first.

        Returns the list of output NDArrays."""
        if kwargs:
            self._set_inputs(kwargs)
        if PROFILER.symbolic and self._plan is not self._unfused_plan:
            self._unfuse()
        threads.tick()
        if self._hot and self._monitor is None and not PROFILER.symbolic:
            fusion.activate(self, is_train)
            return fastpath.forward(self, is_train)
        self._load_inputs()
        self._derived.clear()
        fusion.activate(self, is_train and self._monitor is None and not PROFILER.symbolic)
        keep = is_train or self._keep_infer
        frees = self._free_train if keep else self._free_infer
        fastpath.begin_pass(self, is_train)
        vals = self._vals
        try:
            if self._single_ctx and self._monitor is None and not PROFILER.symbolic:
                fastpath.run_forward(self, frees)
            else:
                if PROFILER.memory:
                    track_bound_arrays(self)
                for step, octx, free in zip(self._plan.steps, self._octx, frees):
                    self._run_step(step, octx)
                    for s in free:
                        vals[s] = None
        except DeferredOpError as err:
            # reported when an output is read, as MXNet's asynchronous engine does
            self._deferred = err
            defer_error(self.outputs, err)
            self._is_train = is_train
            return self.outputs
        for out, slot in zip(self.outputs, self._plan.head_slots):
            value, target = vals[slot], out._data
            if tuple(value.shape) != target.shape:
                raise MXNetError('output %s has shape %s, the executor was bound for %s'
                                 % (out, tuple(value.shape), out.shape))
            if self._local_outputs:
                target[...] = value
                continue
            with self._scope(out.context):
                if self._has_sparse:
                    storage.copy_output(out, value)
                else:
                    target[...] = _on(value, out.context)
        self._is_train = is_train
        self._values_kept = keep
        return self.outputs

    def _set_inputs(self, kwargs):
        """Copy keyword arrays of ``forward`` into the arguments of those names."""
        for name, value in kwargs.items():
            if name not in self._arg_index:
                raise MXNetError('forward: unknown argument %r; arguments are %s'
                                 % (name, self._plan.arg_names))
            dst = self.arg_arrays[self._arg_index[name]]
            if not isinstance(value, (NDArray, np.ndarray)):
                raise TypeError('forward: %s must be an NDArray or numpy array, got %s'
                                % (name, type(value).__name__))
            if tuple(value.shape) != dst.shape:
                raise MXNetError('forward: shape of %s must be %s, got %s'
                                 % (name, dst.shape, tuple(value.shape)))
            dst[:] = value

    def _load_inputs(self):
        vals = self._vals
        for slot, arr in zip(self._plan.arg_slots, self.arg_arrays):
            vals[slot] = arr._data
        for slot, arr in zip(self._plan.aux_slots, self.aux_arrays):
            vals[slot] = arr._data

    def _gather(self, slots, ctx):
        vals = self._vals
        out = [vals[s] for s in slots]
        if any(v is None for v in out):
            for i, s in enumerate(slots):
                if out[i] is None:
                    self._recompute(s)
                    out[i] = vals[s]
        if not self._single_ctx:
            out = [_on(v, ctx) for v in out]
        return out

    def _scope(self, ctx):
        """group2ctx: work for ``ctx`` runs on its own GPU (one context: forward/backward already
        run in the executor's scope)."""
        return device_scope(None if self._single_ctx else ctx)

    def _run_step(self, step, octx, aux_override=None):
        ins = self._gather(step.inputs, octx.ctx)
        aux = aux_override if aux_override is not None else self._gather(step.aux, octx.ctx)
        forward = self._sparse_fwd.get(step.index, step.op.forward)
        with self._scope(octx.ctx):
            if PROFILER.symbolic:
                outs = run_op(step.op.op_name, octx.ctx, forward, octx, ins, aux,
                              node=step.name)
            else:
                outs = forward(octx, ins, aux)
        for s, o in zip(step.outputs, outs):
            self._vals[s] = o
        if self._monitor is not None:
            report_forward(self, step, ins, outs)

    def _recompute(self, slot):
        """Recompute a value that forward did not keep (mirroring), from the nearest kept values."""
        step = self._plan.producer.get(slot)
        if step is None:
            raise MXNetError('value %d of the graph is missing and cannot be recomputed' % slot)
        octx = self._octx[step.index]
        aux = [a.copy() for a in self._gather(step.aux, octx.ctx)]
        saved, planned = dict(octx.saved), octx.out
        octx.out = None         # the forward buffer plan does not hold during backward
        self._run_step(step, octx, aux_override=aux)
        octx.out = planned
        octx.saved.update(saved)

    @on_device
    def backward(self, out_grads=None, is_train=True):
        """Compute gradients of the arguments given head gradients of the outputs (needed for
        outputs that are not loss layers)."""
        if not self._backward_steps:
            return
        if getattr(self, '_deferred', None) is not None:
            defer_error([g for g in self._grad_list if g is not None], self._deferred)
            return
        self._values_for_backward()
        if self._reported:
            self._reported.clear()
        if not self._heads_need_grad and (out_grads is None or type(out_grads) in (list, tuple)):
            grads = {}          # no head takes a gradient: out_grads are not read
        else:
            grads = self._head_grads(out_grads)
        if self._fast_backward and self._monitor is None and not PROFILER.symbolic:
            fastpath.run_backward(self, grads)
            if self._grads_untouched:
                self._write_grads(grads, self._grads_untouched)
            if self._grad_hook is not None:
                self._grad_hook(None)
            return
        vals = self._vals
        kept = self._kept
        self._derived.clear()       # recomputed steps see the arguments as they are now
        for step, done, finished in zip(self._backward_steps, self._last_read, self._grads_final):
            self._backward_step(step, grads)
            for s in done:
                if s not in kept:
                    vals[s] = None
            if finished:
                self._write_grads(grads, finished)
        self._write_grads(grads, self._grads_untouched)
        if self._grad_hook is not None:
            self._grad_hook(None)

    def _values_for_backward(self):
        """Make sure forward's values are there for backward. MXNet allows backward after
        forward(is_train=False), and even before any forward (its tests do, for operators
        whose gradient reads no forward value); an inference pass frees what backward reads,
        so the pass is run here in inference mode keeping those values (and later inference
        passes keep them: this executor's user does this)."""
        if self._values_kept:
            return
        self._keep_infer = True
        self._load_inputs()
        replay = getattr(self, '_rng_before', None)
        now = rng.snapshot(self._contexts()) if replay else None
        if replay:
            rng.restore(replay)
        try:
            self._octx_mode = False
            for step, octx, free in zip(self._plan.steps, self._octx, self._free_train):
                octx.is_train = False
                self._run_step(step, octx)
                for slot in free:
                    self._vals[slot] = None
        finally:
            if now:
                rng.restore(now)
        self._is_train = False
        self._values_kept = True

    def _contexts(self):
        """The distinct contexts the steps run on."""
        seen = []
        for octx in self._octx:
            if octx.ctx not in seen:
                seen.append(octx.ctx)
        return seen

    def _head_grads(self, out_grads):
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, (NDArray, np.ndarray)):
            out_grads = [out_grads]
        elif isinstance(out_grads, dict):
            names = self._symbol.list_outputs()
            out_grads = [out_grads.get(n) for n in names]
        grads = {}
        for i, (node, _) in enumerate(self._plan.heads):
            slot = self._plan.head_slots[i]
            given = out_grads[i] if i < len(out_grads) else None
            if node.op is not None and (node.op.is_loss or not getattr(node.op, 'needs_head_grad', True)
                                        or not node.op.propagates_grad):
                continue            # its gradient does not depend on a head gradient
            if given is None:
                if self._plan.producer.get(slot) is None or not self._plan.producer[slot].needs_grad:
                    continue
                raise MXNetError('Because output %d (%s) is not a loss function, a head gradient is '
                                 'required when calling backward. If you are attempting to minimize '
                                 'the output as an objective, wrap it with MakeLoss.'
                                 % (i, self._symbol.list_outputs()[i]))
            data = given._data if isinstance(given, NDArray) else _put(np.asarray(given), self._ctx)
            dtype = self._dtypes[slot]
            if dtype is not None and data.dtype != dtype:
                data = data.astype(dtype)     # as MXNet copies it into the output's dtype
            if self._has_sparse:
                data = storage.head_grad(self, slot, data)
            grads[slot] = _accumulate(grads.get(slot), data)
        return grads

    def _backward_outputs(self, step, octx):
        """The forward outputs a backward step reads (``Operator.backward_outputs``; all of them
        for the monitor, which reports every one), None for the others."""
        which = step.op.backward_outputs
        if which is None or self._monitor is not None:
            return self._gather(step.outputs, octx.ctx)
        read = self._gather([step.outputs[i] for i in which], octx.ctx)
        outs = [None] * len(step.outputs)
        for i, value in zip(which, read):
            outs[i] = value
        return outs

    def _backward_step(self, step, grads):
        octx = self._octx[step.index]
        with self._scope(octx.ctx):
            self._backward_in_scope(step, octx, grads)

    def _backward_in_scope(self, step, octx, grads):
        op = step.op
        backward = self._sparse_bwd.get(step.index, op.backward)
        ogs = [grads.pop(s, None) for s in step.outputs]
        if not self._single_ctx:
            ogs = [None if g is None else _on(g, octx.ctx) for g in ogs]
        if not op.is_loss:
            if all(g is None for g in ogs):
                return
            if any(g is None for g in ogs):
                ogs = [g if g is not None else self._zeros(s) for g, s in zip(ogs, step.outputs)]
        ins = self._gather(step.inputs, octx.ctx) if step.read_inputs else step.no_inputs
        outs = self._backward_outputs(step, octx) if step.read_outputs else step.no_outputs
        aux = self._gather(step.aux, octx.ctx) if step.aux else step.aux
        if self._monitor is not None:
            in_grads = monitored_backward(backward, octx, ogs, ins, outs, aux)
            report_backward(self, step, list(ogs) + list(ins) + list(outs), in_grads)
        elif PROFILER.symbolic:
            in_grads = run_op('_backward_' + op.op_name, octx.ctx, backward, octx, ogs, ins,
                              outs, aux, node=step.name)
        else:
            in_grads = backward(octx, ogs, ins, outs, aux)
        for s, g, need in zip(step.inputs, in_grads, octx.need_grad):
            if need and g is not None:
                old = grads.get(s)
                if old is not None and not self._single_ctx:
                    old = _on(old, octx.ctx)    # group2ctx: consumers on several devices
                grads[s] = g if old is None else old + g

    def _write_grads(self, grads, targets):
        """Write the finished gradients of ``targets`` ((slot, req, array) triples) and drop them."""
        for slot, req, garr in targets:
            g = grads.pop(slot, None)
            if g is garr._data:
                continue                # the operator wrote it in place (grad_out)
            if self._has_sparse and (garr.stype != 'default' or storage.is_sparse(g)):
                storage.write_grad(garr, req, g)
                continue
            if self._single_ctx and not self._has_sparse and req == 'write' and g is not None:
                garr._data[...] = g.reshape(garr.shape)
                continue
            with self._scope(garr.context):
                if req == 'add':
                    if g is not None:
                        garr._data += _on(g, garr.context).reshape(garr.shape)
                elif g is None:
                    garr._data[...] = 0
                else:
                    garr._data[...] = _on(g, garr.context).reshape(garr.shape)
        if self._grad_hook is not None and targets:
            names = [self._slot_names[t[0]] for t in targets]
            if self._reported:      # some were reported during their step (grad_ready)
                names = [n for n in names if n not in self._reported]
            if names:
                self._grad_hook(names)

    def set_grad_ready_hook(self, hook):
        """Call ``hook(names)`` during backward each time argument gradients are final (written
        for the last time in this pass), and ``hook(None)`` when backward ends; None removes it."""
        self._slot_names = dict(zip(self._plan.arg_slots, self._plan.arg_names))
        self._grad_hook = hook
        gradient_writes.install_early_reports(self, hook)

    def gradient_release_order(self):
        """The order in which backward finishes the argument gradients.

        Returns
        -------
        (list of str, set of str)
            Argument names in the order their gradients become final, and the names whose
            arrays a later backward step (or a recomputation under mirroring) still reads, so
            that they may be overwritten only once backward has ended.
        """
        return gradient_writes.release_order(self)

    def _unfuse(self):
        """Run every operator of the graph from now on (fuse_lstm.unfuse)."""
        fuse_lstm.unfuse(self)

def _accumulate(acc, g):
    return g if acc is None else acc + g


def _on(value, ctx):
    """Move a numpy/cupy array to ``ctx`` when it lives elsewhere."""
    if ctx.device_typeid != 2:
        return value if isinstance(value, np.ndarray) else _put(value, ctx)
    if isinstance(value, np.ndarray) or getattr(value.device, 'id', ctx.device_id) != ctx.device_id:
        xp = xp_of(ctx)
        with xp.cuda.Device(ctx.device_id):
            return xp.array(value, copy=True)
    return value
