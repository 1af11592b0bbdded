"""``mx.nd`` functions that wrap operators with Python-side argument handling, as MXNet's
ndarray module defines them: eye, histogram, split_v2 and moveaxis; and reset_arrays, which
sets arrays to zero in place."""
import warnings

import numpy as np

from ..base import integer_types
from ..context import as_context
from .ndarray import NDArray
from .register import invoke

__all__ = ['eye', 'histogram', 'split_v2', 'moveaxis', 'reset_arrays']


def eye(N, M=0, k=0, ctx=None, dtype=None, **kwargs):  # pylint: disable=invalid-name
    """A 2-D array with ones on diagonal ``k`` and zeros elsewhere.

    Parameters
    ----------
    N : int
        Number of rows.
    M : int, optional
        Number of columns (0: ``N``).
    k : int, optional
        The diagonal: 0 the main one, positive above it, negative below.
    ctx : Context, optional
    dtype : str or numpy dtype, optional
        float32 unless given.
    """
    kwargs.update(N=N, M=M, k=k, ctx=as_context(ctx), dtype=dtype or 'float32')
    return invoke('_eye', (), kwargs)


def histogram(a, bins=10, range=None):  # pylint: disable=redefined-builtin
    """Histogram of the flattened ``a``: ``(counts, bin_edges)``.

    Parameters
    ----------
    a : NDArray
    bins : int or NDArray
        The number of equal bins over ``range``, or the bin edges (rightmost included).
    range : (float, float), optional
        Bounds of the equal bins; without it numpy's histogram of ``a`` is returned.
    """
    if isinstance(bins, NDArray):
        return invoke('_histogram', (), {'data': a, 'bins': bins})
    if isinstance(bins, integer_types):
        if range is None:
            warnings.warn("range is not specified, using numpy's result to ensure consistency "
                          "with numpy")
            counts, edges = np.histogram(a.asnumpy(), bins=bins)
            from .ndarray import array  # pylint: disable=import-outside-toplevel
            return array(counts, ctx=a.context, dtype=counts.dtype), array(edges, ctx=a.context)
        return invoke('_histogram', (), {'data': a, 'bin_cnt': bins, 'range': range})
    raise ValueError('bins argument should be either an integer or an NDArray')


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into ``N`` equal parts (an int) or at the given indices
    (a tuple: ``(2, 3)`` gives ``ary[:2]``, ``ary[2:3]``, ``ary[3:]``); returns a list."""
    if isinstance(indices_or_sections, integer_types):
        sections = indices_or_sections
        size = ary.shape[axis]
        if size % sections:
            raise ValueError('array split does not result in an equal division')
        indices = [i * (size // sections) for i in range(sections)]
    elif isinstance(indices_or_sections, tuple):
        indices = [0] + list(indices_or_sections)
    else:
        raise ValueError('indices_or_sections must either int or tuple of ints')
    out = invoke('_split_v2', (ary,), {'indices': str(indices), 'axis': axis,
                                       'squeeze_axis': squeeze_axis})
    return out if isinstance(out, list) else [out]


def _normalize_axes(axes, ndim, what):
    axes = [axes] if isinstance(axes, integer_types) else list(axes)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError('%s should verify 0 <= %s < tensor.ndim (%d), got %d'
                             % (what, what.lower(), ndim, a))
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError('repeated axis in %s argument: %s' % (what.lower(), axes))
    return out


def moveaxis(tensor, source, destination):
    """Move axes ``source`` to positions ``destination`` (ints or sequences, negative allowed),
    keeping the other axes in order.

    Parameters
    ----------
    tensor : NDArray
    source, destination : int or sequence of int
    """
    source = _normalize_axes(source, tensor.ndim, 'Source')
    destination = _normalize_axes(destination, tensor.ndim, 'Destination')
    if len(source) != len(destination):
        raise ValueError('`source` and `destination` arguments must have the same number of '
                         'elements')
    order = [n for n in range(tensor.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return invoke('transpose', (tensor,), {'axes': tuple(order)})


def reset_arrays(*data, **kwargs):
    """Set every array of ``data`` to zero in place (MXNet's ``reset_arrays`` operator, used to
    clear gradient buffers).

    Parameters
    ----------
    *data : NDArray
    num_arrays : int
        The number of arrays (must equal ``len(data)``).
    """
    num_arrays = kwargs.pop('num_arrays', None)
    kwargs.pop('name', None)
    if kwargs:
        raise TypeError('reset_arrays got unexpected arguments %s' % sorted(kwargs))
    if num_arrays is None:
        raise ValueError('reset_arrays: the required argument num_arrays is missing')
    if int(num_arrays) != len(data):
        raise ValueError('reset_arrays: num_arrays is %d but %d arrays were given'
                         % (int(num_arrays), len(data)))
    for arr in data:
        if not isinstance(arr, NDArray):
            raise TypeError('reset_arrays expects NDArrays, got %s' % type(arr).__name__)
        arr[:] = 0
