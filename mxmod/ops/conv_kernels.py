"""numba kernels of 2-D float32 convolution on channels-last memory (imported only when numba is
present; :mod:`conv_jit` calls them and :mod:`conv_cl` is the numpy path they replace).

Every array is C-contiguous float32 and passed flat with its dimensions:

- input ``x`` (N, H, W, C) (the padding is implicit); output ``y`` (N, Ho, Wo, Fp);
- weight ``w`` (KH, KW, C, Fp), Fp = F rounded up to 16 with zero columns, so that vectors of 16
  filters are always whole (the caller keeps the first F channels of y); ``bias`` (Fp,).

The forward kernel computes blocks of 8 neighbouring output pixels of one row by 16 or 32 filters
with the accumulators in vector registers: for each kernel tap and input channel, one load of the
filters' weights and eight broadcast multiply-adds (no columns are materialised). The data
gradient of a strided convolution adds each dy pixel's window back (conv_scatter.py); the weight
gradient sums, per image, outer products of input channels and dy filters (conv_wgrad.py)."""
from numba import njit

from .simd import vzero, vload, vstore, sload, vfma_s, vadd, prefetch

__all__ = ['forward']

_OPTS = dict(cache=True, boundscheck=False, nogil=True)


# ---- forward ----------------------------------------------------------------------------------
@njit(**_OPTS)
def _store8(y, ob, pitch, a0, a1, a2, a3, a4, a5, a6, a7):
    vstore(y, ob, a0)
    vstore(y, ob + pitch, a1)
    vstore(y, ob + 2 * pitch, a2)
    vstore(y, ob + 3 * pitch, a3)
    vstore(y, ob + 4 * pitch, a4)
    vstore(y, ob + 5 * pitch, a5)
    vstore(y, ob + 6 * pitch, a6)
    vstore(y, ob + 7 * pitch, a7)


@njit(**_OPTS)
def _fwd_1x8(xp, w, bias, y, xb, xs, tap_h, tap_w, C, Fp, fb, KH, KW, ob):
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
    _store8(y, ob, Fp, a0, a1, a2, a3, a4, a5, a6, a7)


@njit(**_OPTS)
def _fwd_1x16(xp, w, bias, y, xb, xs, tap_h, tap_w, C, Fp, fb, KH, KW, ob):
    """16 pixels by filters fb..fb+15 (16 accumulators keep both FMA units busy)."""
    a0 = vload(bias, fb)
    a1, a2, a3, a4, a5, a6, a7 = a0, a0, a0, a0, a0, a0, a0
    a8, a9, a10, a11, a12, a13, a14, a15 = a0, a0, a0, a0, a0, a0, a0, a0
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
                a8 = vfma_s(a8, sload(xp, q + c + 8 * xs), wv)
                a9 = vfma_s(a9, sload(xp, q + c + 9 * xs), wv)
                a10 = vfma_s(a10, sload(xp, q + c + 10 * xs), wv)
                a11 = vfma_s(a11, sload(xp, q + c + 11 * xs), wv)
                a12 = vfma_s(a12, sload(xp, q + c + 12 * xs), wv)
                a13 = vfma_s(a13, sload(xp, q + c + 13 * xs), wv)
                a14 = vfma_s(a14, sload(xp, q + c + 14 * xs), wv)
                a15 = vfma_s(a15, sload(xp, q + c + 15 * xs), wv)
    _store8(y, ob, Fp, a0, a1, a2, a3, a4, a5, a6, a7)
    _store8(y, ob + 8 * Fp, Fp, a8, a9, a10, a11, a12, a13, a14, a15)


@njit(**_OPTS)
def _fwd_2x8(xp, w, bias, y, xb, xs, tap_h, tap_w, C, Fp, fb, KH, KW, ob):
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
    _store8(y, ob, Fp, a0, a1, a2, a3, a4, a5, a6, a7)
    _store8(y, ob + 16, Fp, b0, b1, b2, b3, b4, b5, b6, b7)


@njit(**_OPTS)
def _fwd_pixel(xp, w, bias, y, xb, tap_h, tap_w, C, Fp, fb, KH, KW, ob):
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
    vstore(y, ob, vadd(a0, a1))


