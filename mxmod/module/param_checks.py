"""Checks of what ``init_params`` / ``set_params`` receive, before any parameter is written:
the initializer (a name is created as ``mx.init.create`` does), and the given parameter dicts
(extra names, shapes that are not the network's, values that are not arrays), naming the
parameter."""
from ..argcheck import ArgumentTypeError, ArgumentValueError
from ..base import MXNetError
from ..ndarray import NDArray

__all__ = ['as_initializer', 'check_given']


def as_initializer(initializer):
    """``initializer`` as a callable: a name or JSON config is created (``'xavier'``)."""
    from .. import initializer as init  # pylint: disable=import-outside-toplevel
    if initializer is None or callable(initializer) and not isinstance(initializer, str):
        return initializer
    if isinstance(initializer, (str, dict)):
        try:
            return init.create(initializer)
        except (ValueError, TypeError, KeyError) as err:
            raise ArgumentValueError('init_params: initializer %r cannot be created: %s'
                                     % (initializer, err)) from None
    raise ArgumentTypeError('init_params: initializer must be an Initializer (or its name, such '
                            'as \'xavier\'), got %r (%s)' % (initializer, type(initializer).__name__))


class ExtraParamsError(MXNetError, ValueError):
    """Parameters given that the network does not have (and allow_extra is False)."""


def check_given(own_args, own_auxs, arg_params, aux_params, allow_extra, shapes=True):
    """Refuse given parameters that cannot be set into the network's (``own_*``: name ->
    array of the network; ``shapes``: compare shapes too)."""
    for kind, own, given in (('arg_params', own_args, arg_params),
                             ('aux_params', own_auxs, aux_params)):
        if given is None:
            continue
        if not isinstance(given, dict):
            raise ArgumentTypeError('%s must be a dict of name to NDArray, got %s'
                                    % (kind, type(given).__name__))
        extra = sorted(name for name in given if name not in own)
        if extra and not allow_extra:
            raise ExtraParamsError('Find name "%s" that is not in the %s: %s has %s, which the '
                                   'network does not have (its parameters: %s); pass '
                                   'allow_extra=True to ignore them'
                                   % (extra[0], 'arguments' if kind == 'arg_params'
                                      else 'auxiliary states', kind, extra, sorted(own)))
        for name, arr in own.items():
            value = given.get(name)
            if value is None or not shapes:
                continue
            if not isinstance(value, NDArray):
                raise ArgumentTypeError('%s[%r] must be an NDArray, got %s'
                                        % (kind, name, type(value).__name__))
            if tuple(value.shape) != tuple(arr.shape):
                raise ArgumentValueError(
                    'cannot set parameter %r: %s holds shape %s, the network needs %s (were '
                    'these parameters saved from another network?)'
                    % (name, kind, tuple(value.shape), tuple(arr.shape)))
