"""Fused collectives for the synchronous distributed store.

Many small gradients are copied into flat host buckets of about ``bucket_bytes`` (one dtype per
bucket) and summed with one ``MPI_Allreduce`` per bucket; an array at least as large as a bucket
is reduced where it lies, without a copy, in bucket-sized pieces (each piece is summed while it
sits in cache, which is faster than one huge call). GPU (cupy) arrays are staged through host memory.
float16 travels as float32 (MPI has no portable half-precision sum)."""
import os

import numpy as np

from ..context import cupy_module
from .mpi_comm import mpi

__all__ = ['Bucketer', 'bucket_bytes']

ENV_BUCKET_MB = 'MXMOD_KVSTORE_BUCKET_MB'
DEFAULT_BUCKET_MB = 4.0


def bucket_bytes():
    """Bucket size in bytes: ``MXMOD_KVSTORE_BUCKET_MB`` (default 4) megabytes."""
    return int(float(os.environ.get(ENV_BUCKET_MB, DEFAULT_BUCKET_MB)) * (1 << 20))


def _wire_dtype(dtype):
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _is_host(arr):
    return isinstance(arr, np.ndarray)


def _to_host(arr):
    return arr if _is_host(arr) else arr.get()


def _write(dst, host_values):
    """Copy host values (any shape with dst.size elements) into dst (numpy or cupy)."""
    values = host_values.reshape(dst.shape)
    if _is_host(dst):
        np.copyto(dst, values, casting='unsafe')
    else:
        cupy = cupy_module()
        with cupy.cuda.Device(dst.device.id):   # the copy runs on dst's own GPU
            dst[...] = cupy.asarray(values.astype(dst.dtype, copy=False))


class Bucketer(object):
    """Sums lists of arrays across a communicator with few, large MPI calls.

    Parameters
    ----------
    comm : peer_watch.WatchedComm or mpi4py.MPI.Comm
        The workers' communicator (the stores pass a watched one: the first collective of each
        store call notices a worker that has finished instead of waiting for it forever).
    bucket_size : int, optional
        Bucket size in bytes (default :func:`bucket_bytes`).
    """

    def __init__(self, comm, bucket_size=None):
        self.comm = comm
        self.bucket_size = int(bucket_size if bucket_size is not None else bucket_bytes())
        self._buffers = {}
        self.calls = 0

    def _buffer(self, dtype):
        buf = self._buffers.get(dtype)
        if buf is None:
            count = max(1, self.bucket_size // dtype.itemsize)
            buf = self._buffers[dtype] = np.empty(count, dtype=dtype)
        return buf

    def allreduce(self, pairs):
        """Sum every ``src`` over the workers into its ``dst`` (and its ``mirror``).

        Parameters
        ----------
        pairs : list of (array, array) or (array, array, array or None)
            ``(src, dst[, mirror])`` numpy or cupy arrays of equal size; ``dst`` may be ``src``
            (in place); a host ``mirror`` receives a copy of the result while it is still in
            cache. The list order must be the same on every worker.
        """
        pending = {}
        for pair in pairs:
            src, dst = pair[0], pair[1]
            mirror = pair[2] if len(pair) > 2 else None
            wire = _wire_dtype(src.dtype)
            direct = (_is_host(src) and _is_host(dst) and src.dtype == wire and dst.dtype == wire
                      and src.flags.c_contiguous and dst.flags.c_contiguous
                      and src.nbytes >= self.bucket_size)
            if direct:
                flat_dst = dst.reshape(-1)
                self._chunked(flat_dst if src is dst else src.reshape(-1), flat_dst, mirror)
            elif src.size * wire.itemsize >= self.bucket_size:
                host = _to_host(src).astype(wire, copy=True).reshape(-1)
                self._chunked(host, host, None)
                _write(dst, host)
                if mirror is not None:
                    _write(mirror, host)
            else:
                self._add(pending, wire, src, dst, mirror)
        for wire in list(pending):
            self._flush(pending, wire)

    def _chunked(self, src, dst, mirror):
        """Allreduce a large flat host array in bucket-sized pieces (each piece is reduced, and
        mirrored, while it is in cache)."""
        MPI = mpi()
        step = max(1, self.bucket_size // src.dtype.itemsize)
        flat_mirror = mirror.reshape(-1) if mirror is not None else None
        for start in range(0, src.size, step):
            piece = slice(start, min(start + step, src.size))
            self.calls += 1
            self.comm.Allreduce(MPI.IN_PLACE if src is dst else src[piece], dst[piece],
                                op=MPI.SUM)
            if flat_mirror is not None:
                np.copyto(flat_mirror[piece], dst[piece], casting='unsafe')

    def _add(self, pending, wire, src, dst, mirror):
        entries, used = pending.get(wire, ([], 0))
        buf = self._buffer(wire)
        if used + src.size > buf.size:
            self._flush(pending, wire)
            entries, used = [], 0
        buf[used:used + src.size] = _to_host(src).reshape(-1)
        entries.append((dst, mirror, used))
        pending[wire] = (entries, used + src.size)

    def _flush(self, pending, wire):
        entries, used = pending.pop(wire, ([], 0))
        if not entries:
            return
        buf = self._buffer(wire)
        self.calls += 1
        self.comm.Allreduce(mpi().IN_PLACE, buf[:used], op=mpi().SUM)
        for dst, mirror, start in entries:
            _write(dst, buf[start:start + dst.size])
            if mirror is not None:
                _write(mirror, buf[start:start + dst.size])

    def bcast(self, arrays, root=0):
        """Overwrite every array with the root's values (sent as raw bytes, any dtype).

        Parameters
        ----------
        arrays : list of numpy arrays
            C-contiguous host arrays, the same shapes and dtypes on every worker.
        root : int, default 0
        """
        for arr in arrays:
            self.calls += 1
            self.comm.Bcast(arr.reshape(-1).view(np.uint8), root=root)
