"""Gluon's ParameterDict: the Parameters of a Block (and its children) by name, with the
operations on all of them at once (initialize, zero_grad, reset_ctx, setattr, save, load)."""
from collections import OrderedDict

import numpy as np

from .. import initializer, ndarray
from .parameter import CheckError, Constant, Parameter
from .utils import _brief_print_list, _indent

__all__ = ['ParameterDict']

_NAMING_HELP = ('For more info on naming, please see '
                'https://mxnet.io/api/python/docs/tutorials/packages/gluon/blocks/naming.html')


def _merge_shapes(wanted, stored):
    """Join two shapes where 0 (or -1) marks an unknown dimension; None if they conflict."""
    if len(wanted) != len(stored):
        return None
    merged = []
    for new, old in zip(wanted, stored):
        if new != old and new > 0 and old > 0:
            return None
        merged.append(old if new in (0, -1) else new)
    return tuple(merged)


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
        body = '\n'.join(_indent('  %s' % param, 2) for param in self.values())
        return '%s(\n%s\n)' % (head, body)

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

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

    def _get_impl(self, name):
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
        param = self._get_impl(full)
        if param is None:
            param = Parameter(full, **kwargs)
            self._params[full] = param
            return param
        for key, value in kwargs.items():
            existing = getattr(param, key, None)
            if existing is None:
                setattr(param, key, value)
                continue
            if key == 'shape' and value is not None:
                merged = _merge_shapes(tuple(value), tuple(existing))
                if merged is not None:
                    param._shape = merged
                    continue
            elif key == 'dtype' and np.dtype(value) == np.dtype(existing):
                continue
            if value is not None and value != existing:
                raise CheckError("Cannot retrieve Parameter '%s' because desired attribute does "
                                 "not match with stored for attribute '%s': desired '%s' vs "
                                 "stored '%s'." % (full, key, value, existing))
        return param

    def get_constant(self, name, value=None):
        """The Constant ``prefix + name``: found here or in ``shared``, else created from
        ``value``.

        Returns
        -------
        Constant
        """
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            if value is None:
                raise KeyError("No constant named '%s'. Please specify value if you want to "
                               "create a new constant." % full)
            param = Constant(full, value)
            self._params[full] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise CheckError("Parameter '%s' already exists but it is not a constant."
                                 % full)
            if isinstance(value, ndarray.NDArray):
                value = value.asnumpy()
            value = np.asarray(value)
            if param.shape != value.shape or not (param.value.asnumpy() == value).all():
                raise CheckError("Constant '%s' already exists but it's value doesn't match new "
                                 "value" % full)
        return param

    def update(self, other):
        """Add every Parameter of ``other``; a different Parameter under a known name is an
        error."""
        for key, value in other.items():
            if key in self._params and self._params[key] is not value:
                raise CheckError('Cannot update self with other because they have different '
                                 "Parameters with the same name '%s'" % key)
        for key, value in other.items():
            self._params[key] = value

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize every Parameter (``init`` is the default for those without their own).

        Parameters
        ----------
        init : Initializer, default Uniform()
        ctx : Context or list of Context, optional
        verbose : bool, default False
            Log what each parameter was initialized with.
        force_reinit : bool, default False
        """
        if verbose:
            init.set_verbosity(verbose=verbose)
        for param in self.values():
            param.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Set every gradient buffer to 0."""
        for param in self.values():
            param.zero_grad()

    def reset_ctx(self, ctx):
        """Move every Parameter to other context(s)."""
        for param in self.values():
            param.reset_ctx(ctx)

    def list_ctx(self):
        """The contexts any Parameter is initialized on."""
        found = []
        for param in self.values():
            for ctx in param.list_ctx():
                if ctx not in found:
                    found.append(ctx)
        return found

    def setattr(self, name, value):
        """Set attribute ``name`` (e.g. 'grad_req', 'lr_mult') of every Parameter."""
        for param in self.values():
            setattr(param, name, value)

    def save(self, filename, strip_prefix=''):
        """Save the values (on the CPU) to ``filename`` in MXNet's .params format.

        Parameters
        ----------
        filename : str
        strip_prefix : str, default ''
            Removed from the front of every name (each must start with it).
        """
        arrays = {}
        for param in self.values():
            weight = param._reduce()
            if not param.name.startswith(strip_prefix):
                raise ValueError("Prefix '%s' is to be striped before saving, but Parameter's "
                                 "name '%s' does not start with '%s'. this may be due to your "
                                 "Block shares parameters from other Blocks or you forgot to "
                                 "use 'with name_scope()' when creating child blocks. %s"
                                 % (strip_prefix, param.name, strip_prefix, _NAMING_HELP))
            arrays[param.name[len(strip_prefix):]] = weight
        ndarray.save(filename, arrays)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix='', cast_dtype=False, dtype_source='current'):
        """Load values saved by ``save`` (or ``mx.nd.save`` / a checkpoint) from ``filename``.

        Parameters
        ----------
        filename : str
        ctx : Context or list of Context, optional
        allow_missing : bool, default False
            Leave Parameters absent from the file alone instead of failing.
        ignore_extra : bool, default False
            Skip names of the file that are not Parameters here instead of failing.
        restore_prefix : str, default ''
            Prepended to the stored names.
        cast_dtype : bool, default False
        dtype_source : {'current', 'saved'}, default 'current'
        """
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise CheckError("restore_prefix is '%s' but Parameters name '%s' does not "
                                     "start with '%s'. %s"
                                     % (restore_prefix, name, restore_prefix, _NAMING_HELP))
        self.load_dict(ndarray.load(filename), ctx, allow_missing, ignore_extra,
                       restore_prefix, filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix='', filename=None, cast_dtype=False, dtype_source='current'):
        """Load values from a dict of name to NDArray ('arg:' / 'aux:' prefixes dropped)."""
        if isinstance(param_dict, dict):
            pairs = [(key[4:] if key.startswith(('arg:', 'aux:')) else key, value)
                     for key, value in param_dict.items()]
        else:
            pairs = param_dict
        arrays = OrderedDict((restore_prefix + key, value) for key, value in pairs)
        source = 'file: %s' % filename if filename else 'param_dict'
        if not allow_missing:
            for name in self.keys():
                if name not in arrays:
                    raise CheckError("Parameter '%s' is missing in %s, which contains "
                                     "parameters: %s. Please make sure source and target "
                                     "networks have the same prefix.%s"
                                     % (name[len(restore_prefix):], source,
                                        _brief_print_list(arrays.keys()), _NAMING_HELP))
        for name, value in arrays.items():
            if name not in self._params:
                if not ignore_extra:
                    raise CheckError("Parameter '%s' loaded from %s is not present in "
                                     "ParameterDict, choices are: %s. Set ignore_extra to True "
                                     "to ignore. Please make sure source and target networks "
                                     "have the same prefix.%s"
                                     % (name[len(restore_prefix):], source,
                                        _brief_print_list(self._params.keys()), _NAMING_HELP))
                continue
            self[name]._load_init(value, ctx, cast_dtype=cast_dtype,  # pylint: disable=protected-access
                                  dtype_source=dtype_source)
