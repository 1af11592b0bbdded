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
