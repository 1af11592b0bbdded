"""Checks of the hyperparameters an optimizer is created or changed with (``create`` and the
attributes ``Optimizer.__setattr__`` guards): text or NaN is refused at the call that gives it,
not when the first update computes with it."""
import inspect
import numbers

import numpy as np

from ..argcheck import ArgumentTypeError, ArgumentValueError

__all__ = ['NUMERIC_HYPERPARAMETERS', 'check_hyperparameters']


# numeric hyperparameters of the optimizers: a string or NaN there is refused when set (the
# constructors set them), not when the first update computes with it
NUMERIC_HYPERPARAMETERS = frozenset((
    'momentum', 'beta1', 'beta2', 'epsilon', 'rho', 'gamma1', 'gamma2', 'lamda', 'lamda1',
    'eta', 'eps', 'beta', 'schedule_decay', 'float_stable_eps', 'lower_bound', 'upper_bound',
    'wd_lh'))


def check_hyperparameters(klass, name, kwargs, base):
    """Arguments of ``create(name, **kwargs)`` whose default is a number must be finite numbers,
    not text (the base class ``base`` checks its own: learning_rate, wd, rescale_grad,
    clip_gradient); a keyword none of the classes takes is refused for mxmod's own optimizers
    (except those that hand their keywords to another optimizer: ``forwards_arguments``)."""
    try:
        params = dict(inspect.signature(klass.__init__).parameters)
    except (TypeError, ValueError):
        return
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        params.update(inspect.signature(base.__init__).parameters)
        unknown = sorted(set(kwargs) - set(params) - {'self'})
        if unknown and klass.__init__ is not base.__init__ and not getattr(
                klass, 'forwards_arguments', False) and all(
                getattr(k.__init__, '__module__', '').startswith('mxmod.')
                for k in klass.__mro__ if k is not object):
            raise ArgumentTypeError('optimizer %r has no parameter %s; its parameters are %s'
                                    % (name, ', '.join(map(repr, unknown)), ', '.join(
                                        sorted(k for k, p in params.items() if k != 'self'
                                               and p.kind == p.POSITIONAL_OR_KEYWORD))))
    for key, value in kwargs.items():
        default = params[key].default if key in params else None
        if isinstance(default, numbers.Real) and not isinstance(default, bool) \
                and isinstance(value, str):
            raise ArgumentTypeError('optimizer %r: %s must be a number, got %r (str)'
                                    % (name, key, value))
        if isinstance(value, float) and not np.isfinite(value):
            raise ArgumentValueError('optimizer %r: %s must be a finite number, got %r'
                                     % (name, key, value))
