"""The Optimizer base class: learning rate and weight decay bookkeeping, update counters, registry.

Attribute names are MXNet's (``lr``, ``wd``, ``lr_mult``, ``wd_mult``, ``idx2name``,
``_index_update_count``...) because optimizers are pickled into ``.states`` files
(``Updater.get_states(dump_optimizer=True)``) that MXNet and mxmod must both read."""
import warnings

import numpy as np

from ..argcheck import real_number, number_if_numeric, as_number, ArgumentTypeError
from ..registry import family
from .hyperparams import NUMERIC_HYPERPARAMETERS, check_hyperparameters
from .lazy import sparse_aware

__all__ = ['Optimizer', 'register', 'create']


class Optimizer(object):
    """Base class of all optimizers.

    Parameters
    ----------
    rescale_grad : float, optional
        Multiplies every gradient before the update (often ``1/batch_size``).
    param_idx2name : dict of int to str, optional
        Names of the parameters by update index; parameters whose name ends in neither
        ``_weight`` nor ``_gamma`` get no weight decay.
    wd : float, optional
        Weight decay (L2 regularization) coefficient.
    clip_gradient : float, optional
        Clip the rescaled gradient to ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional
        The learning rate; overrides ``lr_scheduler.base_lr``. Defaults to 0.01 when neither a
        learning rate nor a scheduler is given.
    lr_scheduler : LRScheduler, optional
        Schedule queried with ``num_update`` at every update.
    sym : Symbol, optional
        The network; its variables' ``__lr_mult__`` / ``__wd_mult__`` attributes set multipliers.
    begin_num_update : int, optional
        Initial value of the update counters.
    multi_precision : bool, optional
        Keep float32 master copies of float16 weights and update those.
    param_dict : dict of int to Parameter, optional
        Objects with ``lr_mult`` / ``wd_mult`` attributes by index (not pickled).
    """

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0.,
                 clip_gradient=None, learning_rate=None,
                 lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        what = type(self).__name__
        learning_rate = real_number(learning_rate, '%s: learning_rate' % what, minimum=0,
                                    allow_none=True)
        rescale_grad = real_number(rescale_grad, '%s: rescale_grad' % what)
        wd = real_number(wd, '%s: wd' % what)
        clip_gradient = real_number(clip_gradient, '%s: clip_gradient' % what, allow_none=True)
        if lr_scheduler is not None and not callable(lr_scheduler):
            raise ArgumentTypeError('%s: lr_scheduler must be an LRScheduler, got %r'
                                    % (what, lr_scheduler))
        if isinstance(begin_num_update, bool) or not isinstance(begin_num_update, int) \
                or begin_num_update < 0:
            raise ArgumentTypeError('%s: begin_num_update must be an int >= 0, got %r'
                                    % (what, begin_num_update))
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None:
            if lr_scheduler.base_lr != learning_rate:
                warnings.warn(UserWarning('learning rate from ``lr_scheduler`` has been '
                                          'overwritten by ``learning_rate`` in optimizer.'))
                lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError('param_idx2name should be a dict of param indexes to names, got %s'
                            % type(param_idx2name).__name__)
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = False
        self.set_lr_mult({})
        self.set_wd_mult({})

    opt_registry = {}  # the Optimizer family's name table, installed below
    sparse_update_rule = None   # when a row_sparse gradient updates only its rows (see .lazy)

    def __init_subclass__(cls, **kwargs):
        """mxmod's optimizers take sparse weights, gradients and states (see :mod:`.lazy`)."""
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith('mxmod.'):
            for name in ('update', 'update_multi_precision'):
                fn = cls.__dict__.get(name)
                if fn is not None and not getattr(fn, 'sparse_aware', False):
                    setattr(cls, name, sparse_aware(fn))

    @staticmethod
    def register(klass):
        """Register an optimizer class under its lower-cased class name.

        Parameters
        ----------
        klass : type
            A subclass of Optimizer.

        Returns
        -------
        type
            ``klass`` (so this works as a decorator).
        """
        if not isinstance(klass, type):
            raise TypeError('Optimizer.register expects a class, got %r' % (klass,))
        name = klass.__name__.lower()
        old = Optimizer.opt_registry.get(name)
        if old is not None and old is not klass:
            warnings.warn('WARNING: New optimizer %s.%s is overriding existing optimizer %s.%s'
                          % (klass.__module__, klass.__name__, old.__module__, old.__name__))
        return _REGISTRY.register(klass)

    @staticmethod
    def create_optimizer(name, **kwargs):
        """Create an optimizer from its registered name (case-insensitive).

        Parameters
        ----------
        name : str
            The optimizer's name ('sgd', 'adam', ...).
        **kwargs
            Constructor arguments.

        Returns
        -------
        Optimizer
        """
        if not isinstance(name, str):
            return _REGISTRY.create(name, **kwargs)
        if name.lower() not in Optimizer.opt_registry:
            raise ValueError('Cannot find optimizer %s; registered optimizers are: %s'
                             % (name, ', '.join(sorted(Optimizer.opt_registry))))
        check_hyperparameters(Optimizer.opt_registry[name.lower()], name, kwargs, Optimizer)
        return Optimizer.opt_registry[name.lower()](**kwargs)

    @property
    def learning_rate(self):
        """The current learning rate (the scheduler's value at ``num_update`` if there is one)."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def create_state(self, index, weight):
        """Create the auxiliary state (momentum...) of one weight; None when there is none.

        Parameters
        ----------
        index : int
            The weight's update index.
        weight : NDArray
            The weight.
        """
        return None

    def create_state_multi_precision(self, index, weight):
        """Create the state of a weight, as ``(float32 master copy, state)`` for float16 weights
        when ``multi_precision`` is on.

        Parameters
        ----------
        index : int
            The weight's update index.
        weight : NDArray
            The weight.
        """
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            return (master, self.create_state(index, master))
        _warn_float16(weight, self.multi_precision, '')
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Update ``weight`` in place from ``grad`` and ``state``.

        Parameters
        ----------
        index : int
            The weight's update index (selects lr/wd multipliers and the update counter).
        weight : NDArray
            The parameter, updated in place.
        grad : NDArray
            Its gradient.
        state : object
            What ``create_state`` returned.
        """
        raise NotImplementedError('%s must implement update()' % type(self).__name__)

    def update_multi_precision(self, index, weight, grad, state):
        """``update`` that goes through the float32 master copy for float16 weights when
        ``multi_precision`` is on (state from ``create_state_multi_precision``)."""
        if self.multi_precision and weight.dtype == np.float16:
            master, inner = state
            self.update(index, master, grad.astype(np.float32), inner)
            weight._data[...] = master._data.astype(weight._data.dtype)
        else:
            self.update(index, weight, grad, state)

    def set_learning_rate(self, lr):
        """Set the learning rate (only allowed without an lr_scheduler).

        Parameters
        ----------
        lr : float
            The new learning rate.
        """
        if self.lr_scheduler is not None:
            raise UserWarning('LRScheduler of the optimizer has already been defined. Note that '
                              'set_learning_rate can mutate the value of the learning rate of the '
                              'optimizer only when the LRScheduler of the optimizer is undefined.')
        self.lr = real_number(lr, 'set_learning_rate: lr', minimum=0)

    def set_lr_scale(self, args_lrscale):  # pylint: disable=unused-argument
        """[DEPRECATED] Use set_lr_mult instead."""
        raise DeprecationWarning('set_lr_scale is deprecated; use set_lr_mult')

    def set_lr_mult(self, args_lr_mult):
        """Set learning-rate multipliers by parameter name or index.

        Starts from the symbol's ``__lr_mult__`` attributes (when ``sym`` was given), then applies
        ``args_lr_mult``.

        Parameters
        ----------
        args_lr_mult : dict of str or int to float
        """
        self.lr_mult = self._attr_mults('__lr_mult__')
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Set weight-decay multipliers by parameter name or index.

        Every parameter in ``idx2name`` whose name ends in neither ``_weight`` nor ``_gamma`` gets
        0; then the symbol's ``__wd_mult__`` attributes, then ``args_wd_mult``, apply.

        Parameters
        ----------
        args_wd_mult : dict of str or int to float
        """
        self.wd_mult = {}
        for name in self.idx2name.values():
            if not (name.endswith('_weight') or name.endswith('_gamma')):
                self.wd_mult[name] = 0.0
        self.wd_mult.update(self._attr_mults('__wd_mult__'))
        self.wd_mult.update(args_wd_mult)

    def _attr_mults(self, key):
        mults = {}
        if self.sym_info:
            attrs, arg_names = self.sym_info
            for name in arg_names:
                if name in attrs and key in attrs[name]:
                    mults[name] = float(attrs[name][key])
        return mults

    def _set_current_context(self, device_id):
        """Switch to the update counters of device ``device_id`` (one set per device)."""
        counts = self._all_index_update_counts.get(device_id)
        if counts is None:
            counts = self._all_index_update_counts[device_id] = {}
        if self.__dict__.get('_index_update_count') is not counts:
            self._index_update_count = counts

    def _update_count(self, index):
        """Count one update of ``index`` (int or list) and advance ``num_update``."""
        indices = index if isinstance(index, (list, tuple)) else [index]
        counts = self._index_update_count
        get, begin = counts.get, self.begin_num_update
        top = self.num_update
        for idx in indices:
            count = get(idx, begin) + 1
            counts[idx] = count
            if count > top:             # as max(count, num_update)
                top = count
        self.num_update = top

    def _get_mults(self, base, indices, mults, attr):
        return [base if factor is None else base * factor
                for factor in self._mult_factors(indices, mults, attr)]

    def _mult_factors(self, indices, mults, attr):
        """Per index, the multiplier ``_get_mults`` applies to the base value (None: none)."""
        factors = []
        for index in indices:
            if index in self.param_dict:
                factors.append(getattr(self.param_dict[index], attr))
            elif index in mults:
                factors.append(mults[index])
            elif index in self.idx2name:
                factors.append(mults.get(self.idx2name[index], 1.0))
            else:
                factors.append(None)
        return factors

    def _get_lrs(self, indices):
        """Learning rates of ``indices``: the (scheduled) rate times each lr multiplier."""
        return self._get_mults(as_number(self.learning_rate, '%s: lr' % type(self).__name__),
                               indices, self.lr_mult, 'lr_mult')

    def _get_lr(self, index):
        """Learning rate of one index."""
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        """Weight decays of ``indices``: ``wd`` times each wd multiplier."""
        return self._get_mults(as_number(self.wd, '%s: wd' % type(self).__name__), indices,
                               self.wd_mult, 'wd_mult')

    def _get_wd(self, index):
        """Weight decay of one index."""
        return self._get_wds([index])[0]

    def __setattr__(self, name, value):
        # ``optimizer.lr = x`` is how MXNet code changes the rate: text, or a NaN, infinite or
        # negative number, is refused here rather than training on it. Other objects pass, as
        # in MXNet (subclasses keep symbols there and read them in their own _get_lr); they are
        # checked where they are used as numbers.
        if name == 'lr' and value is not None:
            value = number_if_numeric(value, '%s: lr' % type(self).__name__, minimum=0)
        elif name == 'wd' or name in NUMERIC_HYPERPARAMETERS and value is not None:
            value = number_if_numeric(value, '%s: %s' % (type(self).__name__, name))
        object.__setattr__(self, name, value)

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop('param_dict', None)
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}
        # attributes that optimizers pickled by older MXNet versions do not have
        for key, default in (('allow_np_array', False), ('aggregate_num', 0),
                             ('multi_precision', False), ('sym_info', ())):
            state.setdefault(key, default)
        if '_all_index_update_counts' not in state and '_index_update_count' in state:
            self._all_index_update_counts = {0: self._index_update_count}


def _warn_float16(weight, multi_precision, name):
    if weight.dtype == np.float16 and not multi_precision:
        warnings.warn('Accumulating with float16 in optimizer can lead to poor accuracy or slow '
                      'convergence. Consider using multi_precision=True option of the %s'
                      'optimizer' % (name + ' ' if name else ''))


Optimizer.update_multi_precision = sparse_aware(Optimizer.update_multi_precision)
_REGISTRY = family(Optimizer, 'optimizer')
Optimizer.opt_registry = _REGISTRY.table
register = Optimizer.register  # pylint: disable=invalid-name
create = Optimizer.create_optimizer  # pylint: disable=invalid-name
