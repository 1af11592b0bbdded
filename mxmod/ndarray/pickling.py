"""Pickling NDArrays as MXNet does: the state is ``{'handle': bytearray(record)}`` with one
array record of the ``.params`` format, so pickles move between MXNet 1.9.1 and mxmod. An array
comes back on the device it was saved from when that device exists, else on cpu(0)."""
import struct

import numpy as np

from ..base import MXNetError
from ..context import Context
from .ndarray import NDArray, _put

__all__ = ['getstate', 'setstate']

_V1, _V2, _V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA


def getstate(self):
    """MXNet's pickled state of an NDArray."""
    from .serialization import record_to_bytes  # pylint: disable=import-outside-toplevel
    return {'handle': bytearray(record_to_bytes(self))}


def _saved_context(buf):
    """The (device type, id) a dense record was saved from, or None when it cannot be told."""
    try:
        (magic,) = struct.unpack_from('<I', buf, 0)
        if magic in (_V2, _V3):
            stype, ndim = struct.unpack_from('<ii', buf, 4)
            if stype != 0:
                return None
            offset = 12 + 8 * ndim
        elif magic == _V1:
            (ndim,) = struct.unpack_from('<I', buf, 4)
            offset = 8 + 8 * ndim
        else:
            offset = 4 + 4 * magic        # before V1 the record starts with ndim, uint32 dims
        return struct.unpack_from('<ii', buf, offset)
    except struct.error:
        return None


def setstate(self, state):
    """Restore an NDArray from MXNet's state (``handle``) or mxmod's earlier one (``data``)."""
    if 'handle' in state:
        from .serialization import record_from_bytes  # pylint: disable=import-outside-toplevel
        buf = state['handle']
        if buf is None:
            raise MXNetError('cannot unpickle an NDArray without data (its handle is None)')
        host = record_from_bytes(bytes(buf), 'a pickled NDArray')
        saved = _saved_context(bytes(buf))
        ctx = Context(Context.devtype2str.get(saved[0], 'cpu'), saved[1]) if saved else None
    else:
        host = np.asarray(state['data'])
        ctx = Context(*state['ctx']) if 'ctx' in state else None
    self._ctx = ctx if ctx is not None else Context('cpu', 0)
    try:
        self._data = _put(host, self._ctx)
    except MXNetError:                    # that device is not available here
        self._ctx = Context('cpu', 0)
        self._data = np.array(host, copy=True)


NDArray.__getstate__ = getstate
NDArray.__setstate__ = setstate
