"""The per-channel sums of the BatchNorm kernels (bn_kernels, bn_relu_kernels) in pieces that
threads compute side by side (kpool), bit-identical to the one-thread kernels.

The one-thread kernels sum each block of BLOCK rows in float32 (16-lane accumulators) and fold the
blocks' sums into float64 totals in block order. Here each thread computes the float32 sums of a
range of blocks into ``parts`` (one row per block), with the same block kernels, and one thread
then folds the rows in block order with the same arithmetic: the totals do not depend on how the
blocks were shared. (M, C) channels-last arrays with C a multiple of 16, float32."""
import numpy as np
from numba import njit

from .bn_kernels import BLOCK, _block_stats16, _block_grad_sums16, _merge
from .bn_relu_kernels import _block_sums16, _mask

__all__ = ['stats_parts', 'stats_merge', 'grad_parts', 'relu_grad_parts', 'sums_merge',
           'stats_parts_first', 'stats_merge_first', 'grad_parts_first', 'relu_grad_parts_first',
           'sums_merge_first', 'BLOCK']

_OPTS = dict(cache=True, boundscheck=False, nogil=True)


@njit(**_OPTS)
def stats_parts(x, b0, b1, parts):
    """parts[b] = (sums, squared deviations from the block mean, block means) of block b's rows
    for b0 <= b < b1 (parts (blocks, 3 C))."""
    rows, chans = x.shape
    flat = x.reshape(-1)
    for b in range(b0, b1):
        r0 = b * BLOCK
        r1 = min(r0 + BLOCK, rows)
        part = parts[b]
        for cv in range(0, chans, 16):
            _block_stats16(flat, r0, r1, chans, cv, part)


@njit(**_OPTS)
def stats_merge(parts, rows, mean, m2):
    """mean and m2 (float64) from every block's parts, in block order (as stats_last)."""
    chans = mean.shape[0]
    mean[:] = 0.0
    m2[:] = 0.0
    count = 0
    for b in range(parts.shape[0]):
        nb = min(BLOCK, rows - b * BLOCK)
        for c in range(chans):
            _merge(mean, m2, c, count, nb, np.float64(parts[b, 2 * chans + c]),
                   np.float64(parts[b, chans + c]))
        count += nb


@njit(**_OPTS)
def grad_parts(x, dy, mean, b0, b1, parts):
    """parts[b] = (sum of dy, sum of dy * (x - mean)) of block b's rows (parts (blocks, 2 C))."""
    rows, chans = x.shape
    xf = x.reshape(-1)
    df = dy.reshape(-1)
    for b in range(b0, b1):
        r0 = b * BLOCK
        r1 = min(r0 + BLOCK, rows)
        part = parts[b]
        for cv in range(0, chans, 16):
            _block_grad_sums16(xf, df, mean, r0, r1, chans, cv, part)


@njit(**_OPTS)
def relu_grad_parts(x, dy, mean, scale, beta, b0, b1, parts):
    """As :func:`grad_parts` with dy masked by the fused relu (bn_relu_kernels)."""
    rows, chans = x.shape
    xf = x.reshape(-1)
    df = dy.reshape(-1)
    for b in range(b0, b1):
        r0 = b * BLOCK
        r1 = min(r0 + BLOCK, rows)
        part = parts[b]
        for cv in range(0, chans, 16):
            _block_sums16(xf, df, mean, scale, beta, r0, r1, chans, cv, part)


@njit(**_OPTS)
def sums_merge(parts, sdy, sdyx):
    """sdy, sdyx (float64) = the blocks' sums folded in block order (as grad_sums_last)."""
    chans = sdy.shape[0]
    sdy[:] = 0.0
    sdyx[:] = 0.0
    for b in range(parts.shape[0]):
        for c in range(chans):
            sdy[c] += parts[b, c]
            sdyx[c] += parts[b, chans + c]


# ---- (N, C, L) arrays: pieces are images; parts (N, C, blocks of L, 2) in float64 ------------
@njit(**_OPTS)
def stats_parts_first(x, n0, n1, parts):
    """parts[n, c, k] = (block mean, squared deviations) of block k of x[n, c] for n0 <= n < n1,
    with stats_first's very arithmetic."""
    length = x.shape[2]
    for c in range(x.shape[1]):
        for n in range(n0, n1):
            for l0 in range(0, length, BLOCK):
                l1 = min(l0 + BLOCK, length)
                nb = l1 - l0
                acc = np.float32(0.0)
                for i in range(l0, l1):
                    acc += x[n, c, i]
                bmean = acc / nb
                acc = np.float32(0.0)
                for i in range(l0, l1):
                    d = x[n, c, i] - bmean
                    acc += d * d
                parts[n, c, l0 // BLOCK, 0] = np.float64(bmean)
                parts[n, c, l0 // BLOCK, 1] = np.float64(acc)


@njit(**_OPTS)
def stats_merge_first(parts, length, mean, m2):
    """mean and m2 from the parts, folded in stats_first's order."""
    n_img, chans, blocks = parts.shape[:3]
    mean[:] = 0.0
    m2[:] = 0.0
    for c in range(chans):
        count = 0
        for n in range(n_img):
            for k in range(blocks):
                nb = min(BLOCK, length - k * BLOCK)
                _merge(mean, m2, c, count, nb, parts[n, c, k, 0], parts[n, c, k, 1])
                count += nb


@njit(**_OPTS)
def grad_parts_first(x, dy, mean, n0, n1, parts):
    """parts[n, c, k] = (sum of dy, sum of dy * (x - mean)) of block k of image n, channel c,
    with bn_kernels.grad_sums_first's arithmetic."""
    length = x.shape[2]
    for n in range(n0, n1):
        for c in range(x.shape[1]):
            m = mean[c]
            for l0 in range(0, length, BLOCK):
                a = np.float32(0.0)
                b = np.float32(0.0)
                for i in range(l0, min(l0 + BLOCK, length)):
                    g = dy[n, c, i]
                    a += g
                    b += g * (x[n, c, i] - m)
                parts[n, c, l0 // BLOCK, 0] = a
                parts[n, c, l0 // BLOCK, 1] = b


@njit(**_OPTS)
def relu_grad_parts_first(x, dy, mean, scale, beta, n0, n1, parts):
    """As :func:`grad_parts_first` with dy masked by the fused relu (bn_relu_kernels)."""
    length = x.shape[2]
    for n in range(n0, n1):
        for c in range(x.shape[1]):
            m, s, b = mean[c], scale[c], beta[c]
            for l0 in range(0, length, BLOCK):
                a = np.float32(0.0)
                p = np.float32(0.0)
                for i in range(l0, min(l0 + BLOCK, length)):
                    d = x[n, c, i] - m
                    g = dy[n, c, i] * _mask(d * s + b)
                    a += g
                    p += g * d
                parts[n, c, l0 // BLOCK, 0] = a
                parts[n, c, l0 // BLOCK, 1] = p


@njit(**_OPTS)
def sums_merge_first(parts, sdy, sdyx):
    """sdy, sdyx folded from the parts in grad_sums_first's order."""
    n_img, chans, blocks = parts.shape[:3]
    sdy[:] = 0.0
    sdyx[:] = 0.0
    for n in range(n_img):
        for c in range(chans):
            for k in range(blocks):
                sdy[c] += parts[n, c, k, 0]
                sdyx[c] += parts[n, c, k, 1]
