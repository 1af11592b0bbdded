"""Fused collectives for the synchronous distributed store.

Many small gradients are copied into flat host buckets of about ``bucket_bytes`` (one dtype per
bucket) and summed with one ``MPI_Allreduce`` per bucket; an array at least as large as a bucket
is reduced on its own, in place, without a copy. GPU (cupy) arrays are staged through host memory.
float16 travels as float32 (MPI has no portable half-precision sum)."""
import os

import numpy as np

from .mpi_comm import mpi

__all__ = ['Bucketer', 'bucket_bytes']

ENV_BUCKET_MB = 'MXMOD_KVSTORE_BUCKET_MB'
DEFAULT_BUCKET_MB = 8.0


def bucket_bytes():
    """Bucket size in bytes: ``MXMOD_KVSTORE_BUCKET_MB`` (default 8) megabytes."""
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
        dst[...] = _device_array(dst, values)


def _device_array(dst, values):
    import cupy  # pylint: disable=import-outside-toplevel
    with cupy.cuda.Device(dst.device.id):
        return cupy.asarray(values.astype(dst.dtype, copy=False))


class Bucketer(object):
    """Sums lists of arrays across a communicator with few, large MPI calls.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The workers' communicator.
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
        """Sum every ``src`` over the workers into its ``dst``.

        Parameters
        ----------
        pairs : list of (array, array)
            ``(src, dst)`` numpy or cupy arrays of equal size; ``dst`` may be ``src`` (in place).
            The list order must be the same on every worker.
        """
        MPI = mpi()
        pending = {}
        for src, dst in pairs:
            wire = _wire_dtype(src.dtype)
            direct = (_is_host(src) and _is_host(dst) and src.dtype == wire and dst.dtype == wire
                      and src.flags.c_contiguous and dst.flags.c_contiguous
                      and src.nbytes >= self.bucket_size)
            if direct:
                self.calls += 1
                self.comm.Allreduce(MPI.IN_PLACE if src is dst else src, dst, op=MPI.SUM)
            elif src.size * wire.itemsize >= self.bucket_size:
                host = _to_host(src).astype(wire, copy=True).reshape(-1)
                self.calls += 1
                self.comm.Allreduce(MPI.IN_PLACE, host, op=MPI.SUM)
                _write(dst, host)
            else:
                self._add(pending, wire, src, dst)
        for wire in list(pending):
            self._flush(pending, wire)

    def _add(self, pending, wire, src, dst):
        entries, used = pending.get(wire, ([], 0))
        buf = self._buffer(wire)
        if used + src.size > buf.size:
            self._flush(pending, wire)
            entries, used = [], 0
        buf[used:used + src.size] = _to_host(src).reshape(-1)
        entries.append((dst, used))
        pending[wire] = (entries, used + src.size)

    def _flush(self, pending, wire):
        entries, used = pending.pop(wire, ([], 0))
        if not entries:
            return
        buf = self._buffer(wire)
        self.calls += 1
        self.comm.Allreduce(mpi().IN_PLACE, buf[:used], op=mpi().SUM)
        for dst, start in entries:
            _write(dst, buf[start:start + dst.size])

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
