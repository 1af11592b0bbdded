"""MXNet's legacy NDArray functions (registered by its NDArray runtime, not as operators):
``onehot_encode`` and ``fill_element_0index``."""
from ..base import MXNetError
from ..context import device_scope, xp_of
from .ndarray import NDArray, from_xp

__all__ = ['onehot_encode', 'fill_element_0index']


def _rows(xp, count):
    return xp.arange(count)


def onehot_encode(indices, out):
    """Write the one-hot encoding of ``indices`` (a 1-D NDArray of class ids) into the 2-D
    ``out`` (one row per index) and return ``out``. Deprecated in MXNet: use ``one_hot``."""
    if out.ndim != 2 or indices.shape != (out.shape[0],):
        raise MXNetError('onehot_encode: indices of shape %s do not match out of shape %s; '
                         'expected indices of shape (%d,)' % (indices.shape, out.shape,
                                                              out.shape[0] if out.ndim else 0))
    xp = xp_of(out.context)
    with device_scope(out.context):
        codes = indices.as_in_context(out.context)._data.astype('int64')
        out._data[...] = 0
        out._data[_rows(xp, out.shape[0]), codes] = 1
    return out


def fill_element_0index(lhs, mhs, rhs, out=None):
    """A copy of the 2-D ``lhs`` (or ``out``, filled) with, in row i, the element at column
    ``rhs[i]`` set to ``mhs[i]``."""
    if lhs.ndim != 2 or mhs.shape != (lhs.shape[0],) or rhs.shape != (lhs.shape[0],):
        raise MXNetError('fill_element_0index: expected a 2-D lhs and 1-D mhs, rhs with one '
                         'entry per row; got %s, %s, %s' % (lhs.shape, mhs.shape, rhs.shape))
    xp = xp_of(lhs.context)
    with device_scope(lhs.context):
        result = lhs._data.copy()
        cols = rhs.as_in_context(lhs.context)._data.astype('int64')
        result[_rows(xp, lhs.shape[0]), cols] = mhs.as_in_context(lhs.context)._data
    if out is None:
        return from_xp(result, lhs.context)
    if not isinstance(out, NDArray):
        raise TypeError('fill_element_0index: out must be an NDArray')
    out[:] = from_xp(result, lhs.context)
    return out
