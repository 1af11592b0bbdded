"""numba kernels of float32 training BatchNorm (imported only when numba is present; bn_math
calls them and keeps the numpy arithmetic they replace).

Two memory orders: ``last`` arrays are (M, C) with the channel varying fastest (the channels-last
data that convolutions hand on), ``first`` arrays are (N, C, L) (C-ordered NCHW data). Sums run
in float32 over blocks of at most ``BLOCK`` values and in float64 across blocks; the variance
comes from each block's own mean and squared deviations (read twice while the block is in cache),
merged with Chan's formula, so a mean far from zero costs no accuracy. The forward is two passes
over memory (statistics, then the normalised output), the backward two (the two sums, then dx)."""
import numpy as np
from numba import njit

from .simd import vzero, vload, vstore, vadd, vsub, vfma

__all__ = ['stats_last', 'stats_first', 'apply_last', 'apply_first', 'grad_sums_last',
           'grad_sums_first', 'grad_dx_last', 'grad_dx_first']

BLOCK = 256
_OPTS = dict(cache=True, boundscheck=False, nogil=True)


@njit(**_OPTS)
def _merge(mean, m2, c, count, nb, bmean, bm2):
    """Fold a block's (count nb, mean, squared deviations) into channel c's running totals."""
    tot = count + nb
    delta = bmean - mean[c]
    mean[c] += delta * nb / tot
    m2[c] += bm2 + delta * delta * count * nb / tot


@njit(**_OPTS)
def _block_stats16(flat, r0, r1, chans, cv, part):
    """part[cv..cv+15] = sums, part[chans + cv..] = squared deviations from the block mean, of
    rows r0..r1-1 of channels cv..cv+15 (accumulators in registers, two rows at a time)."""
    a = vzero()
    b = vzero()
    r = r0
    while r + 2 <= r1:
        a = vadd(a, vload(flat, r * chans + cv))
        b = vadd(b, vload(flat, (r + 1) * chans + cv))
        r += 2
    if r < r1:
        a = vadd(a, vload(flat, r * chans + cv))
    total = vadd(a, b)
    vstore(part, cv, total)
    for c in range(16):
        part[2 * chans + cv + c] = part[cv + c] * np.float32(1.0 / (r1 - r0))
    bm = vload(part, 2 * chans + cv)
    a = vzero()
    b = vzero()
    r = r0
    while r + 2 <= r1:
        d = vsub(vload(flat, r * chans + cv), bm)
        a = vfma(a, d, d)
        e = vsub(vload(flat, (r + 1) * chans + cv), bm)
        b = vfma(b, e, e)
        r += 2
    if r < r1:
        d = vsub(vload(flat, r * chans + cv), bm)
        a = vfma(a, d, d)
    vstore(part, chans + cv, vadd(a, b))


@njit(**_OPTS)
def stats_last(x, mean, m2):
    """Per-channel mean and sum of squared deviations (float64 ``mean``, ``m2``) of x (M, C)."""
    rows, chans = x.shape
    if chans % 16 == 0:
        flat = x.reshape(-1)
        part = np.empty(3 * chans, np.float32)
        mean[:] = 0.0
        m2[:] = 0.0
        count = 0
        for r0 in range(0, rows, BLOCK):
            r1 = min(r0 + BLOCK, rows)
            for cv in range(0, chans, 16):
                _block_stats16(flat, r0, r1, chans, cv, part)
            nb = r1 - r0
            for c in range(chans):
                _merge(mean, m2, c, count, nb, np.float64(part[2 * chans + c]),
                       np.float64(part[chans + c]))
            count += nb
        return
    acc = np.zeros(chans, np.float32)
    bmean = np.zeros(chans, np.float32)
    mean[:] = 0.0
    m2[:] = 0.0
    count = 0
    for r0 in range(0, rows, BLOCK):
        r1 = min(r0 + BLOCK, rows)
        nb = r1 - r0
        acc[:] = 0.0
        for r in range(r0, r1):
            for c in range(chans):
                acc[c] += x[r, c]
        for c in range(chans):
            bmean[c] = acc[c] / nb
            acc[c] = 0.0
        for r in range(r0, r1):
            for c in range(chans):
                d = x[r, c] - bmean[c]
                acc[c] += d * d
        for c in range(chans):
            _merge(mean, m2, c, count, nb, np.float64(bmean[c]), np.float64(acc[c]))
        count += nb


@njit(**_OPTS)
def stats_first(x, mean, m2):
    """As :func:`stats_last` for x (N, C, L)."""
    n_img, chans, length = x.shape
    mean[:] = 0.0
    m2[:] = 0.0
    for c in range(chans):
        count = 0
        for n in range(n_img):
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
                _merge(mean, m2, c, count, nb, np.float64(bmean), np.float64(acc))
                count += nb


