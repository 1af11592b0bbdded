"""Gluon's Parameter: a named weight of a Block. Imperatively it holds one copy of its value
(and of its gradient, marked for autograd) per Context once initialized, possibly deferred
until the first forward pass reveals its shape; symbolically it is an ``mx.sym.Variable``."""
import warnings

import numpy as np

from .. import autograd, context, initializer, ndarray, symbol
from ..base import MXNetError, mx_real_t
from ..context import Context, cpu
from ..util import is_np_shape
from .utils import shape_is_known

__all__ = ['DeferredInitializationError', 'Parameter', 'Constant', 'symbolic_only_error',
           'CheckError', 'tensor_types']

_GRAD_REQS = ('write', 'add', 'null')
_STYPES = ('default', 'row_sparse', 'csr')

tensor_types = (symbol.Symbol, ndarray.NDArray)


class DeferredInitializationError(MXNetError):
    """A Parameter was used before its deferred initialization could run (its shape is only
    known after the first forward pass)."""


class CheckError(MXNetError, AssertionError):
    """A failed consistency check. MXNet's Gluon asserts these, so the error is both an
    MXNetError and an AssertionError."""


def symbolic_only_error(what):
    """The MXNetError raised when ``what`` (a recurrent cell of mx.gluon.rnn) is used on
    NDArrays: mxmod implements those cells for Symbols only."""
    return MXNetError('%s: mxmod implements mx.gluon.rnn for symbolic use only: call cells on '
                      'mx.sym Symbols and train the resulting graph with mx.mod.Module (or bind '
                      'it); imperative NDArray use of the recurrent cells is not supported' % what)


