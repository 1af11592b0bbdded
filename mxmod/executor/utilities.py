"""The Executor's dictionaries of arrays, monitoring, parameter copies, reshape and its memory
report (a mixin of :class:`mxmod.executor.executor.Executor`)."""
from ..base import MXNetError
from . import numerics


class ExecutorUtilities(object):
    """Name-keyed views and utilities of a bound executor."""

    @property
    def arg_dict(self):
        """Argument name -> NDArray."""
        return dict(zip(self._plan.arg_names, self.arg_arrays))

    @property
    def grad_dict(self):
        """Argument name -> gradient NDArray (arguments with grad_req 'null' are left out)."""
        return {n: g for n, g in zip(self._plan.arg_names, self.grad_arrays) if g is not None}

    # code that reads the gradient arrays may edit them between backward and a Module's update:
    # such a Module's user-called backward then leaves the communication to update
    # (module/overlap.py); mxmod's own code reads _grad_list
    _grads_read = False

    @property
    def grad_arrays(self):
        """The arguments' gradient NDArrays, in argument order (None where grad_req is 'null')."""
        self._grads_read = True
        return self._grad_list

    @grad_arrays.setter
    def grad_arrays(self, value):
        self._grad_list = value

    @property
    def aux_dict(self):
        """Auxiliary state name -> NDArray."""
        return dict(zip(self._plan.aux_names, self.aux_arrays))

    @property
    def output_dict(self):
        """Output name -> NDArray."""
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, NDArray)`` on every operator output (and inputs with monitor_all)."""
        self._unfuse()
        self._monitor, self._monitor_all = numerics.chain(self, callback, monitor_all)
        self._user_monitor = (callback, monitor_all)     # reshape installs it on the new executor

    def get_optimized_symbol(self):
        """The symbol actually executed (after common subexpression elimination)."""
        return self._optimized

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy parameter values into this executor's arguments and auxiliary states."""
        for name, array in arg_params.items():
            if name in self._arg_index:
                _copy_param(self.arg_arrays[self._arg_index[name]], array, name, 'arg_params')
            elif not allow_extra_params:
                raise ValueError('Find name "%s" that is not in the arguments (pass '
                                 'allow_extra_params=True / allow_extra=True to ignore it)' % name)
        if aux_params is None:
            return
        aux = self.aux_dict
        for name, array in aux_params.items():
            if name in aux:
                _copy_param(aux[name], array, name, 'aux_params')
            elif not allow_extra_params:
                raise ValueError('Find name %s that is not in the auxiliary states (pass '
                                 'allow_extra_params=True / allow_extra=True to ignore it)' % name)

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new input shapes that shares this one's parameter memory."""
        from .bind import reshape  # pylint: disable=import-outside-toplevel
        new = reshape(self, partial_shaping, allow_up_sizing, kwargs)
        monitor = getattr(self, '_user_monitor', None)
        if monitor is not None and monitor[0] is not None:
            new.set_monitor_callback(*monitor)      # as MXNet rebinds the callback
        return new

    def memory_plan(self):
        """The memory plan in bytes: naive, forward_peak, backward_peak, planned, internal, and the
        shared forward buffers (shared_buffers, shared_buffer_bytes)."""
        from .memory import executor_plan  # pylint: disable=import-outside-toplevel
        return executor_plan(self)

    def planned_memory_bytes(self):
        """Peak bytes of values alive at once under the plan (arguments and gradients included)."""
        return self.memory_plan()['planned']

    def debug_str(self):
        """The graph and its memory plan as text."""
        from .memory import executor_report  # pylint: disable=import-outside-toplevel
        return executor_report(self)


def _copy_param(dst, src, name, kind):
    """``dst[:] = src`` for parameter ``name``, refusing a value of another shape by name."""
    shape = getattr(src, 'shape', None)
    if shape is not None and tuple(shape) != tuple(dst.shape):
        raise MXNetError('cannot copy parameter %r: %s holds shape %s, the executor needs %s '
                         '(were these parameters saved from another network?)'
                         % (name, kind, tuple(shape), tuple(dst.shape)))
    dst[:] = src
