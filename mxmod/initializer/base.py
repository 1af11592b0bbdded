"""The Initializer base class, InitDesc, the registry, and the Load / Mixed wrappers.

``Initializer.__call__(desc, arr)`` chooses how to fill a parameter: an ``__init__`` attribute
on the variable (a JSON ``[name, kwargs]`` string) wins; otherwise the name's suffix decides
(weight -> ``_init_weight``, bias/beta -> 0, gamma -> 1, ...)."""
import json
import logging
import re
import warnings
from math import sqrt

import numpy as np

from .. import rng
from ..base import string_types
from ..ndarray import NDArray, from_xp
from ..registry import family

__all__ = ['InitDesc', 'Initializer', 'register', 'alias', 'create', 'Load', 'Mixed']


class InitDesc(str):
    """A parameter name (a str) carrying the variable's attributes.

    Parameters
    ----------
    name : str
        Name of the variable.
    attrs : dict of str to str, optional
        Attributes of the variable (``Symbol.attr_dict()`` entry).
    global_init : Initializer, optional
        The initializer to fall back to (set by ``Initializer.__call__`` when missing).
    """

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super(InitDesc, cls).__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


def assign(arr, values):
    """Write a numpy/cupy array living on ``arr``'s device into ``arr`` (cast to its dtype)."""
    arr[:] = from_xp(values.astype(arr.dtype, copy=False), arr.context)


def _norm_stat(arr):
    """Default verbose statistic: ||x|| / sqrt(size), in the array's float precision."""
    data = arr.asnumpy()
    dtype = data.dtype if data.dtype.kind == 'f' else np.dtype(np.float32)
    norm = dtype.type(np.sqrt(np.sum(np.square(data.astype(np.float64)))))
    return str(norm / dtype.type(sqrt(data.size)))


# (suffix, method) rules of the InitDesc path, checked in order.
_SUFFIX_RULES = (('weight', '_init_weight'), ('bias', '_init_bias'), ('gamma', '_init_gamma'),
                 ('beta', '_init_beta'), ('min', '_init_zero'), ('max', '_init_one'),
                 ('weight_quantize', '_init_quantized_weight'),
                 ('bias_quantize', '_init_quantized_bias'), ('moving_mean', '_init_zero'),
                 ('moving_var', '_init_one'), ('moving_inv_var', '_init_zero'),
                 ('moving_avg', '_init_zero'))