@njit(**_OPTS)
def apply_last(x, mean, scale, beta, out):
    """out = (x - mean) * scale + beta per channel; x, out (M, C); float32 coefficients."""
    rows, chans = x.shape
    for r in range(rows):
        for c in range(chans):
            out[r, c] = (x[r, c] - mean[c]) * scale[c] + beta[c]


@njit(**_OPTS)
def apply_first(x, mean, scale, beta, out):
    """As :func:`apply_last` for (N, C, L) arrays."""
    n_img, chans, length = x.shape
    for n in range(n_img):
        for c in range(chans):
            m, s, b = mean[c], scale[c], beta[c]
            for i in range(length):
                out[n, c, i] = (x[n, c, i] - m) * s + b


@njit(**_OPTS)
def _block_grad_sums16(xf, df, mean, r0, r1, chans, cv, part):
    """part[cv..] = sum of dy, part[chans + cv..] = sum of dy * (x - mean) over rows r0..r1-1 of
    channels cv..cv+15 (accumulators in registers)."""
    m = vload(mean, cv)
    a = vzero()
    b = vzero()
    a2 = vzero()
    b2 = vzero()
    r = r0
    while r + 2 <= r1:
        g = vload(df, r * chans + cv)
        a = vadd(a, g)
        b = vfma(b, g, vsub(vload(xf, r * chans + cv), m))
        h = vload(df, (r + 1) * chans + cv)
        a2 = vadd(a2, h)
        b2 = vfma(b2, h, vsub(vload(xf, (r + 1) * chans + cv), m))
        r += 2
    if r < r1:
        g = vload(df, r * chans + cv)
        a = vadd(a, g)
        b = vfma(b, g, vsub(vload(xf, r * chans + cv), m))
    vstore(part, cv, vadd(a, a2))
    vstore(part, chans + cv, vadd(b, b2))


@njit(**_OPTS)
def grad_sums_last(x, dy, mean, sdy, sdyx):
    """sdy = sum of dy, sdyx = sum of dy * (x - mean) per channel (float64) for (M, C) arrays."""
    rows, chans = x.shape
    if chans % 16 == 0:
        xf = x.reshape(-1)
        df = dy.reshape(-1)
        part = np.empty(2 * chans, np.float32)
        sdy[:] = 0.0
        sdyx[:] = 0.0
        for r0 in range(0, rows, BLOCK):
            r1 = min(r0 + BLOCK, rows)
            for cv in range(0, chans, 16):
                _block_grad_sums16(xf, df, mean, r0, r1, chans, cv, part)
            for c in range(chans):
                sdy[c] += part[c]
                sdyx[c] += part[chans + c]
        return
    a = np.zeros(chans, np.float32)
    b = np.zeros(chans, np.float32)
    sdy[:] = 0.0
    sdyx[:] = 0.0
    for r0 in range(0, rows, BLOCK):
        r1 = min(r0 + BLOCK, rows)
        a[:] = 0.0
        b[:] = 0.0
        for r in range(r0, r1):
            for c in range(chans):
                g = dy[r, c]
                a[c] += g
                b[c] += g * (x[r, c] - mean[c])
        for c in range(chans):
            sdy[c] += a[c]
            sdyx[c] += b[c]


@njit(**_OPTS)
def grad_sums_first(x, dy, mean, sdy, sdyx):
    """As :func:`grad_sums_last` for (N, C, L) arrays."""
    n_img, chans, length = x.shape
    sdy[:] = 0.0
    sdyx[:] = 0.0
    for n in range(n_img):
        for c in range(chans):
            m = mean[c]
            for l0 in range(0, length, BLOCK):
                a = np.float32(0.0)
                b = np.float32(0.0)
                for i in range(l0, min(l0 + BLOCK, length)):
                    g = dy[n, c, i]
                    a += g
                    b += g * (x[n, c, i] - m)
                sdy[c] += a
                sdyx[c] += b


@njit(**_OPTS)
def grad_dx_last(x, dy, mean, k_dy, k_x, k_0, dx):
    """dx = k_dy * dy + k_x * (x - mean) + k_0 per channel, (M, C) arrays."""
    rows, chans = x.shape
    for r in range(rows):
        for c in range(chans):
            dx[r, c] = k_dy[c] * dy[r, c] + k_x[c] * (x[r, c] - mean[c]) + k_0[c]


@njit(**_OPTS)
def grad_dx_first(x, dy, mean, k_dy, k_x, k_0, dx):
    """As :func:`grad_dx_last` for (N, C, L) arrays."""
    n_img, chans, length = x.shape
    for n in range(n_img):
        for c in range(chans):
            m, a, b, z = mean[c], k_dy[c], k_x[c], k_0[c]
            for i in range(length):
                dx[n, c, i] = a * dy[n, c, i] + b * (x[n, c, i] - m) + z
