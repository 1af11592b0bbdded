"""DataParallelExecutorGroup: one executor per device, each running a slice of the batch.

Parameters, their gradients and auxiliary states live in every executor (``param_arrays[i][k]``
is parameter ``i`` on device ``k``); the module keeps them in sync through the kvstore or the
local updater. Inputs are copied slice by slice into the executors, outputs are concatenated
back along their batch axis."""
import logging
from collections import OrderedDict

import numpy as np

from ..base import MXNetError
from ..context import cpu
from ..io import DataDesc
from .batch_split import (_split_input_slice, _load_general, _load_data, _load_label,  # noqa: F401
                          _merge_multi_context, _prepare_group2ctxs, slice_along, _single_cpu,
                          _copied)
from .group_setup import _DTYPE_MX_TO_NP, _as_desc, _exec_bytes, _resolve_grad_req
from .parallel import run_per_device

__all__ = ['DataParallelExecutorGroup']

class DataParallelExecutorGroup(object):
    """A group of executors, one per context, that run slices of each batch in parallel.

    Parameters
    ----------
    symbol : Symbol
        The graph every executor runs.
    contexts : list of Context
    workload : list of float
        Relative share of the batch per context.
    data_shapes, label_shapes : list of DataDesc or (name, shape)
        Full-batch input shapes; ``label_shapes`` may be None.
    param_names : list of str
        Arguments that are parameters (shared across buckets, updated by the optimizer).
    for_training : bool
        Allocate gradients and allow backward.
    inputs_need_grad : bool
        Also compute gradients of the data inputs.
    shared_group : DataParallelExecutorGroup, optional
        Group of another bucket whose parameter/gradient memory and input buffers are reused.
    logger : logging.Logger
    fixed_param_names : list of str, optional
        Parameters that get no gradient.
    grad_req : str, list or dict, default 'write'
    state_names : list of str, optional
        Inputs that are states (set with :meth:`set_states`).
    group2ctxs : dict or list, optional
        ctx_group name -> Context mapping(s) for model parallelism.
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req='write', state_names=None, group2ctxs=None):
        self.param_names = param_names
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = contexts
        self.workload = workload
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(contexts))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self._total_exec_bytes = 0
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        data_shapes = [_as_desc(x) for x in data_shapes]
        if label_shapes is not None:
            label_shapes = [_as_desc(x) for x in label_shapes]
        self.grad_req = _resolve_grad_req(grad_req if for_training else 'null', self.arg_names,
                                          param_names, [x.name for x in data_shapes],
                                          self.fixed_param_names, inputs_need_grad)
        self.shared_data_arrays = (shared_group.shared_data_arrays if shared_group is not None
                                   else [{} for _ in contexts])
        # whether code outside mxmod's modules has read grad_arrays (it may edit them between
        # backward and update): shared by the groups that share arrays (a BucketingModule's)
        self._grads_read = shared_group._grads_read if shared_group is not None else [False]
        self.batch_size = None
        self.slices = None
        self.execs = []
        self._default_execs = None
        self.data_arrays = self.label_arrays = self.param_arrays = None
        self.state_arrays = self.grad_arrays = self.aux_arrays = self.input_grad_arrays = None
        self.data_shapes = self.label_shapes = self.data_names = self.label_names = None
        self.data_layouts = self.label_layouts = None
        self._single = None
        self.output_names = symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.output_layouts = [DataDesc.get_batch_axis(symbol[i].attr('__layout__'))
                               for i in range(self.num_outputs)]
        self.bind_exec(data_shapes, label_shapes, shared_group)

    @property
    def grad_arrays(self):
        """The parameters' gradients, one list per parameter with one array per device. Reading
        them (code that may edit them before ``update``) keeps a backward the user calls from
        starting the gradient communication early (module/overlap.py); mxmod's own code reads
        ``_grad_arrays``."""
        self._grads_read[0] = True
        return self._grad_arrays

    @grad_arrays.setter
    def grad_arrays(self, value):
        self._grad_arrays = value

    @property
    def grads_read(self):
        """True once code outside mxmod's modules has read ``grad_arrays`` (this group's or an
        executor's)."""
        if not self._grads_read[0] and any(e._grads_read for e in self.execs):
            self._grads_read[0] = True
        return self._grads_read[0]

    # ---- binding -----------------------------------------------------------------
    def decide_slices(self, data_shapes):
        """Set ``batch_size`` and ``slices`` from the inputs' batch axes; return those axes."""
        if not data_shapes:
            raise ValueError('decide_slices needs at least one input shape')
        major_axis = [DataDesc.get_batch_axis(x.layout) for x in data_shapes]
        for (name, shape), axis in zip(data_shapes, major_axis):
            if axis == -1:
                continue
            if self.batch_size is None:
                self.batch_size = shape[axis]
                self.slices = _split_input_slice(self.batch_size, self.workload)
            elif shape[axis] != self.batch_size:
                raise MXNetError('all data must have the same batch size: batch_size = %d, but %s '
                                 'has shape %s' % (self.batch_size, name, shape))
        return major_axis

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Bind one executor per context (or reshape the first-bound ones when ``reshape``)."""
        if self.execs and not reshape:
            raise MXNetError('bind_exec: executors are already bound; use reshape')
        self.batch_size = None
        self.data_layouts = self.decide_slices(data_shapes)
        if label_shapes is not None:
            self.label_layouts = self.decide_slices(label_shapes)
        for i in range(len(self.contexts)):
            data_i = self._sliced_shape(data_shapes, i, self.data_layouts)
            label_i = [] if label_shapes is None else \
                self._sliced_shape(label_shapes, i, self.label_layouts)
            if reshape:
                self.execs[i] = self._default_execs[i].reshape(
                    allow_up_sizing=True, **{d.name: d.shape for d in data_i + label_i})
            else:
                self.execs.append(self._bind_ith_exec(i, data_i, label_i, shared_group))
        self.data_shapes = data_shapes
        self.label_shapes = label_shapes
        self.data_names = [d.name for d in data_shapes]
        if label_shapes is not None:
            self.label_names = [d.name for d in label_shapes]
        self._collect_arrays()

    def _bind_ith_exec(self, i, data_shapes, label_shapes, shared_group):
        """simple_bind the ``i``-th executor, sharing parameters with ``shared_group``."""
        shared_exec = None if shared_group is None else shared_group.execs[i]
        input_descs = list(data_shapes) + list(label_shapes or [])
        if shared_group is not None:
            self._warn_reallocation(self.shared_data_arrays[i], input_descs)
        executor = self.symbol.simple_bind(
            ctx=self.contexts[i], grad_req=self.grad_req,
            type_dict=self._input_types(data_shapes, label_shapes),
            shared_arg_names=self.param_names, shared_exec=shared_exec,
            group2ctx=self.group2ctxs[i], shared_buffer=self.shared_data_arrays[i],
            **{d.name: d.shape for d in input_descs})
        self._total_exec_bytes += _exec_bytes(executor)
        return executor

    def _warn_reallocation(self, shared_buffer, input_descs):
        """Warn when an input outgrows the shared buffer (the default bucket should be largest)."""
        for desc in input_descs:
            old = shared_buffer.get(desc.name)
            if old is not None and int(np.prod(desc.shape)) > old.size:
                self.logger.warning(
                    'bucketing: data "%s" has a shape %s, which is larger than already allocated '
                    'shape %s. Need to re-allocate. Consider putting default_bucket_key to be the '
                    'bucket taking the largest input for better memory sharing.',
                    desc.name, desc.shape, old.shape)

    def _input_types(self, data_shapes, label_shapes):
        """Input dtypes from the descriptors; a data variable's ``__dtype__`` attribute wins."""
        types = {d.name: d.dtype for d in data_shapes}
        attrs = self.symbol.attr_dict()
        for name in list(types):
            code = attrs.get(name, {}).get('__dtype__')
            if code is not None and code != '-1':
                types[name] = _DTYPE_MX_TO_NP[int(code)]
        types.update({d.name: d.dtype for d in label_shapes or []})
        return types

    def _sliced_shape(self, shapes, i, major_axis):
        """Descriptors of device ``i``: the batch dimension replaced by its slice length."""
        sliced = []
        for desc, axis in zip(shapes, major_axis):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            sliced.append(DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout))
        return sliced

    def _collect_arrays(self):
        """Gather per-name lists of the executors' arrays (the public ``*_arrays`` attributes)."""
        execs = self.execs
        slices = self.slices or [slice(i, i + 1) for i in range(len(execs))]
        self.data_arrays = [[(slices[i], e.arg_dict[d.name]) for i, e in enumerate(execs)]
                            for d in self.data_shapes]
        self.state_arrays = [[e.arg_dict[name] for e in execs] for name in self.state_names]
        self.label_arrays = None if self.label_shapes is None else \
            [[(self.slices[i], e.arg_dict[d.name]) for i, e in enumerate(execs)]
             for d in self.label_shapes]
        param_idx = [i for i, name in enumerate(self.arg_names) if name in self.param_names]
        self.param_arrays = [[e.arg_arrays[i] for e in execs] for i in param_idx]
        self.grad_arrays = [[e._grad_list[i] for e in execs] for i in param_idx] \
            if self.for_training else None
        self.input_grad_arrays = None
        if self.inputs_need_grad:
            self.input_grad_arrays = [[e._grad_list[self.arg_names.index(d.name)] for e in execs]
                                      for d in self.data_shapes if d.name in self.arg_names]
        self.aux_arrays = [[e.aux_arrays[i] for e in execs] for i in range(len(self.aux_names))]
        self._single = _single_cpu(self)

    def reshape(self, data_shapes, label_shapes):
        """Rebind for new input shapes, sharing memory with the executors bound first."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    # ---- parameters and states ------------------------------------------------------
    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy parameters (by name) into every executor."""
        for exec_ in self.execs:
            exec_.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Average each parameter and aux state over the devices into the given dicts (in place)."""
        for names, blocks, target in ((self.param_names, self.param_arrays, arg_params),
                                      (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                total = block[0].copyto(cpu())
                for arr in block[1:]:
                    total += arr.copyto(cpu())
                if len(block) > 1:
                    total /= len(block)
                total.astype(target[name].dtype).copyto(target[name])

    def get_states(self, merge_multi_context=True):
        """The state arrays, ``[[state1_dev1, state1_dev2], ...]`` (merging is not supported)."""
        if merge_multi_context:
            raise MXNetError('get_states(merge_multi_context=True) is not supported; '
                             'pass merge_multi_context=False')
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Set the states from per-device arrays ``states`` or fill them all with ``value``."""
        if (states is None) == (value is None):
            raise MXNetError('set_states: give exactly one of states and value')
        if states is not None:
            _load_general(states, self.state_arrays, (0,) * len(states))
            return
        for per_device in self.state_arrays:
            for dst in per_device:
                dst[:] = value

    # ---- computation ------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Load the batch slices into the executors and run forward on every device.

        Parameters
        ----------
        data_batch : DataBatch (or any object with ``data``/``label``) or a list of them,
            one already-sliced batch per device.
        is_train : bool, optional
            Defaults to ``for_training``.
        """
        if is_train is None:
            is_train = self.for_training
        single = self._single
        if single is not None and type(data_batch) is not list and \
                _copied(data_batch, single[1], single[2]):
            single[0].forward(is_train=is_train)
            return
        _load_data(data_batch, self.data_arrays, self.data_layouts, self.data_shapes)
        first = data_batch[0] if isinstance(data_batch, list) else data_batch
        if self.label_arrays is not None and getattr(first, 'label', None):
            _load_label(data_batch, self.label_arrays, self.label_layouts, self.label_shapes)
        run_per_device(lambda i, e: e.forward(is_train=is_train), self.execs, self.contexts)

    def backward(self, out_grads=None):
        """Run backward on every device; ``out_grads`` (full batch) are sliced per device."""
        if not self.for_training:
            raise MXNetError('backward needs executors bound with for_training=True; re-bind '
                             'the module with for_training=True')
        if out_grads is None and self._single is not None:
            self._single[0].backward(out_grads=[])
            return
        out_grads = [] if out_grads is None else out_grads
        if not isinstance(out_grads, (list, tuple)):
            out_grads = [out_grads]

        def run(i, exec_):
            islice = self.slices[i]
            heads = []
            for grad, axis in zip(out_grads, self.output_layouts):
                part = slice_along(grad, axis, islice.start, islice.stop) if axis >= 0 else grad
                heads.append(part.as_in_context(self.contexts[i]) if axis >= 0
                             else part.copyto(self.contexts[i]))
            exec_.backward(out_grads=heads)
        run_per_device(run, self.execs, self.contexts)

    def get_output_shapes(self):
        """``(name, shape)`` of each output with the batch axis set to the full batch size."""
        shapes = []
        for name, out, axis in zip(self.output_names, self.execs[0].outputs, self.output_layouts):
            shape = list(out.shape)
            if axis >= 0:
                shape[axis] = self.batch_size
            shapes.append((name, tuple(shape)))
        return shapes

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        """Outputs ``[begin, end)``: merged over devices, or ``[[out1_dev1, out1_dev2], ...]``."""
        end = self.num_outputs if end is None else end
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            return _merge_multi_context(outputs, self.output_layouts[begin:end])
        return outputs

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (requires ``inputs_need_grad``)."""
        if not self.inputs_need_grad:
            raise MXNetError('input gradients were not computed: bind with inputs_need_grad=True')
        if merge_multi_context:
            return _merge_multi_context(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def update_metric(self, eval_metric, labels, pre_sliced):
        """Update ``eval_metric`` once per device with that device's labels and outputs."""
        for i, (exec_, islice) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                labels_slice = labels[i]
            else:
                # a slice covering the whole batch is the label itself
                labels_slice = [label if axis < 0 or (islice.start == 0 and
                                                      islice.stop == label.shape[axis])
                                else slice_along(label, axis, islice.start, islice.stop)
                                for label, axis in zip(labels, self.label_layouts or [])]
            eval_metric.update_dict(OrderedDict(zip(self.label_names or [], labels_slice)),
                                    OrderedDict(zip(self.output_names, exec_.outputs)))

    def install_monitor(self, mon):
        """Install ``mon`` on every executor."""
        for exec_ in self.execs:
            mon.install(exec_)
