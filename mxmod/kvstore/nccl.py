"""``nccl``: the in-process store that sums the GPUs' values with NCCL allreduce (cupy.cuda.nccl).

Each pushed list holds one array per GPU; the arrays of all keys in one call are summed with
grouped NCCL allreduces into per-GPU buffers; the store's copy (on the first GPU) then becomes the
sum, or is updated from it by the updater, and pulls copy it to every device. Needs cupy built
with NCCL and at least one NVIDIA GPU; anything else raises an MXNetError saying so."""
import numpy as np

from ..base import MXNetError
from ..context import cupy_module
from ..ndarray.ndarray import from_xp
from ..profiler.hooks import traced
from .local import KVStore, _dense

__all__ = ['NCCLKVStore', 'nccl_module']

_NCCL_TYPES = {'float16': 'NCCL_FLOAT16', 'float32': 'NCCL_FLOAT32', 'float64': 'NCCL_FLOAT64',
               'int8': 'NCCL_INT8', 'uint8': 'NCCL_UINT8', 'int32': 'NCCL_INT32',
               'int64': 'NCCL_INT64'}


def nccl_module():
    """Return ``cupy.cuda.nccl``, or raise an MXNetError naming what is missing."""
    try:
        cupy = cupy_module()
        from cupy.cuda import nccl  # pylint: disable=import-outside-toplevel
    except (MXNetError, ImportError) as err:
        raise MXNetError("kvstore 'nccl' needs NVIDIA GPUs, cupy and NCCL (pip install "
                         "mxmod[gpu]); use 'device' or 'local' otherwise (%s)" % err) from err
    if not getattr(nccl, 'available', True):
        raise MXNetError("kvstore 'nccl': this cupy was built without NCCL; use 'device' instead")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:  # pylint: disable=broad-except
        raise MXNetError("kvstore 'nccl' needs an NVIDIA GPU; none is usable (%s)" % err) from err
    if count < 1:
        raise MXNetError("kvstore 'nccl' needs an NVIDIA GPU; none is visible")
    return nccl


class NCCLKVStore(KVStore):
    """A single-process store reducing per-GPU values with NCCL.

    Parameters
    ----------
    name : str, default 'nccl'
    """

    def __init__(self, name='nccl'):
        self._nccl = nccl_module()
        super(NCCLKVStore, self).__init__(name)
        self._on_device = True
        self._comms = {}
        self._bufs = {}

    def _communicators(self, device_ids):
        comms = self._comms.get(device_ids)
        if comms is None:
            comms = self._comms[device_ids] = self._nccl.NcclCommunicator.initAll(list(device_ids))
        return comms

    def _check_values(self, key, vals):
        ids = []
        for val in vals:
            if val.context.device_type != 'gpu':
                raise MXNetError("kvstore 'nccl': key %r has a value on %s; every value must be "
                                 "on a GPU" % (key, val.context))
            ids.append(val.context.device_id)
        if len(set(ids)) != len(ids):
            raise MXNetError("kvstore 'nccl': key %r has several values on one GPU (%s); push "
                             "one value per GPU" % (key, ids))
        dtype = np.dtype(vals[0].dtype).name
        if dtype not in _NCCL_TYPES:
            raise MXNetError("kvstore 'nccl': dtype %s of key %r is not supported (supported: %s)"
                             % (dtype, key, ', '.join(sorted(_NCCL_TYPES))))
        return tuple(ids)

    def push(self, key, value, priority=0):
        """Sum each key's per-GPU values with NCCL, then update the store's copy.

        Parameters
        ----------
        key : int, str or list of them
        value : NDArray, list of NDArray (one per GPU), or list of lists (one per key)
        priority : int
            Accepted for compatibility.
        """
        _, pairs = self._pairs(key, value, 'push')
        jobs = []
        for k, vals in pairs:
            stored = self._stored(k, 'push')
            vals = [_dense(v) for v in vals]
            for val in vals:
                if tuple(val.shape) != tuple(stored.shape):
                    raise MXNetError('push: shape mismatch for key %r: stored %s, pushed %s'
                                     % (k, stored.shape, tuple(val.shape)))
            jobs.append((k, vals, self._check_values(k, vals)))
        self._allreduce(jobs)
        for k, vals, _ in jobs:
            self._apply(k, self._bufs[k][0] if len(vals) > 1 else vals[0])

    def _buffers(self, key, vals):
        bufs = self._bufs.get(key)
        if bufs is None or [b.context for b in bufs] != [v.context for v in vals] \
                or bufs[0].dtype != vals[0].dtype:
            cupy = cupy_module()
            bufs = []
            for val in vals:
                with cupy.cuda.Device(val.context.device_id):
                    bufs.append(from_xp(cupy.empty_like(val._data), val.context))
            self._bufs[key] = bufs
        return bufs

    @traced('KVStore', 'ncclAllReduce')
    def _allreduce(self, jobs):
        cupy = cupy_module()
        nccl = self._nccl
        work = [(k, vals, ids) for k, vals, ids in jobs if len(vals) > 1]
        if not work:
            return
        keep = []  # contiguous sources stay alive until the streams are synchronized
        nccl.groupStart()
        try:
            for k, vals, ids in work:
                comms = self._communicators(ids)
                bufs = self._buffers(k, vals)
                dtype = getattr(nccl, _NCCL_TYPES[np.dtype(vals[0].dtype).name])
                for comm, val, buf in zip(comms, vals, bufs):
                    with cupy.cuda.Device(val.context.device_id):
                        src = cupy.ascontiguousarray(val._data)
                        keep.append(src)
                        stream = cupy.cuda.get_current_stream().ptr
                        comm.allReduce(src.data.ptr, buf._data.data.ptr, int(np.prod(val.shape)),
                                       dtype, nccl.NCCL_SUM, stream)
        finally:
            nccl.groupEnd()
        for _, vals, _ in work:
            for val in vals:
                with cupy.cuda.Device(val.context.device_id):
                    cupy.cuda.get_current_stream().synchronize()
        del keep
