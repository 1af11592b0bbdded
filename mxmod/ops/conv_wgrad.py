"""numba kernel of the weight gradient of a 2-D float32 convolution on channels-last memory
(imported only when numba is present; conv_jit calls it, and wino_wgrad for the 3x3 layers that
Winograd's transform fits): per image, a few output rows at a time, the outer products of input
channels and dy filters summed over the pixels with the accumulators in vector registers."""
from numba import njit

from .simd import vzero, vload, vstore, sload, vfma_s, vadd, prefetch

__all__ = ['weight_grad', 'block', 'merged']

_OPTS = dict(cache=True, boundscheck=False, nogil=True)


@njit(**_OPTS)
def _wg_8x1(xp, dy, dw, xb, xs, h0, h1, Wo, rows, wlo, whi, C, Fp, c0, fb, wb, db0):
    """dw[tap, c0..c0+7, fb..fb+15] += sum over one image's pixels of x[c] * dy[f]."""
    o = wb + c0 * Fp + fb
    a0 = vload(dw, o)
    a1 = vload(dw, o + Fp)
    a2 = vload(dw, o + 2 * Fp)
    a3 = vload(dw, o + 3 * Fp)
    a4 = vload(dw, o + 4 * Fp)
    a5 = vload(dw, o + 5 * Fp)
    a6 = vload(dw, o + 6 * Fp)
    a7 = vload(dw, o + 7 * Fp)
    for ho in range(h0, h1):
        if rows[ho] < 0:
            continue
        q = xb + rows[ho] + c0
        d = db0 + (ho * Wo + wlo) * Fp + fb
        for _ in range(wlo, whi):
            g = vload(dy, d)
            a0 = vfma_s(a0, sload(xp, q), g)
            a1 = vfma_s(a1, sload(xp, q + 1), g)
            a2 = vfma_s(a2, sload(xp, q + 2), g)
            a3 = vfma_s(a3, sload(xp, q + 3), g)
            a4 = vfma_s(a4, sload(xp, q + 4), g)
            a5 = vfma_s(a5, sload(xp, q + 5), g)
            a6 = vfma_s(a6, sload(xp, q + 6), g)
            a7 = vfma_s(a7, sload(xp, q + 7), g)
            q += xs
            d += Fp
    vstore(dw, o, a0)
    vstore(dw, o + Fp, a1)
    vstore(dw, o + 2 * Fp, a2)
    vstore(dw, o + 3 * Fp, a3)
    vstore(dw, o + 4 * Fp, a4)
    vstore(dw, o + 5 * Fp, a5)
    vstore(dw, o + 6 * Fp, a6)
    vstore(dw, o + 7 * Fp, a7)


@njit(**_OPTS)
def _wg_4x2(xp, dy, dw, xb, xs, h0, h1, Wo, rows, wlo, whi, C, Fp, c0, fb, wb, db0):
    """dw[tap, c0..c0+3, fb..fb+31] += one image's sum of x[c] * dy[f]."""
    o = wb + c0 * Fp + fb
    a0 = vload(dw, o)
    a1 = vload(dw, o + Fp)
    a2 = vload(dw, o + 2 * Fp)
    a3 = vload(dw, o + 3 * Fp)
    b0 = vload(dw, o + 16)
    b1 = vload(dw, o + Fp + 16)
    b2 = vload(dw, o + 2 * Fp + 16)
    b3 = vload(dw, o + 3 * Fp + 16)
    for ho in range(h0, h1):
        if rows[ho] < 0:
            continue
        q = xb + rows[ho] + c0
        d = db0 + (ho * Wo + wlo) * Fp + fb
        for _ in range(wlo, whi):
            g = vload(dy, d)
            h = vload(dy, d + 16)
            s = sload(xp, q)
            a0 = vfma_s(a0, s, g)
            b0 = vfma_s(b0, s, h)
            s = sload(xp, q + 1)
            a1 = vfma_s(a1, s, g)
            b1 = vfma_s(b1, s, h)
            s = sload(xp, q + 2)
            a2 = vfma_s(a2, s, g)
            b2 = vfma_s(b2, s, h)
            s = sload(xp, q + 3)
            a3 = vfma_s(a3, s, g)
            b3 = vfma_s(b3, s, h)
            q += xs
            d += Fp
    vstore(dw, o, a0)
    vstore(dw, o + Fp, a1)
    vstore(dw, o + 2 * Fp, a2)
    vstore(dw, o + 3 * Fp, a3)
    vstore(dw, o + 16, b0)
    vstore(dw, o + Fp + 16, b1)
    vstore(dw, o + 2 * Fp + 16, b2)
    vstore(dw, o + 3 * Fp + 16, b3)


