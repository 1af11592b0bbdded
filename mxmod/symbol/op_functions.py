"""``mx.sym`` functions that wrap operators with Python-side argument handling, as MXNet's
symbol module defines them: power, hypot, eye, histogram and split_v2."""
import numpy as np

from ..base import integer_types, numeric_types
from .register import make_function
from .symbol import Symbol

__all__ = ['power', 'hypot', 'eye', 'histogram', 'split_v2']


def power(base, exp):
    """``base`` raised to ``exp`` elementwise (Symbols or numbers; no broadcasting)."""
    if isinstance(base, Symbol) or isinstance(exp, Symbol):
        return base ** exp
    if isinstance(base, numeric_types) and isinstance(exp, numeric_types):
        return base ** exp
    raise TypeError('types (%s, %s) not supported' % (type(base), type(exp)))


def hypot(left, right):
    """``sqrt(left**2 + right**2)`` elementwise (Symbols or numbers; no broadcasting)."""
    if isinstance(left, Symbol) and isinstance(right, Symbol):
        return make_function('_Hypot', '_Hypot')(left, right)
    if isinstance(left, Symbol) and isinstance(right, numeric_types):
        return make_function('_HypotScalar', '_HypotScalar')(left, scalar=right)
    if isinstance(left, numeric_types) and isinstance(right, Symbol):
        return make_function('_HypotScalar', '_HypotScalar')(right, scalar=left)
    if isinstance(left, numeric_types) and isinstance(right, numeric_types):
        return np.hypot(left, right)
    raise TypeError('types (%s, %s) not supported' % (type(left), type(right)))


def eye(N, M=0, k=0, dtype=None, **kwargs):  # pylint: disable=invalid-name
    """A symbol of a 2-D array with ones on diagonal ``k`` (float32 unless ``dtype``)."""
    return make_function('_eye')(N=N, M=M, k=k, dtype=dtype or 'float32', **kwargs)


def histogram(a, bins=10, range=None, **kwargs):  # pylint: disable=redefined-builtin
    """Histogram of ``a``: ``bins`` equal bins over ``range`` (required), or the bin edges given
    by the Symbol ``bins``. Outputs the counts and the edges."""
    if isinstance(bins, Symbol):
        return make_function('_histogram')(data=a, bins=bins, **kwargs)
    if isinstance(bins, integer_types):
        if range is None:
            raise ValueError('null range is not supported in symbol mode')
        return make_function('_histogram')(data=a, bin_cnt=bins, range=range, **kwargs)
    raise ValueError('bins argument should be either an integer or an NDArray')


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into N equal parts (an int) or at the given indices (a
    tuple); a Symbol with one output per part."""
    indices, sections = [], 0
    if isinstance(indices_or_sections, integer_types):
        sections = indices_or_sections
    elif isinstance(indices_or_sections, tuple):
        indices = [0] + list(indices_or_sections)
    else:
        raise ValueError('indices_or_sections must either int or tuple of ints')
    return make_function('_split_v2')(ary, indices=str(indices), axis=axis,
                                      squeeze_axis=squeeze_axis, sections=sections)
