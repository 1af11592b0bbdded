"""Checks of user arguments at the call that receives them, with errors that name the call, the
argument, what was expected and what came. The errors are MXNetErrors that are also the built-in
error Python code expects (TypeError for a wrong kind of value, ValueError for a wrong value)."""
import math
import numbers

from .base import MXNetError

__all__ = ['ArgumentTypeError', 'ArgumentValueError', 'positive_int', 'real_number',
           'number_if_numeric', 'as_number', 'context_list']


class ArgumentTypeError(MXNetError, TypeError):
    """An argument of the wrong kind (a string where a number belongs...)."""


class ArgumentValueError(MXNetError, ValueError):
    """An argument of the right kind with a value that cannot work."""


def _shown(value):
    text = repr(value)
    return (text[:60] + '...' if len(text) > 60 else text) + ' (%s)' % type(value).__name__


def positive_int(value, what):
    """``value`` as an int >= 1, or an error naming ``what`` (e.g. 'NDArrayIter: batch_size')."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError('%s must be a positive int, got %s' % (what, _shown(value)))
    if value < 1:
        raise ArgumentValueError('%s must be a positive int, got %d' % (what, value))
    return int(value)


def real_number(value, what, minimum=None, allow_none=False):
    """``value`` as a finite float (>= ``minimum`` when given), or an error naming ``what``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError('%s must be a number, got %s' % (what, _shown(value)))
    if not math.isfinite(value):
        raise ArgumentValueError('%s must be a finite number, got %r' % (what, value))
    if minimum is not None and value < minimum:
        raise ArgumentValueError('%s must be >= %s, got %r' % (what, minimum, value))
    return value


def number_if_numeric(value, what, minimum=None):
    """``value`` checked as :func:`real_number` when it is a number or text; any other object
    (a symbol or tensor that a subclass reads through its own methods, as MXNet allows) passes
    unchanged and is checked by :func:`as_number` where it is used as a number."""
    if isinstance(value, (str, bytes, numbers.Real)):
        return real_number(value, what, minimum=minimum)
    return value


def as_number(value, what):
    """``value`` where a number is needed: numbers as they are, objects that convert with
    ``float()`` (0-d arrays, one-element NDArrays) converted, anything else an error naming
    ``what``."""
    if type(value) is float or isinstance(value, numbers.Real):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ArgumentTypeError(
            '%s is %s, which is not a number; an optimizer subclass that keeps another kind of '
            'value there must override the methods that read it (_get_lr/_get_lrs, '
            '_get_wd/_get_wds)' % (what, _shown(value))) from None


def context_list(context, what):
    """``context`` (a Context or a non-empty list/tuple of them) as a list."""
    from .context import Context  # pylint: disable=import-outside-toplevel
    if isinstance(context, Context):
        return [context]
    if isinstance(context, (list, tuple)) and context and \
            all(isinstance(c, Context) for c in context):
        return list(context)
    raise ArgumentTypeError('%s must be a Context or a list of Contexts (for example mx.cpu() '
                            'or [mx.gpu(0), mx.gpu(1)]), got %s' % (what, _shown(context)))