@njit(**_OPTS)
def _wg_4x4(xp, dy, dw, xb, xs, h0, h1, Wo, rows, wlo, whi, C, Fp, c0, fb, wb, db0):
    """dw[tap, c0..c0+3, fb..fb+63] += one image's sum of x[c] * dy[f] (16 accumulators)."""
    o = wb + c0 * Fp + fb
    a0 = vload(dw, o)
    a1 = vload(dw, o + Fp)
    a2 = vload(dw, o + 2 * Fp)
    a3 = vload(dw, o + 3 * Fp)
    b0 = vload(dw, o + 16)
    b1 = vload(dw, o + Fp + 16)
    b2 = vload(dw, o + 2 * Fp + 16)
    b3 = vload(dw, o + 3 * Fp + 16)
    e0 = vload(dw, o + 32)
    e1 = vload(dw, o + Fp + 32)
    e2 = vload(dw, o + 2 * Fp + 32)
    e3 = vload(dw, o + 3 * Fp + 32)
    g0 = vload(dw, o + 48)
    g1 = vload(dw, o + Fp + 48)
    g2 = vload(dw, o + 2 * Fp + 48)
    g3 = vload(dw, o + 3 * Fp + 48)
    for ho in range(h0, h1):
        if rows[ho] < 0:
            continue
        q = xb + rows[ho] + c0
        d = db0 + (ho * Wo + wlo) * Fp + fb
        for _ in range(wlo, whi):
            u0 = vload(dy, d)
            u1 = vload(dy, d + 16)
            u2 = vload(dy, d + 32)
            u3 = vload(dy, d + 48)
            s = sload(xp, q)
            a0 = vfma_s(a0, s, u0)
            b0 = vfma_s(b0, s, u1)
            e0 = vfma_s(e0, s, u2)
            g0 = vfma_s(g0, s, u3)
            s = sload(xp, q + 1)
            a1 = vfma_s(a1, s, u0)
            b1 = vfma_s(b1, s, u1)
            e1 = vfma_s(e1, s, u2)
            g1 = vfma_s(g1, s, u3)
            s = sload(xp, q + 2)
            a2 = vfma_s(a2, s, u0)
            b2 = vfma_s(b2, s, u1)
            e2 = vfma_s(e2, s, u2)
            g2 = vfma_s(g2, s, u3)
            s = sload(xp, q + 3)
            a3 = vfma_s(a3, s, u0)
            b3 = vfma_s(b3, s, u1)
            e3 = vfma_s(e3, s, u2)
            g3 = vfma_s(g3, s, u3)
            q += xs
            d += Fp
    vstore(dw, o, a0)
    vstore(dw, o + Fp, a1)
    vstore(dw, o + 2 * Fp, a2)
    vstore(dw, o + 3 * Fp, a3)
    vstore(dw, o + 16, b0)
    vstore(dw, o + Fp + 16, b1)
    vstore(dw, o + 2 * Fp + 16, b2)
    vstore(dw, o + 3 * Fp + 16, b3)
    vstore(dw, o + 32, e0)
    vstore(dw, o + Fp + 32, e1)
    vstore(dw, o + 2 * Fp + 32, e2)
    vstore(dw, o + 3 * Fp + 32, e3)
    vstore(dw, o + 48, g0)
    vstore(dw, o + Fp + 48, g1)
    vstore(dw, o + 2 * Fp + 48, g2)
    vstore(dw, o + 3 * Fp + 48, g3)


@njit(**_OPTS)
def _wg_1x1(xp, dy, dw, xb, xs, h0, h1, Wo, rows, wlo, whi, C, Fp, c0, fb, wb, db0):
    """dw[tap, c0, fb..fb+15] += one image's sum (four pixels in flight)."""
    o = wb + c0 * Fp + fb
    a0 = vload(dw, o)
    a1 = vzero()
    a2 = vzero()
    a3 = vzero()
    for ho in range(h0, h1):
        if rows[ho] < 0:
            continue
        q = xb + rows[ho] + c0
        d = db0 + (ho * Wo + wlo) * Fp + fb
        wo = wlo
        while wo + 4 <= whi:
            a0 = vfma_s(a0, sload(xp, q), vload(dy, d))
            a1 = vfma_s(a1, sload(xp, q + xs), vload(dy, d + Fp))
            a2 = vfma_s(a2, sload(xp, q + 2 * xs), vload(dy, d + 2 * Fp))
            a3 = vfma_s(a3, sload(xp, q + 3 * xs), vload(dy, d + 3 * Fp))
            q += 4 * xs
            d += 4 * Fp
            wo += 4
        while wo < whi:
            a0 = vfma_s(a0, sload(xp, q), vload(dy, d))
            q += xs
            d += Fp
            wo += 1
    vstore(dw, o, vadd(vadd(a0, a1), vadd(a2, a3)))


