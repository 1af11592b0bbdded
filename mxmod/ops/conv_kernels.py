"""numba kernels of 2-D float32 convolution on channels-last memory (imported only when numba is
present; :mod:`conv_jit` calls them and :mod:`conv_cl` is the numpy path they replace).

Every array is C-contiguous float32 and passed flat with its dimensions:

- input ``xp`` (N, Hp, Wp, C), already zero-padded; output ``y`` (N, Ho, Wo, F);
- weight ``w`` (KH, KW, C, Fp), Fp = F rounded up to 16 with zero columns, so that a vector of 16
  filters can always be loaded; ``bias`` (Fp,).

The forward kernel computes blocks of 8 neighbouring output pixels of one row by 16 or 32 filters
with the accumulators in vector registers: for each kernel tap and input channel, one load of the
filters' weights and eight broadcast multiply-adds (no columns are materialised). The data
gradient of a strided convolution adds each dy pixel's window back (``data_scatter``); the weight
gradient sums, per image, outer products of input channels and dy filters (``weight_grad``)."""
from numba import njit

from .simd import vzero, vload, vstore, vstore_n, sload, vfma_s, vadd

__all__ = ['forward', 'data_scatter', 'weight_grad']

_OPTS = dict(cache=True, boundscheck=False, nogil=True)


# ---- forward ----------------------------------------------------------------------------------
@njit(**_OPTS)
def _store8(y, ob, pitch, cnt, a0, a1, a2, a3, a4, a5, a6, a7):
    if cnt >= 16:
        vstore(y, ob, a0)
        vstore(y, ob + pitch, a1)
        vstore(y, ob + 2 * pitch, a2)
        vstore(y, ob + 3 * pitch, a3)
        vstore(y, ob + 4 * pitch, a4)
        vstore(y, ob + 5 * pitch, a5)
        vstore(y, ob + 6 * pitch, a6)
        vstore(y, ob + 7 * pitch, a7)
    else:
        vstore_n(y, ob, a0, cnt)
        vstore_n(y, ob + pitch, a1, cnt)
        vstore_n(y, ob + 2 * pitch, a2, cnt)
        vstore_n(y, ob + 3 * pitch, a3, cnt)
        vstore_n(y, ob + 4 * pitch, a4, cnt)
        vstore_n(y, ob + 5 * pitch, a5, cnt)
        vstore_n(y, ob + 6 * pitch, a6, cnt)
        vstore_n(y, ob + 7 * pitch, a7, cnt)


@njit(**_OPTS)
def _fwd_1x8(xp, w, bias, y, xb, xs, tap_h, tap_w, C, Fp, F, fb, KH, KW, ob):
    """8 pixels (input offsets xb + b*xs) by filters fb..fb+15."""
    a0 = vload(bias, fb)
    a1, a2, a3, a4, a5, a6, a7 = a0, a0, a0, a0, a0, a0, a0
    for i in range(KH):
        for j in range(KW):
            q = xb + i * tap_h + j * tap_w
            wb = (i * KW + j) * C * Fp + fb
            for c in range(C):
                wv = vload(w, wb + c * Fp)
                a0 = vfma_s(a0, sload(xp, q + c), wv)
                a1 = vfma_s(a1, sload(xp, q + c + xs), wv)
                a2 = vfma_s(a2, sload(xp, q + c + 2 * xs), wv)
                a3 = vfma_s(a3, sload(xp, q + c + 3 * xs), wv)
                a4 = vfma_s(a4, sload(xp, q + c + 4 * xs), wv)
                a5 = vfma_s(a5, sload(xp, q + c + 5 * xs), wv)
                a6 = vfma_s(a6, sload(xp, q + c + 6 * xs), wv)
                a7 = vfma_s(a7, sload(xp, q + c + 7 * xs), wv)
    _store8(y, ob, F, F - fb, a0, a1, a2, a3, a4, a5, a6, a7)


