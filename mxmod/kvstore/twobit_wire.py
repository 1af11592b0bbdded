"""The 2-bit wire format for compressed gradients: four values per byte.

A quantized gradient holds only ``+threshold``, ``-threshold`` and ``0`` (see
:mod:`.compression`); each element becomes a 2-bit code (0: zero, 1: +threshold, 2: -threshold),
so a float32 gradient travels in 1/16 of its bytes, as MXNet's compressed pushes do."""
import numpy as np

__all__ = ['packed_size', 'pack', 'unpack_add']


def packed_size(size):
    """Bytes needed for ``size`` 2-bit codes."""
    return (int(size) + 3) // 4


def pack(quantized, out=None):
    """Pack a host array of ``{+t, -t, 0}`` values into 2-bit codes.

    Parameters
    ----------
    quantized : numpy.ndarray
        Output of 2-bit quantization (any shape).
    out : numpy.ndarray of uint8, optional
        Destination of :func:`packed_size` bytes.

    Returns
    -------
    numpy.ndarray of uint8
    """
    flat = quantized.reshape(-1)
    codes = np.zeros(packed_size(flat.size) * 4, dtype=np.uint8)
    codes[:flat.size][flat > 0] = 1
    codes[:flat.size][flat < 0] = 2
    codes = codes.reshape(-1, 4)
    if out is None:
        out = np.empty(codes.shape[0], dtype=np.uint8)
    np.bitwise_or(codes[:, 0], codes[:, 1] << 2, out=out)
    out |= codes[:, 2] << 4
    out |= codes[:, 3] << 6
    return out


def unpack_add(packed, threshold, out):
    """Add the dequantized values of ``packed`` codes to the host array ``out`` (in place).

    Parameters
    ----------
    packed : numpy.ndarray of uint8
        :func:`packed_size` ``(out.size)`` bytes written by :func:`pack`.
    threshold : float
    out : numpy.ndarray
        Float array receiving ``+threshold`` / ``-threshold`` where the codes say so.
    """
    flat = out.reshape(-1)
    codes = np.empty((packed.size, 4), dtype=np.uint8)
    for slot in range(4):
        np.right_shift(packed, 2 * slot, out=codes[:, slot])
    codes &= 3
    codes = codes.reshape(-1)[:flat.size]
    thr = flat.dtype.type(threshold)
    flat[codes == 1] += thr
    flat[codes == 2] -= thr


def reduce_compressed(store, merged):
    """The 2-bit compressed reduction of a distributed store's merged ``(key, value)`` pairs:
    quantize (with residual), allgather the packed codes, every worker sums the dequantized
    values of all workers in rank order. Returns ``[(key, summed NDArray)]``."""
    from ..base import MXNetError  # pylint: disable=import-outside-toplevel
    from ..context import cpu  # pylint: disable=import-outside-toplevel
    from ..ndarray.ndarray import from_xp  # pylint: disable=import-outside-toplevel
    sizes, chunks = [], []
    for k, value in merged:
        if value.dtype != np.float32:
            raise MXNetError('gradient compression supports float32 only; key %r is %s'
                             % (k, value.dtype))
        quantized = store._wire_compression.quantize(k, 0, value)
        chunks.append(pack(quantized.asnumpy()))
        sizes.append(packed_size(value.size))
    mine = np.concatenate(chunks) if chunks else np.empty(0, np.uint8)
    everyone = np.empty((store.num_workers, mine.size), dtype=np.uint8)
    store._coll.Allgather(mine, everyone)
    results, start = [], 0
    for (k, value), size in zip(merged, sizes):
        total = np.zeros(value.shape, dtype=np.float32)
        for rank in range(store.num_workers):
            unpack_add(everyone[rank, start:start + size], store._wire_compression.threshold,
                       total)
        start += size
        results.append((k, from_xp(total, cpu()).as_in_context(value.context)))
    return results