def block(Fp):
    """Channels :func:`weight_grad` takes at a time for Fp filters (the rest one by one)."""
    return 4 if Fp % 32 == 0 else 8


def merged(C, KW, PW, DW):
    """(channels, taps per row) as :func:`weight_grad` sees them: without padding or dilation
    along W, a row of KW taps is one tap of KW*C channels."""
    return (KW * C, 1) if PW == 0 and DW == 1 else (C, KW)


@njit(**_OPTS)
def weight_grad(x, dy, dw, rows, N, H, W, C, Ho, Wo, Fp, KH, KW, SH, SW, DH, DW, PH, PW):
    """dw (KH, KW, C, Fp) += sum over images and pixels of the windows of x (N, H, W, C),
    zero-padded by PH rows and PW columns, times dy (N, Ho, Wo, Fp). Taps that fall into the
    padding are skipped (each tap sums over the output rows and columns it reads inside x), and
    each image is taken a few output rows at a time (about 8 KB of dy), so that the rows of dy
    and x that every tap and channel block reads again stay in the L1 cache. ``rows`` (Ho,) is
    int64 scratch."""
    xs = SW * C
    wide = Fp % 32 == 0
    chunk = max(1, min(Ho, 8192 // (Wo * Fp * 4)))
    # without padding or dilation along W, a row of KW taps reads KW*C consecutive values at every
    # output pixel: one tap of KW*C channels (dw's memory is in that order already)
    CC = C
    if PW == 0 and DW == 1:
        CC = KW * C
        KW = 1
    for n in range(N):
        db0 = n * Ho * Wo * Fp
        for h0 in range(0, Ho, chunk):
            h1 = min(h0 + chunk, Ho)
            # the next chunk's rows of dy and x arrive while this one computes (the last
            # chunk asks for the next image's first rows)
            nd = db0 + h1 * Wo * Fp
            for k in range(0, chunk * Wo * Fp, 16):
                prefetch(dy, min(nd + k, N * Ho * Wo * Fp - 1))
            nx = (n * H + min(h1 * SH, H - 1)) * W * C
            for k in range(0, chunk * SH * W * C, 16):
                prefetch(x, min(nx + k, N * H * W * C - 1))
            for i in range(KH):
                for ho in range(h0, h1):
                    r = ho * SH + i * DH - PH
                    rows[ho] = (r * W * C) if 0 <= r < H else -1
                for j in range(KW):
                    col = j * DW - PW
                    wlo = max(0, -((col) // SW)) if col < 0 else 0
                    whi = min(Wo, (W - 1 - col) // SW + 1) if W - 1 - col >= 0 else 0
                    if whi <= wlo:
                        continue
                    xb = n * H * W * C + (wlo * SW + col) * C
                    wb = (i * KW + j) * CC * Fp
                    c0 = 0
                    if Fp % 64 == 0:
                        while c0 + 4 <= CC:
                            for fb in range(0, Fp, 64):
                                _wg_4x4(x, dy, dw, xb, xs, h0, h1, Wo, rows, wlo, whi, C, Fp, c0,
                                        fb, wb, db0)
                            c0 += 4
                    elif wide:
                        while c0 + 4 <= CC:
                            for fb in range(0, Fp, 32):
                                _wg_4x2(x, dy, dw, xb, xs, h0, h1, Wo, rows, wlo, whi, C, Fp, c0,
                                        fb, wb, db0)
                            c0 += 4
                    else:
                        while c0 + 8 <= CC:
                            for fb in range(0, Fp, 16):
                                _wg_8x1(x, dy, dw, xb, xs, h0, h1, Wo, rows, wlo, whi, C, Fp, c0,
                                        fb, wb, db0)
                            c0 += 8
                    while c0 < CC:
                        for fb in range(0, Fp, 16):
                            _wg_1x1(x, dy, dw, xb, xs, h0, h1, Wo, rows, wlo, whi, C, Fp, c0, fb,
                                    wb, db0)
                        c0 += 1