@njit(**_OPTS)
def _fwd_2x8(xp, w, bias, y, xb, xs, tap_h, tap_w, C, Fp, F, fb, KH, KW, ob):
    """8 pixels by filters fb..fb+31."""
    a0 = vload(bias, fb)
    b0 = vload(bias, fb + 16)
    a1, a2, a3, a4, a5, a6, a7 = a0, a0, a0, a0, a0, a0, a0
    b1, b2, b3, b4, b5, b6, b7 = b0, b0, b0, b0, b0, b0, b0
    for i in range(KH):
        for j in range(KW):
            q = xb + i * tap_h + j * tap_w
            wb = (i * KW + j) * C * Fp + fb
            for c in range(C):
                wv = vload(w, wb + c * Fp)
                wu = vload(w, wb + c * Fp + 16)
                s = sload(xp, q + c)
                a0 = vfma_s(a0, s, wv)
                b0 = vfma_s(b0, s, wu)
                s = sload(xp, q + c + xs)
                a1 = vfma_s(a1, s, wv)
                b1 = vfma_s(b1, s, wu)
                s = sload(xp, q + c + 2 * xs)
                a2 = vfma_s(a2, s, wv)
                b2 = vfma_s(b2, s, wu)
                s = sload(xp, q + c + 3 * xs)
                a3 = vfma_s(a3, s, wv)
                b3 = vfma_s(b3, s, wu)
                s = sload(xp, q + c + 4 * xs)
                a4 = vfma_s(a4, s, wv)
                b4 = vfma_s(b4, s, wu)
                s = sload(xp, q + c + 5 * xs)
                a5 = vfma_s(a5, s, wv)
                b5 = vfma_s(b5, s, wu)
                s = sload(xp, q + c + 6 * xs)
                a6 = vfma_s(a6, s, wv)
                b6 = vfma_s(b6, s, wu)
                s = sload(xp, q + c + 7 * xs)
                a7 = vfma_s(a7, s, wv)
                b7 = vfma_s(b7, s, wu)
    _store8(y, ob, F, F - fb, a0, a1, a2, a3, a4, a5, a6, a7)
    _store8(y, ob + 16, F, F - fb - 16, b0, b1, b2, b3, b4, b5, b6, b7)


@njit(**_OPTS)
def _fwd_pixel(xp, w, bias, y, xb, tap_h, tap_w, C, Fp, F, fb, KH, KW, ob):
    """One pixel by filters fb..fb+15 (the pixels left over by the 8-pixel blocks)."""
    a0 = vload(bias, fb)
    a1 = vzero()
    for i in range(KH):
        for j in range(KW):
            q = xb + i * tap_h + j * tap_w
            wb = (i * KW + j) * C * Fp + fb
            c = 0
            while c + 1 < C:
                a0 = vfma_s(a0, sload(xp, q + c), vload(w, wb + c * Fp))
                a1 = vfma_s(a1, sload(xp, q + c + 1), vload(w, wb + (c + 1) * Fp))
                c += 2
            if c < C:
                a0 = vfma_s(a0, sload(xp, q + c), vload(w, wb + c * Fp))
    a0 = vadd(a0, a1)
    if F - fb >= 16:
        vstore(y, ob, a0)
    else:
        vstore_n(y, ob, a0, F - fb)


@njit(**_OPTS)
def forward(xp, w, bias, y, N, Hp, Wp, C, Ho, Wo, F, Fp, KH, KW, SH, SW, DH, DW):
    """y (N, Ho, Wo, F) = correlation of xp (N, Hp, Wp, C) with w (KH, KW, C, Fp) + bias."""
    wide = Fp % 32 == 0
    tap_h = DH * Wp * C
    tap_w = DW * C
    xs = SW * C
    for n in range(N):
        for ho in range(Ho):
            xrow = (n * Hp + ho * SH) * Wp * C
            orow = (n * Ho + ho) * Wo * F
            wo = 0
            while wo + 8 <= Wo:
                xb = xrow + wo * xs
                ob = orow + wo * F
                if wide:
                    for fb in range(0, Fp, 32):
                        _fwd_2x8(xp, w, bias, y, xb, xs, tap_h, tap_w, C, Fp, F, fb, KH, KW,
                                 ob + fb)
                else:
                    for fb in range(0, Fp, 16):
                        _fwd_1x8(xp, w, bias, y, xb, xs, tap_h, tap_w, C, Fp, F, fb, KH, KW,
                                 ob + fb)
                wo += 8
            while wo < Wo:
                for fb in range(0, Fp, 16):
                    _fwd_pixel(xp, w, bias, y, xrow + wo * xs, tap_h, tap_w, C, Fp, F, fb, KH,
                               KW, orow + wo * F + fb)
                wo += 1