class Initializer(object):
    """Base class of the initializers.

    Subclasses implement ``_init_weight(name, arr)``; biases, betas, gammas and the other
    recognised suffixes have fixed rules.

    Parameters
    ----------
    **kwargs
        The constructor arguments, recorded for ``dumps``.
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Switch logging of every initialized array on or off.

        Parameters
        ----------
        verbose : bool, default False
        print_func : callable(NDArray) -> str, optional
            Statistic to log; defaults to ``norm(x) / sqrt(x.size)``.

        Returns
        -------
        Initializer
            self.
        """
        self._verbose = verbose
        self._print_func = print_func if print_func is not None else _norm_stat
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info('Initialized %s as %s: %s', desc, init, self._print_func(arr))

    def dumps(self):
        """Return the JSON string ``["<lower-case class name>", kwargs]`` used by ``create``."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        """Initialize ``arr`` according to ``desc``.

        Parameters
        ----------
        desc : InitDesc or str
            The parameter; a plain str takes the deprecated name-pattern path.
        arr : NDArray
            The array to fill in place.
        """
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get('__init__', '')
        if init:
            try:
                created = create(init)
            except (ValueError, TypeError, KeyError) as err:
                raise ValueError('cannot initialize %r: its init attribute %r names no '
                                 'initializer (%s)' % (str(desc), init, err)) from None
            created._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, method in _SUFFIX_RULES:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr):
        """Deprecated ``init(name, arr)`` path: dispatch on name patterns."""
        warnings.warn('Calling an initializer with init(str, NDArray) is deprecated; use '
                      'init(mx.init.InitDesc(...), NDArray) instead.', DeprecationWarning,
                      stacklevel=3)
        if not isinstance(name, string_types):
            raise TypeError('initializer: name must be a str, got %s' % type(name).__name__)
        if not isinstance(arr, NDArray):
            raise TypeError('initializer: arr must be an NDArray, got %s' % type(arr).__name__)
        if name.startswith('upsampling'):
            self._init_bilinear(name, arr)
        elif name.startswith('stn_loc') and name.endswith('weight'):
            self._init_zero(name, arr)
        elif name.startswith('stn_loc') and name.endswith('bias'):
            self._init_loc_bias(name, arr)
        else:
            for suffix, method in _LEGACY_RULES:
                if name.endswith(suffix):
                    getattr(self, method)(name, arr)
                    return
            self._init_default(name, arr)

    def _init_bilinear(self, _, arr):
        arr[:] = bilinear_kernel(arr.shape)

    def _init_loc_bias(self, name, arr):
        if arr.shape[0] != 6:
            raise ValueError('%s: a spatial-transformer loc bias needs 6 values, got shape %s'
                             % (name, arr.shape))
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    def _init_bias(self, _, arr):
        arr[:] = 0.0

    def _init_quantized_bias(self, _, arr):
        arr[:] = 0

    def _init_gamma(self, _, arr):
        arr[:] = 1.0

    def _init_beta(self, _, arr):
        arr[:] = 0.0

    def _init_weight(self, name, arr):
        """Fill a weight; every concrete initializer defines it."""
        raise NotImplementedError('%s does not define _init_weight (needed for %s)'
                                  % (type(self).__name__, name))

    def _init_quantized_weight(self, _, arr):
        values = rng.generator(arr.context).randint(-127, 127, size=arr.shape)
        assign(arr, values.astype(np.int8))

    def _init_default(self, name, _):
        raise ValueError(
            'Unknown initialization pattern for %s. Default initialization is limited to names '
            'ending in "weight", "bias", "gamma" (1.0), "beta" (0.0), "min", "max" and the '
            'moving statistics; give the variable an initializer with '
            'mx.sym.Variable(name, init=mx.init.*)' % name)

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = None


_LEGACY_RULES = (('bias', '_init_bias'), ('gamma', '_init_gamma'), ('beta', '_init_beta'),
                 ('weight', '_init_weight'), ('moving_mean', '_init_zero'),
                 ('moving_var', '_init_one'), ('moving_inv_var', '_init_zero'),
                 ('moving_avg', '_init_zero'), ('min', '_init_zero'), ('max', '_init_one'))


def bilinear_kernel(shape):
    """The bilinear-upsampling kernel for a 4-D weight ``shape`` (float32 numpy array)."""
    if len(shape) != 4:
        raise ValueError('bilinear initialization needs a 4-D weight, got shape %s' % (shape,))
    f = np.ceil(shape[3] / 2.)
    c = (2 * f - 1 - f % 2) / (2. * f)
    cols = 1 - np.abs(np.arange(shape[3]) / f - c)
    rows = 1 - np.abs(np.arange(shape[2]) / f - c)
    kernel = (rows[:, None] * cols[None, :]).astype(np.float32)
    return np.ascontiguousarray(np.broadcast_to(kernel, shape))


_INITS = family(Initializer, 'initializer')
alias = _INITS.alias


def register(klass):
    """Register an Initializer subclass under its lower-cased class name.

    Parameters
    ----------
    klass : type
        A subclass of Initializer.

    Returns
    -------
    type
        ``klass`` (usable as a decorator).
    """
    return _INITS.register(klass)


def create(initializer, *args, **kwargs):
    """Create an initializer from a name, a JSON string, a config dict or an instance.

    Parameters
    ----------
    initializer : str, dict or Initializer
        A registered name (case-insensitive), ``'["name", {kwargs}]'`` (as ``dumps`` writes),
        ``'{"initializer": name, ...}'`` / a dict with an ``initializer`` key, or an instance
        (returned as is).
    *args, **kwargs
        Constructor arguments.

    Returns
    -------
    Initializer
    """
    if isinstance(initializer, string_types) and initializer.startswith('{'):
        initializer = json.loads(initializer)
    if isinstance(initializer, dict) and 'initializer' in initializer:
        config = dict(initializer)
        config.update(kwargs)
        return create(config.pop('initializer'), *args, **config)
    return _INITS.create(initializer, *args, **kwargs)


class Load(object):
    """Initialize from saved parameters; other names fall back to ``default_init``.

    ``arg:`` / ``aux:`` prefixes of the saved names are dropped.

    Parameters
    ----------
    param : str or dict of str to NDArray
        A ``.params`` file name or a name -> array dict.
    default_init : Initializer, optional
        Used for names that are not in ``param``.
    verbose : bool, default False
        Log where each array came from.
    """

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, string_types):
            from ..ndarray import load  # pylint: disable=import-outside-toplevel
            param = load(param)
        if not isinstance(param, dict):
            raise TypeError('Load needs a dict of name -> NDArray (or a .params file holding '
                            'one), got %s' % type(param).__name__)
        self.param = {}
        for name, arr in param.items():
            if name.startswith('arg:') or name.startswith('aux:'):
                name = name[4:]
            self.param[name] = arr
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            if tuple(arr.shape) != tuple(self.param[name].shape):
                raise ValueError('Parameter %s cannot be initialized from loading. Shape '
                                 'mismatch, target %s vs loaded %s'
                                 % (name, tuple(arr.shape), tuple(self.param[name].shape)))
            arr[:] = self.param[name]
            if self.verbose:
                logging.info('Initialized %s by loading', name)
            return
        if self.default_init is None:
            raise ValueError('Cannot initialize %s: it is not in the loaded parameters and no '
                             'default_init was given' % name)
        self.default_init(name, arr)
        if self.verbose:
            logging.info('Initialized %s by default', name)


class Mixed(object):
    """Initialize each parameter with the initializer of the first pattern its name matches.

    Parameters
    ----------
    patterns : list of str
        Regular expressions, tried in order with ``re.match``.
    initializers : list of Initializer
        One per pattern.
    """

    def __init__(self, patterns, initializers):
        if len(patterns) != len(initializers):
            raise ValueError('Mixed: %d patterns but %d initializers'
                             % (len(patterns), len(initializers)))
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError('Parameter name %s did not match any pattern. Consider adding a ".*" '
                         'pattern at the end with a default Initializer.' % name)
