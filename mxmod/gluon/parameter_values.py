"""The value side of Gluon's Parameter: initialization (immediate or deferred until the shape
is known), the per-context copies and their gradients marked for autograd, loading, moving
between contexts, setting values and clearing gradients."""
import warnings

import numpy as np

from .. import autograd, context, initializer, ndarray
from ..context import Context, cpu
from ..util import is_np_shape
from .errors import CheckError
from .utils import shape_is_known

__all__ = ['ParameterValues', 'as_ctx_list']


def as_ctx_list(ctx):
    """``ctx`` as a list of Contexts (the current context when None)."""
    if ctx is None:
        return [context.current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    return list(ctx)


class ParameterValues(object):
    """Mixin of Parameter holding its arrays (see parameter.py for the attributes it uses)."""

    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(),
                   force_reinit=False):
        """Create the value (and gradient) on each context, or defer that until the shape is
        known.

        Parameters
        ----------
        init : Initializer, optional
            Overrides ``self.init`` and ``default_init``.
        ctx : Context or list of Context, optional
            One independent copy per context (default: the current context).
        default_init : Initializer, default Uniform()
            Used when neither ``init`` nor ``self.init`` is given.
        force_reinit : bool, default False
            Re-initialize an initialized parameter (otherwise warn and keep it).
        """
        if self._data is not None and not force_reinit:
            warnings.warn("Parameter '%s' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize." % self.name, stacklevel=2)
            return
        self._data = self._grad = None
        ctx = as_ctx_list(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError("Cannot initialize Parameter '%s' because it has invalid shape: "
                             "%s." % (self.name, self.shape))
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not shape_is_known(self.shape):
            raise CheckError("Cannot initialize Parameter '%s' because it has invalid shape: "
                             "%s. Please specify in_units, in_channels, etc for `Block`s."
                             % (self.name, self.shape))
        with autograd.pause():
            if data is None:
                data = ndarray.zeros(shape=self.shape, dtype=self.dtype, ctx=cpu(),
                                     stype=self._stype)
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {'__init__': init}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        self._ctx_list = list(ctx_list)
        self._ctx_map = [[], []]
        for i, ctx in enumerate(self._ctx_list):
            slots = self._ctx_map[ctx.device_typeid & 1]
            while len(slots) <= ctx.device_id:
                slots.append(None)
            slots[ctx.device_id] = i
        self._data = [data.copyto(ctx) for ctx in self._ctx_list]
        self._init_grad()

    def _init_grad(self):
        if self.grad_req == 'null':
            self._grad = None
            return
        self._grad = [ndarray.zeros(shape=arr.shape, dtype=arr.dtype, ctx=arr.context,
                                    stype=self._grad_stype) for arr in self._data]
        autograd.mark_variables(self._check_and_get(self._data, list), self._grad,
                                self.grad_req)

    def _reduce(self):
        """The value on the CPU (the mean of the copies when there are several)."""
        ctx = cpu()
        if self._stype == 'default':
            copies = self.list_data()
            if len(copies) > 1:
                return ndarray.add_n(*(arr.copyto(ctx) for arr in copies)) / len(copies)
            return self.data().copyto(ctx)
        rows = ndarray.arange(0, self.shape[0], dtype='int64', ctx=ctx)
        data = ndarray.zeros(self.shape, stype='row_sparse', ctx=ctx)
        self._trainer._row_sparse_pull(self, data, rows, full_idx=True)  # pylint: disable=protected-access
        return data

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source='current'):
        """(Re)initialize from the loaded array ``data`` (checking shape and dtype)."""
        if cast_dtype and dtype_source not in ('current', 'saved'):
            raise CheckError("dtype_source must be 'current' or 'saved', got %r" % dtype_source)
        if self.shape:
            unknown = -1 if is_np_shape() else 0
            for mine, theirs in zip(self.shape, data.shape):
                if mine not in (unknown, theirs):
                    raise CheckError("Failed loading Parameter '%s' from saved params: shape "
                                     "incompatible expected %s vs saved %s"
                                     % (self.name, self.shape, data.shape))
            self.shape = tuple(theirs if mine == unknown else mine
                               for mine, theirs in zip(self.shape, data.shape))
        if self.dtype:
            if cast_dtype and np.dtype(self.dtype).type != data.dtype:
                if dtype_source == 'current':
                    data = data.astype(self.dtype, copy=False)
                else:
                    self.dtype = data.dtype
            elif np.dtype(self.dtype).type != data.dtype:
                raise CheckError("Failed loading Parameter '%s' from saved params: dtype "
                                 "incompatible expected %s vs saved %s. Set cast_dtype=True to "
                                 "cast the dtype of saved params."
                                 % (self.name, self.dtype, data.dtype))
        if self._stype != data.stype:
            data = data.tostype(self._stype)
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                if ctx is not None and set(ctx) != set(self._deferred_init[1]):
                    raise CheckError("Failed to load Parameter '%s' on %s because it was "
                                     "previous initialized on %s."
                                     % (self.name, ctx, self.list_ctx()))
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            if ctx is not None and set(ctx) != set(self.list_ctx()):
                raise CheckError("Failed to load Parameter '%s' on %s because it was previous "
                                 "initialized on %s." % (self.name, ctx, self.list_ctx()))
            self.set_data(data)
        self._deferred_init = ()

    def reset_ctx(self, ctx):
        """Move the parameter to other context(s) (its value kept)."""
        ctx = as_ctx_list(ctx)
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError("Cannot reset context for Parameter '%s' because it has not been "
                             "initialized." % self.name)

    def set_data(self, data):
        """Set the value on every context (kept for later when initialization is deferred)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise CheckError("Parameter '%s' has not been initialized" % self.name)
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if trainer and trainer._kv_initialized and trainer._update_on_kvstore and \
                self not in trainer._params_to_init:  # pylint: disable=protected-access
            trainer._reset_kvstore()  # pylint: disable=protected-access
        for arr in self._check_and_get(self._data, list):
            arr[:] = data

    def zero_grad(self):
        """Set the gradient buffers to 0 (nothing happens without them)."""
        if self._grad is None:
            return
        for grad in self._grad:
            grad[:] = 0