# ---- data gradient of a strided convolution ---------------------------------------------------
@njit(**_OPTS)
def _add8(d, ob, pitch, a0, a1, a2, a3, a4, a5, a6, a7):
    vstore(d, ob, vadd(vload(d, ob), a0))
    vstore(d, ob + pitch, vadd(vload(d, ob + pitch), a1))
    vstore(d, ob + 2 * pitch, vadd(vload(d, ob + 2 * pitch), a2))
    vstore(d, ob + 3 * pitch, vadd(vload(d, ob + 3 * pitch), a3))
    vstore(d, ob + 4 * pitch, vadd(vload(d, ob + 4 * pitch), a4))
    vstore(d, ob + 5 * pitch, vadd(vload(d, ob + 5 * pitch), a5))
    vstore(d, ob + 6 * pitch, vadd(vload(d, ob + 6 * pitch), a6))
    vstore(d, ob + 7 * pitch, vadd(vload(d, ob + 7 * pitch), a7))


@njit(**_OPTS)
def data_scatter(dy, wt, dxp, N, Ho, Wo, F, Hp, Wp, Cp, KH, KW, SH, SW, DH, DW):
    """dxp (N, Hp, Wp, Cp), zeroed by the caller, += every dy pixel's window: dy (N, Ho, Wo, F)
    times wt (KH, KW, F, Cp) at each tap."""
    for n in range(N):
        for ho in range(Ho):
            drow = (n * Ho + ho) * Wo * F
            wo = 0
            while wo + 8 <= Wo:
                db = drow + wo * F
                for i in range(KH):
                    for j in range(KW):
                        ob = ((n * Hp + ho * SH + i * DH) * Wp + wo * SW + j * DW) * Cp
                        for cb in range(0, Cp, 16):
                            wb = (i * KW + j) * F * Cp + cb
                            a0 = vzero()
                            a1, a2, a3, a4, a5, a6, a7 = a0, a0, a0, a0, a0, a0, a0
                            for f in range(F):
                                wv = vload(wt, wb + f * Cp)
                                a0 = vfma_s(a0, sload(dy, db + f), wv)
                                a1 = vfma_s(a1, sload(dy, db + f + F), wv)
                                a2 = vfma_s(a2, sload(dy, db + f + 2 * F), wv)
                                a3 = vfma_s(a3, sload(dy, db + f + 3 * F), wv)
                                a4 = vfma_s(a4, sload(dy, db + f + 4 * F), wv)
                                a5 = vfma_s(a5, sload(dy, db + f + 5 * F), wv)
                                a6 = vfma_s(a6, sload(dy, db + f + 6 * F), wv)
                                a7 = vfma_s(a7, sload(dy, db + f + 7 * F), wv)
                            _add8(dxp, ob + cb, SW * Cp, a0, a1, a2, a3, a4, a5, a6, a7)
                wo += 8
            while wo < Wo:
                db = drow + wo * F
                for i in range(KH):
                    for j in range(KW):
                        ob = ((n * Hp + ho * SH + i * DH) * Wp + wo * SW + j * DW) * Cp
                        for cb in range(0, Cp, 16):
                            wb = (i * KW + j) * F * Cp + cb
                            a0 = vload(dxp, ob + cb)
                            for f in range(F):
                                a0 = vfma_s(a0, sload(dy, db + f), vload(wt, wb + f * Cp))
                            vstore(dxp, ob + cb, a0)
                wo += 1