@njit(**_OPTS)
def _stage(x, buf, n, H, W, C, PH, PW, Wp):
    """The interior of buf (H + 2 PH, Wp, C) = image n of x (N, H, W, C); the padding around it
    is zero already (written once by the caller)."""
    rowlen = W * C
    for r in range(H):
        s = (n * H + r) * rowlen
        o = ((r + PH) * Wp + PW) * C
        k = 0
        while k + 16 <= rowlen:
            vstore(buf, o + k, vload(x, s + k))
            k += 16
        while k < rowlen:
            buf[o + k] = x[s + k]
            k += 1


@njit(**_OPTS)
def _image_rows(src, base, pitch, w, bias, y, n, C, Ho, Wo, Fp, KH, KW, SH, SW, DH, DW, x, nxt,
                lines):
    """Output rows of image n from ``src`` (the image's padded rows from offset ``base``, rows
    ``pitch`` values apart). Without dilation along W, a row of KW taps reads KW*C consecutive
    values, taken as one tap of KW*C channels (the weight's memory is in that order already)."""
    wide = Fp % 32 == 0
    xs = SW * C
    tap_w = DW * C
    tap_h = DH * pitch
    if DW == 1:
        C = KW * C
        KW = 1
    per_row = (lines + Ho - 1) // Ho
    for ho in range(Ho):
        # the next image's cache lines (x[nxt:], ``lines`` of them), spread over this image's
        # rows, arrive while it computes
        for k in range(ho * per_row, min((ho + 1) * per_row, lines)):
            prefetch(x, nxt + k * 16)
        xrow = base + ho * SH * pitch
        orow = (n * Ho + ho) * Wo * Fp
        wo = 0
        while not wide and wo + 16 <= Wo:
            for fb in range(0, Fp, 16):
                _fwd_1x16(src, w, bias, y, xrow + wo * xs, xs, tap_h, tap_w, C, Fp, fb, KH, KW,
                          orow + wo * Fp + fb)
            wo += 16
        while wo + 8 <= Wo:
            xb = xrow + wo * xs
            ob = orow + wo * Fp
            if wide:
                for fb in range(0, Fp, 32):
                    _fwd_2x8(src, w, bias, y, xb, xs, tap_h, tap_w, C, Fp, fb, KH, KW, ob + fb)
            else:
                for fb in range(0, Fp, 16):
                    _fwd_1x8(src, w, bias, y, xb, xs, tap_h, tap_w, C, Fp, fb, KH, KW, ob + fb)
            wo += 8
        while wo < Wo:
            for fb in range(0, Fp, 16):
                _fwd_pixel(src, w, bias, y, xrow + wo * xs, tap_h, tap_w, C, Fp, fb, KH, KW,
                           orow + wo * Fp + fb)
            wo += 1


@njit(**_OPTS)
def forward(x, w, bias, y, buf, N, H, W, C, Ho, Wo, Fp, KH, KW, SH, SW, DH, DW, PH, PW):
    """y (N, Ho, Wo, Fp) = correlation of x (N, H, W, C), zero-padded by PH rows and PW columns,
    with w (KH, KW, C, Fp), plus bias. With padding, each image is first copied into the padded
    image buffer ``buf`` ((H + 2 PH) * (W + 2 PW) * C values, small enough to stay in cache
    while the image's outputs are computed) instead of padding the whole batch."""
    image = H * W * C
    lines = (image + 15) // 16
    if PH > 0 or PW > 0:
        Wp = W + 2 * PW
        buf[:] = 0.0
        for n in range(N):
            _stage(x, buf, n, H, W, C, PH, PW, Wp)
            _image_rows(buf, 0, Wp * C, w, bias, y, n, C, Ho, Wo, Fp, KH, KW, SH, SW, DH, DW,
                        x, min(n + 1, N - 1) * image, lines)
    else:
        for n in range(N):
            _image_rows(x, n * image, W * C, w, bias, y, n, C, Ho, Wo, Fp, KH, KW, SH, SW,
                        DH, DW, x, min(n + 1, N - 1) * image, lines)
