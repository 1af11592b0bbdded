"""Gluon's Parameter and ParameterDict for symbolic use: a Parameter is a named description
(shape, dtype, initializer, gradient request, multipliers) that becomes an ``mx.sym.Variable``;
its values live in the executor or Module that binds the graph, never in the Parameter."""
from collections import OrderedDict

import numpy as np

from ..base import MXNetError, mx_real_t
from .. import symbol

__all__ = ['Parameter', 'ParameterDict', 'symbolic_only_error']

_GRAD_REQS = ('write', 'add', 'null')
_STYPES = ('default', 'row_sparse', 'csr')


def symbolic_only_error(what):
    """The MXNetError raised when ``what`` is used imperatively (with NDArrays).

    Parameters
    ----------
    what : str
        The call that was attempted, e.g. 'LSTMCell(NDArray)' or 'Parameter.data()'.

    Returns
    -------
    MXNetError
    """
    return MXNetError('%s: mxmod implements mx.gluon.rnn for symbolic use only: call cells on '
                      'mx.sym Symbols and train the resulting graph with mx.mod.Module (or bind '
                      'it); imperative NDArray use of Gluon is not supported' % what)


def _merge_shapes(wanted, stored):
    """Join two shapes where 0 (or -1) marks an unknown dimension; None if they conflict."""
    if len(wanted) != len(stored):
        return None
    merged = []
    for new, old in zip(wanted, stored):
        if new == old or new in (0, -1):
            merged.append(old)
        elif old in (0, -1):
            merged.append(new)
        else:
            return None
    return tuple(merged)