# ---- weight gradient --------------------------------------------------------------------------
@njit(**_OPTS)
def _wg_8x1(xp, dy, dw, xb, xs, h0, h1, Wo, Wp, C, SH, Fp, c0, fb, wb, db0):
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
        q = xb + ho * SH * Wp * C + c0
        d = db0 + ho * Wo * Fp + fb
        for _ in range(Wo):
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
def _wg_4x2(xp, dy, dw, xb, xs, h0, h1, Wo, Wp, C, SH, Fp, c0, fb, wb, db0):
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
        q = xb + ho * SH * Wp * C + c0
        d = db0 + ho * Wo * Fp + fb
        for _ in range(Wo):
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
def _wg_1x1(xp, dy, dw, xb, xs, h0, h1, Wo, Wp, C, SH, Fp, c0, fb, wb, db0):
    """dw[tap, c0, fb..fb+15] += one image's sum (four pixels in flight)."""
    o = wb + c0 * Fp + fb
    a0 = vload(dw, o)
    a1 = vzero()
    a2 = vzero()
    a3 = vzero()
    for ho in range(h0, h1):
        q = xb + ho * SH * Wp * C + c0
        d = db0 + ho * Wo * Fp + fb
        wo = 0
        while wo + 4 <= Wo:
            a0 = vfma_s(a0, sload(xp, q), vload(dy, d))
            a1 = vfma_s(a1, sload(xp, q + xs), vload(dy, d + Fp))
            a2 = vfma_s(a2, sload(xp, q + 2 * xs), vload(dy, d + 2 * Fp))
            a3 = vfma_s(a3, sload(xp, q + 3 * xs), vload(dy, d + 3 * Fp))
            q += 4 * xs
            d += 4 * Fp
            wo += 4
        while wo < Wo:
            a0 = vfma_s(a0, sload(xp, q), vload(dy, d))
            q += xs
            d += Fp
            wo += 1
    vstore(dw, o, vadd(vadd(a0, a1), vadd(a2, a3)))


@njit(**_OPTS)
def weight_grad(xp, dy, dw, N, Hp, Wp, C, Ho, Wo, Fp, KH, KW, SH, SW, DH, DW):
    """dw (KH, KW, C, Fp) += sum over images and pixels of xp (N, Hp, Wp, C) windows times dy
    (N, Ho, Wo, Fp). Each image is taken a few output rows at a time (about 8 KB of dy), so that
    the rows of dy and x that every tap and channel block reads again stay in the L1 cache."""
    xs = SW * C
    wide = Fp % 32 == 0
    rows = max(1, min(Ho, 8192 // (Wo * Fp * 4)))
    for n in range(N):
        db0 = n * Ho * Wo * Fp
        for h0 in range(0, Ho, rows):
            h1 = min(h0 + rows, Ho)
            for i in range(KH):
                for j in range(KW):
                    xb = ((n * Hp + i * DH) * Wp + j * DW) * C
                    wb = (i * KW + j) * C * Fp
                    c0 = 0
                    if wide:
                        while c0 + 4 <= C:
                            for fb in range(0, Fp, 32):
                                _wg_4x2(xp, dy, dw, xb, xs, h0, h1, Wo, Wp, C, SH, Fp, c0, fb,
                                        wb, db0)
                            c0 += 4
                    else:
                        while c0 + 8 <= C:
                            for fb in range(0, Fp, 16):
                                _wg_8x1(xp, dy, dw, xb, xs, h0, h1, Wo, Wp, C, SH, Fp, c0, fb,
                                        wb, db0)
                            c0 += 8
                    while c0 < C:
                        for fb in range(0, Fp, 16):
                            _wg_1x1(xp, dy, dw, xb, xs, h0, h1, Wo, Wp, C, SH, Fp, c0, fb, wb,
                                    db0)
                        c0 += 1