def _as_ctx_list(ctx):
    if ctx is None:
        return [context.current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    return list(ctx)


class Parameter(object):
    """A weight of a Block: its value and gradient on each Context, or a symbolic variable.

    Parameters
    ----------
    name : str
    grad_req : {'write', 'add', 'null'}, default 'write'
        How backward writes the gradient ('add' accumulates until ``zero_grad``).
    shape : int or tuple of int, optional
        0 marks a dimension learned at the first forward pass (deferred initialization).
    dtype : numpy.dtype or str, default 'float32'
    lr_mult, wd_mult : float, default 1.0
        Multipliers of the optimizer's learning rate and weight decay.
    init : Initializer or str, optional
        This parameter's initializer (else the one passed to ``initialize``).
    allow_deferred_init : bool, default False
        Let ``initialize`` wait for the shape instead of failing on unknown dimensions.
    differentiable : bool, default True
        When False, ``grad_req`` is always 'null'.
    stype, grad_stype : {'default', 'row_sparse', 'csr'}, default 'default'
        Storage types of the value and of the gradient.
    """

    def __init__(self, name, grad_req='write', shape=None, dtype=mx_real_t,
                 lr_mult=1.0, wd_mult=1.0, init=None, allow_deferred_init=False,
                 differentiable=True, stype='default', grad_stype='default'):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        self._shape = (shape,) if isinstance(shape, int) else shape
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        for label, value in (('grad_stype', grad_stype), ('stype', stype)):
            if value not in _STYPES:
                raise CheckError("%s for Parameter '%s' must be one of 'default', 'row_sparse', "
                                 "or 'csr', but got '%s'" % (label, name, value))
        self._grad_stype = grad_stype
        self._stype = stype

    def __repr__(self):
        return 'Parameter %s (shape=%s, dtype=%s)' % (self.name, self.shape, self.dtype)

    # ---- attributes -------------------------------------------------------
    @property
    def grad_req(self):
        """'write', 'add' or 'null'; settable before or after initialization."""
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in _GRAD_REQS:
            raise CheckError("grad_req must be one of 'write', 'add', or 'null', but got '%s'"
                             % (req,))
        if not self._differentiable:
            req = 'null'
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == 'null' and self._grad is not None:
            self._grad = None
            self._data = [arr.detach() for arr in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        """Data type; setting it casts the value and gradient."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        """The shape, unknown dimensions as 0 (-1 under numpy shape semantics); or None."""
        if self._shape is None:
            return None
        if is_np_shape():
            return tuple(-1 if dim == 0 else dim for dim in self._shape)
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        if self._shape is None:
            self._shape = tuple(new_shape) if new_shape is not None else None
            return
        new_shape = tuple(new_shape)
        if len(self._shape) != len(new_shape) or any(
                old not in (-1, 0, new) for new, old in zip(new_shape, self._shape)):
            raise CheckError('Expected shape %s is incompatible with given shape %s for '
                             "Parameter '%s'." % (new_shape, self._shape, self.name))
        self._shape = new_shape

    def _set_trainer(self, trainer):
        if self._stype != 'default' and self._trainer and trainer and \
                self._trainer is not trainer:
            raise RuntimeError("Failed to set the trainer for Parameter '%s' because it was "
                               "already set. More than one trainers for a %s Parameter is not "
                               "supported." % (self.name, self._stype))
        self._trainer = trainer

    # ---- access -----------------------------------------------------------
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = context.current_context()
            slots = self._ctx_map[ctx.device_typeid & 1]
            if ctx.device_id < len(slots) and slots[ctx.device_id] is not None:
                return arr_list[slots[ctx.device_id]]
            raise RuntimeError("Parameter '%s' was not initialized on context %s. It was only "
                               "initialized on %s." % (self.name, ctx, self._ctx_list))
        if self._deferred_init:
            raise DeferredInitializationError(
                "Parameter '%s' has not been initialized yet because initialization was "
                "deferred. Actual initialization happens during the first forward pass. Please "
                "pass one batch of data through the network before accessing Parameters. You "
                "can also avoid deferred initialization by specifying in_units, num_features, "
                "etc., for network layers." % self.name)
        raise RuntimeError("Parameter '%s' has not been initialized. Note that you should "
                           "initialize parameters and create Trainer with "
                           "Block.collect_params() instead of Block.params because the later "
                           "does not include Parameters of nested child Blocks" % self.name)

    def data(self, ctx=None):
        """The value on ``ctx`` (the only copy, or the current context's, when None).

        Returns
        -------
        NDArray
        """
        if self._stype != 'default':
            raise RuntimeError("Cannot return a copy of Parameter '%s' on ctx %s via data() "
                               "because its storage type is %s. Please use row_sparse_data() "
                               "instead." % (self.name, ctx, self._stype))
        return self._check_and_get(self._data, ctx)

    def list_data(self):
        """The values on all contexts, in initialization order."""
        if self._stype != 'default':
            raise RuntimeError("Cannot return copies of Parameter '%s' on all contexts via "
                               "list_data() because its storage type is %s. Please use "
                               "row_sparse_data() instead." % (self.name, self._stype))
        return self._check_and_get(self._data, list)

    def _check_grad(self):
        if self._data is not None and self._grad is None:
            raise RuntimeError("Cannot get gradient array for Parameter '%s' because "
                               "grad_req='null'" % self.name)

    def grad(self, ctx=None):
        """The gradient buffer on ``ctx``."""
        self._check_grad()
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        """The gradient buffers on all contexts."""
        self._check_grad()
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        """The contexts this parameter is (or, when deferred, will be) initialized on."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError("Parameter '%s' has not been initialized" % self.name)
        return self._ctx_list

    def _get_row_sparse(self, arr_list, ctx, row_id):
        if not isinstance(row_id, ndarray.NDArray):
            raise TypeError('row_id must have NDArray type, but %s is given' % type(row_id))
        if not self._trainer:
            raise RuntimeError("Cannot get row_sparse data for Parameter '%s' when no Trainer "
                               "is created with it." % self.name)
        results = self._check_and_get(arr_list, ctx)
        self._trainer._row_sparse_pull(self, results, row_id)  # pylint: disable=protected-access
        return results

    def row_sparse_data(self, row_id):
        """The rows ``row_id`` of a 'row_sparse' parameter, on ``row_id``'s context."""
        if self._stype != 'row_sparse':
            raise RuntimeError('Cannot return a copy of Parameter %s via row_sparse_data() '
                               'because its storage type is %s. Please use data() instead.'
                               % (self.name, self._stype))
        return self._get_row_sparse(self._data, row_id.context, row_id)

    def list_row_sparse_data(self, row_id):
        """The rows ``row_id`` of a 'row_sparse' parameter on every context."""
        if self._stype != 'row_sparse':
            raise RuntimeError("Cannot return copies of Parameter '%s' on all contexts via "
                               "list_row_sparse_data() because its storage type is %s. Please "
                               "use data() instead." % (self.name, self._stype))
        return self._get_row_sparse(self._data, list, row_id)

    # ---- initialization -----------------------------------------------------
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
        ctx = _as_ctx_list(ctx)
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
        ctx = _as_ctx_list(ctx)
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

    def var(self):
        """The ``mx.sym.Variable`` of this parameter (created once)."""
        if self._var is None:
            self._var = symbol.var(self.name, shape=self.shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult,
                                   init=self.init, stype=self._stype)
        return self._var

    def cast(self, dtype):
        """Cast the value and gradient (and later-created arrays) to ``dtype``."""
        self._dtype = dtype
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [arr.astype(dtype) for arr in self._data]
            if self._grad is None:
                return
            self._grad = [arr.astype(dtype) for arr in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


class Constant(Parameter):
    """A Parameter holding a fixed value: no gradient and ignored by Trainer (``set_data``
    still changes it).

    Parameters
    ----------
    name : str
    value : array-like or NDArray
    """

    def __init__(self, name, value):
        if not isinstance(value, ndarray.NDArray):
            value = ndarray.array(value)
        self.value = value
        fixed = self.value

        class _ConstantInit(initializer.Initializer):
            def _init_weight(self, _, arr):
                fixed.copyto(arr)

        init_name = 'Constant_%s_%d' % (name, id(self))
        initializer.alias(init_name)(_ConstantInit)
        super().__init__(name, grad_req='null', shape=value.shape, dtype=value.dtype,
                         init=init_name)

    def __repr__(self):
        return 'Constant %s (shape=%s, dtype=%s)' % (self.name, self.shape, self.dtype)

    @property
    def grad_req(self):
        """Always 'null'."""
        return 'null'

    @grad_req.setter
    def grad_req(self, req):
        if req != 'null':
            warnings.warn('Constant parameter "%s" does not support grad_req other than "null", '
                          'and new value "%s" is ignored.' % (self.name, req))
