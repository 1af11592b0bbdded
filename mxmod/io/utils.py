"""Helpers for the array iterators: input normalisation, batch-axis slicing, shuffling."""
from collections import OrderedDict

import numpy as np

from ..base import MXNetError
from ..context import xp_of
from ..ndarray import NDArray, array
from ..ndarray.ndarray import from_xp

__all__ = []


def _init_data(data, allow_empty, default_name):
    """Normalise iterator input to a list of ``(name, NDArray)`` sorted by name.

    ``data`` may be an array, a list of arrays (named ``default_name`` when there is one, else
    ``_0_<default_name>``, ``_1_<default_name>``, ...) or a dict name -> array. Anything that is
    not an NDArray goes through ``mx.nd.array`` (so numpy input becomes float32)."""
    if data is None:
        if not allow_empty:
            raise ValueError('%s: the iterator needs input data, got None' % default_name)
        data = []
    if isinstance(data, (np.ndarray, NDArray)):
        data = [data]
    if isinstance(data, list):
        if not data and not allow_empty:
            raise ValueError('%s: the iterator needs input data, got an empty list' % default_name)
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict(('_%d_%s' % (i, default_name), arr) for i, arr in enumerate(data))
    if not isinstance(data, dict):
        raise TypeError('Input must be NDArray, numpy.ndarray, a list of them or dict with them '
                        'as values; got %s' % type(data).__name__)
    if not data and not allow_empty:
        raise ValueError('%s: the iterator needs input data, got an empty dict' % default_name)
    converted = {}
    for name, value in data.items():
        if isinstance(value, NDArray):
            converted[name] = value
            continue
        try:
            converted[name] = array(value)
        except Exception as err:  # pylint: disable=broad-except
            raise TypeError("Invalid type '%s' for %s, should be NDArray or numpy.ndarray"
                            % (type(value), name)) from err
    return sorted(converted.items())


def _has_instance(data, dtype):
    """Whether any array in a ``(name, array)`` list is an instance of ``dtype``."""
    return any(isinstance(arr, dtype) for _, arr in data)


def _getdata_by_idx(data, idx):
    """Reorder every ``(name, array)`` along axis 0 by ``idx``; like MXNet, the result goes
    through ``mx.nd.array`` and so becomes float32."""
    out = []
    for name, arr in data:
        if arr.stype == 'csr':
            from ..ndarray import sparse  # pylint: disable=import-outside-toplevel
            out.append((name, sparse.array(arr.asscipy()[idx], ctx=arr.context)))
        else:
            out.append((name, array(arr.asnumpy()[idx], arr.context)))
    return out


def _slice_along_batch_axis(data, s, batch_axis):
    """Copy of ``data[begin:end]`` along ``batch_axis`` (``s`` is a slice), checked like
    MXNet's ``slice_axis``."""
    size = data.shape[batch_axis]
    begin = 0 if s.start is None else s.start
    end = size if s.stop is None else s.stop
    begin = begin + size if begin < 0 else begin
    end = end + size if end < 0 else end
    if end > size:
        raise MXNetError('Invalid end for end=%d as axis_size is %d' % (end, size))
    if not 0 <= begin <= end:
        raise MXNetError('Invalid begin, end, get begin=%d, end=%d (axis_size %d)'
                         % (begin, end, size))
    if data.stype != 'default':
        if data.stype != 'csr' or batch_axis != 0:
            raise MXNetError('batches of %s arrays are sliced along axis 0 of CSRNDArrays only'
                             % data.stype)
        return data[begin:end]
    index = [slice(None)] * data.ndim
    index[batch_axis] = slice(begin, end)
    return from_xp(data.handle[tuple(index)].copy(), data.context)


def _concat_along(first, second, axis):
    """Concatenate two NDArrays along ``axis`` on the first one's context."""
    xp = xp_of(first.context)
    other = second.as_in_context(first.context)
    return from_xp(xp.concatenate([first.handle, other.handle], axis=axis), first.context)


def _tile_first_axis(arr, repeats):
    """Repeat ``arr`` ``repeats`` times along axis 0."""
    reps = [1] * arr.ndim
    reps[0] = repeats
    return from_xp(xp_of(arr.context).tile(arr.handle, reps), arr.context)
