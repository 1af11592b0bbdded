"""numba kernels of training BatchNorm followed by relu, fused (imported only when numba is
present; bn_jit calls them when the executor pairs a BatchNorm with the relu that alone reads its
output, see mxmod/executor/fusion.py).

Forward: ``out = relu((x - mean) * scale + beta)`` in the pass that would write BatchNorm's output
(relu then has nothing left to do). Backward: relu's gradient passes dy on unchanged and these
kernels apply its mask, recomputing ``(x - mean) * scale + beta > 0`` with the forward's very
arithmetic, so results are bit-identical to the separate operators' (the mask multiplies, as
relu's gradient does: a NaN in dy stays NaN). Memory orders as in bn_kernels: ``last`` (M, C),
``first`` (N, C, L); float32."""
import numpy as np
from numba import njit

from .simd import vzero, vload, vstore, vadd, vsub, vmul, vfma, vpos

__all__ = ['apply_last', 'apply_first', 'grad_sums_last', 'grad_sums_first', 'grad_dx_last',
           'grad_dx_first']

BLOCK = 256
_OPTS = dict(cache=True, boundscheck=False, nogil=True)


@njit(**_OPTS)
def _relu(v):
    """np.fmax(v, 0): v above zero, +0.0 otherwise, NaN included (Activation's relu of float32
    on the CPU, as MXNet's MKL-DNN kernel)."""
    return v if v > 0 else np.float32(0.0)


@njit(**_OPTS)
def _mask(v):
    return np.float32(1.0) if v > 0 else np.float32(0.0)


@njit(**_OPTS)
def apply_last(x, mean, scale, beta, out):
    """out = relu((x - mean) * scale + beta) per channel; x, out (M, C)."""
    rows, chans = x.shape
    for r in range(rows):
        for c in range(chans):
            out[r, c] = _relu((x[r, c] - mean[c]) * scale[c] + beta[c])


@njit(**_OPTS)
def apply_first(x, mean, scale, beta, out):
    """As :func:`apply_last` for (N, C, L) arrays."""
    n_img, chans, length = x.shape
    for n in range(n_img):
        for c in range(chans):
            m, s, b = mean[c], scale[c], beta[c]
            for i in range(length):
                out[n, c, i] = _relu((x[n, c, i] - m) * s + b)


@njit(**_OPTS)
def _block_sums16(xf, df, mean, scale, beta, r0, r1, chans, cv, part):
    """part[cv..] = sum of g, part[chans + cv..] = sum of g * (x - mean), g = dy masked by relu,
    over rows r0..r1-1 of channels cv..cv+15."""
    m = vload(mean, cv)
    s = vload(scale, cv)
    b = vload(beta, cv)
    a = vzero()
    p = vzero()
    a2 = vzero()
    p2 = vzero()
    r = r0
    while r + 2 <= r1:      # two rows at a time, as bn_kernels sums the unmasked gradient
        d = vsub(vload(xf, r * chans + cv), m)
        g = vmul(vload(df, r * chans + cv), vpos(vadd(vmul(d, s), b)))
        a = vadd(a, g)
        p = vfma(p, g, d)
        e = vsub(vload(xf, (r + 1) * chans + cv), m)
        h = vmul(vload(df, (r + 1) * chans + cv), vpos(vadd(vmul(e, s), b)))
        a2 = vadd(a2, h)
        p2 = vfma(p2, h, e)
        r += 2
    if r < r1:
        d = vsub(vload(xf, r * chans + cv), m)
        g = vmul(vload(df, r * chans + cv), vpos(vadd(vmul(d, s), b)))
        a = vadd(a, g)
        p = vfma(p, g, d)
    vstore(part, cv, vadd(a, a2))
    vstore(part, chans + cv, vadd(p, p2))


@njit(**_OPTS)
def grad_sums_last(x, dy, mean, scale, beta, sdy, sdyx):
    """sdy = sum of g, sdyx = sum of g * (x - mean) per channel (float64), g = dy masked by the
    forward's relu; (M, C) arrays."""
    rows, chans = x.shape
    sdy[:] = 0.0
    sdyx[:] = 0.0
    if chans % 16 == 0:
        xf = x.reshape(-1)
        df = dy.reshape(-1)
        part = np.empty(2 * chans, np.float32)
        for r0 in range(0, rows, BLOCK):
            r1 = min(r0 + BLOCK, rows)
            for cv in range(0, chans, 16):
                _block_sums16(xf, df, mean, scale, beta, r0, r1, chans, cv, part)
            for c in range(chans):
                sdy[c] += part[c]
                sdyx[c] += part[chans + c]
        return
    a = np.zeros(chans, np.float32)
    p = np.zeros(chans, np.float32)
    for r0 in range(0, rows, BLOCK):
        r1 = min(r0 + BLOCK, rows)
        a[:] = 0.0
        p[:] = 0.0
        for r in range(r0, r1):
            for c in range(chans):
                d = x[r, c] - mean[c]
                g = dy[r, c] * _mask(d * scale[c] + beta[c])
                a[c] += g
                p[c] += g * d
        for c in range(chans):
            sdy[c] += a[c]
            sdyx[c] += p[c]


@njit(**_OPTS)
def grad_sums_first(x, dy, mean, scale, beta, sdy, sdyx):
    """As :func:`grad_sums_last` for (N, C, L) arrays."""
    n_img, chans, length = x.shape
    sdy[:] = 0.0
    sdyx[:] = 0.0
    for n in range(n_img):
        for c in range(chans):
            m, s, b = mean[c], scale[c], beta[c]
            for l0 in range(0, length, BLOCK):
                a = np.float32(0.0)
                p = np.float32(0.0)
                for i in range(l0, min(l0 + BLOCK, length)):
                    d = x[n, c, i] - m
                    g = dy[n, c, i] * _mask(d * s + b)
                    a += g
                    p += g * d
                sdy[c] += a
                sdyx[c] += p


@njit(**_OPTS)
def grad_dx_last(x, dy, mean, scale, beta, k_dy, k_x, k_0, dx):
    """dx = k_dy * g + k_x * (x - mean) + k_0 per channel, g = dy masked; (M, C) arrays."""
    rows, chans = x.shape
    for r in range(rows):
        for c in range(chans):
            d = x[r, c] - mean[c]
            g = dy[r, c] * _mask(d * scale[c] + beta[c])
            dx[r, c] = k_dy[c] * g + k_x[c] * d + k_0[c]


@njit(**_OPTS)
def grad_dx_first(x, dy, mean, scale, beta, k_dy, k_x, k_0, dx):
    """As :func:`grad_dx_last` for (N, C, L) arrays."""
    n_img, chans, length = x.shape
    for n in range(n_img):
        for c in range(chans):
            m, s, b, a, kx, z = mean[c], scale[c], beta[c], k_dy[c], k_x[c], k_0[c]
            for i in range(length):
                d = x[n, c, i] - m
                g = dy[n, c, i] * _mask(d * s + b)
                dx[n, c, i] = a * g + kx * d + z