class Parameter(object):
    """A named parameter of a Gluon block, used through its symbolic variable.

    Parameters
    ----------
    name : str
        Name of the parameter (and of its variable).
    grad_req : {'write', 'add', 'null'}, default 'write'
        How the gradient is written when the graph is bound.
    shape : int or tuple of int, optional
        Shape; 0 marks a dimension that shape inference fills in.
    dtype : numpy.dtype or str, default 'float32'
        Data type.
    lr_mult : float, default 1.0
        Learning-rate multiplier (the variable's ``__lr_mult__``).
    wd_mult : float, default 1.0
        Weight-decay multiplier (the variable's ``__wd_mult__``).
    init : Initializer or str, optional
        Initializer of this parameter (the variable's ``__init__``); the global one when None.
    allow_deferred_init : bool, default False
        Accepted for compatibility; shapes are always inferred when the graph is bound.
    differentiable : bool, default True
        When False, ``grad_req`` is always 'null'.
    stype : {'default', 'row_sparse', 'csr'}, default 'default'
        Storage type of the variable.
    grad_stype : {'default', 'row_sparse', 'csr'}, default 'default'
        Storage type of the gradient.
    """

    def __init__(self, name, grad_req='write', shape=None, dtype=mx_real_t,
                 lr_mult=1.0, wd_mult=1.0, init=None, allow_deferred_init=False,
                 differentiable=True, stype='default', grad_stype='default'):
        for label, value in (('stype', stype), ('grad_stype', grad_stype)):
            if value not in _STYPES:
                raise ValueError("%s of Parameter '%s' must be one of %s, got %r"
                                 % (label, name, _STYPES, value))
        self._var = None
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
        self._stype = stype
        self._grad_stype = grad_stype

    def __repr__(self):
        return 'Parameter %s (shape=%s, dtype=%s)' % (self.name, self.shape, self.dtype)

    @property
    def grad_req(self):
        """How the gradient is written: 'write', 'add' or 'null'."""
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in _GRAD_REQS:
            raise ValueError("grad_req of Parameter '%s' must be one of %s, got %r"
                             % (self.name, _GRAD_REQS, req))
        self._grad_req = req if self._differentiable else 'null'

    @property
    def dtype(self):
        """Data type of the parameter."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        """Shape of the parameter (0 for dimensions not known yet), or None."""
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        new_shape = tuple(new_shape)
        old_shape = self._shape
        if old_shape is not None and (len(old_shape) != len(new_shape) or any(
                old not in (0, -1, new) for new, old in zip(new_shape, old_shape))):
            raise ValueError("Parameter '%s' has shape %s, which is incompatible with the "
                             "new shape %s" % (self.name, old_shape, new_shape))
        self._shape = new_shape

    def cast(self, dtype):
        """Change the data type (of the variable created afterwards).

        Parameters
        ----------
        dtype : str or numpy.dtype
        """
        self._dtype = dtype
        self._var = None

    def var(self):
        """The ``mx.sym.Variable`` of this parameter (created once, then reused).

        Returns
        -------
        Symbol
            Named ``self.name``, carrying shape, dtype, lr_mult, wd_mult, init and storage type.
        """
        if self._var is None:
            self._var = symbol.var(self.name, shape=self.shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult,
                                   init=self.init, stype=self._stype)
        return self._var

    def initialize(self, init=None, ctx=None, default_init=None, force_reinit=False):
        """Not available: values are created when the symbolic graph is bound."""
        raise symbolic_only_error("Parameter '%s'.initialize()" % self.name)

    def data(self, ctx=None):
        """Not available: the values live in the bound executor or Module."""
        raise symbolic_only_error("Parameter '%s'.data()" % self.name)

    def grad(self, ctx=None):
        """Not available: the gradients live in the bound executor or Module."""
        raise symbolic_only_error("Parameter '%s'.grad()" % self.name)

    def set_data(self, data):
        """Not available: set values on the Module (``set_params``) instead."""
        raise symbolic_only_error("Parameter '%s'.set_data()" % self.name)


class ParameterDict(object):
    """An ordered dictionary of Parameters whose names share a prefix.

    Parameters
    ----------
    prefix : str, default ''
        Prepended to the name of every Parameter created by ``get``.
    shared : ParameterDict, optional
        Looked up before creating a Parameter, for sharing weights with another block.
    """

    def __init__(self, prefix='', shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        head = self._prefix + ' ' if self._prefix else ''
        body = '\n'.join('  %r' % param for param in self.values())
        return '%s(\n%s\n)' % (head, body)

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def items(self):
        """(name, Parameter) pairs in creation order."""
        return self._params.items()

    def keys(self):
        """Parameter names in creation order."""
        return self._params.keys()

    def values(self):
        """Parameters in creation order."""
        return self._params.values()

    @property
    def prefix(self):
        """The prefix prepended to names of Parameters created by ``get``."""
        return self._prefix

    def _lookup(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name, **kwargs):
        """The Parameter ``prefix + name``: found here, then in ``shared``, else created.

        Parameters
        ----------
        name : str
            Name without this dict's prefix.
        **kwargs
            Arguments of ``Parameter`` for a new one; for an existing one, attributes to check
            (shapes with unknown dimensions are merged) or to fill in where still None.

        Returns
        -------
        Parameter
        """
        full = self._prefix + name
        param = self._lookup(full)
        if param is None:
            param = Parameter(full, **kwargs)
            self._params[full] = param
            return param
        for key, value in kwargs.items():
            _reconcile(param, key, value)
        return param

    def update(self, other):
        """Add every Parameter of ``other``; a different Parameter under a known name is an error.

        Parameters
        ----------
        other : ParameterDict or dict of str to Parameter
        """
        for key, value in other.items():
            if key in self._params and self._params[key] is not value:
                raise ValueError("cannot update ParameterDict: it holds a different Parameter "
                                 "named '%s'" % key)
        for key, value in other.items():
            self._params[key] = value

    def setattr(self, name, value):
        """Set attribute ``name`` (e.g. 'grad_req', 'lr_mult') of every Parameter.

        Parameters
        ----------
        name : str
        value : object
        """
        for param in self.values():
            setattr(param, name, value)

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Not available: pass the initializer to ``Module.init_params`` instead."""
        raise symbolic_only_error('ParameterDict.initialize()')

    def save(self, filename, strip_prefix=''):
        """Not available: save the bound Module's parameters (``save_checkpoint``) instead."""
        raise symbolic_only_error('ParameterDict.save()')

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix='', cast_dtype=False, dtype_source='current'):
        """Not available: load into the Module (``mx.model.load_checkpoint``) instead."""
        raise symbolic_only_error('ParameterDict.load()')


def _reconcile(param, key, value):
    """Check ``value`` against ``param.<key>`` for ParameterDict.get; fill it in when unset."""
    existing = getattr(param, key, None)
    if existing is None:
        setattr(param, key, value)
        return
    if key == 'shape' and value is not None:
        merged = _merge_shapes(tuple(value), existing)
        if merged is not None:
            param._shape = merged
            return
    elif key == 'dtype' and np.dtype(value) == np.dtype(existing):
        return
    if value is not None and value != existing:
        raise MXNetError("cannot retrieve Parameter '%s': %s %r was asked for but it has %r"
                         % (param.name, key, value, existing))
