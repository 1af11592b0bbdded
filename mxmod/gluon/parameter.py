"""Gluon's Parameter: a named weight of a Block. Imperatively it holds one copy of its value
(and of its gradient, marked for autograd) per Context once initialized, possibly deferred
until the first forward pass reveals its shape; symbolically it is an ``mx.sym.Variable``."""
import warnings

from .. import autograd, context, initializer, ndarray, symbol
from ..base import MXNetError, mx_real_t
from ..util import is_np_shape
from .errors import CheckError, DeferredInitializationError
from .parameter_values import ParameterValues

__all__ = ['DeferredInitializationError', 'Parameter', 'Constant', 'symbolic_only_error',
           'CheckError', 'tensor_types']

_GRAD_REQS = ('write', 'add', 'null')
_STYPES = ('default', 'row_sparse', 'csr')

tensor_types = (symbol.Symbol, ndarray.NDArray)


def symbolic_only_error(what):
    """The MXNetError raised when ``what`` (a recurrent cell of mx.gluon.rnn) is used on
    NDArrays: mxmod implements those cells for Symbols only."""
    return MXNetError('%s: mxmod implements mx.gluon.rnn for symbolic use only: call cells on '
                      'mx.sym Symbols and train the resulting graph with mx.mod.Module (or bind '
                      'it); imperative NDArray use of the recurrent cells is not supported' % what)


class Parameter(ParameterValues):
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
