"""numba kernels of Winograd's F(2x2, 3x3) convolution (imported only when numba is present; conv_jit
calls them for 3x3 convolutions with stride 1 and padding 1 on even image sizes, forward and data
gradient, and the direct kernels of conv_kernels otherwise).

Each 2x2 block of outputs (a tile) comes from a 4x4 block of the padded input d by
``A^T [(G g G^T) . (B^T d B)] A``: the elementwise product in the transformed domain takes 16
multiply-adds per channel pair where the direct convolution takes 36, and the transforms are a few
additions per 16 channels. Per image (staged into a padded buffer, as conv_kernels.forward does),
blocks of 8 tiles go through: the input transform of every channel vector into ``V`` (16, 8, C),
16 matrix products (8, C) x (C, Fp) with the transformed weight ``U`` (16, C, Fp) into ``M``
(16, 8, Fp) (accumulators in registers, as in the direct kernels), and the output transform (plus
bias) of every filter vector into y. C must be a multiple of 16; relative errors stay near float32
rounding (measured 2-4e-7 of the largest output, against 1-2e-7 for the direct kernels)."""
from numba import njit

from .simd import vzero, vload, vstore, sload, vfma_s, vadd, vsub, prefetch

__all__ = ['forward']

_OPTS = dict(cache=True, boundscheck=False, nogil=True)


# ---- tile transforms (written out: 16 vectors each, all in registers) -------------------------
@njit(**_OPTS)
def _wino_in(buf, src, rowp, C, V, dst, vstride):
    """V[dst + k*vstride] (k = 4*r + s) = (B^T d B)[r, s] for the 4x4 input vectors d at
    buf[src + i*rowp + j*C]."""
    d00 = vload(buf, src + 0)
    d01 = vload(buf, src + 0 + 1 * C)
    d02 = vload(buf, src + 0 + 2 * C)
    d03 = vload(buf, src + 0 + 3 * C)
    d10 = vload(buf, src + 1 * rowp)
    d11 = vload(buf, src + 1 * rowp + 1 * C)
    d12 = vload(buf, src + 1 * rowp + 2 * C)
    d13 = vload(buf, src + 1 * rowp + 3 * C)
    d20 = vload(buf, src + 2 * rowp)
    d21 = vload(buf, src + 2 * rowp + 1 * C)
    d22 = vload(buf, src + 2 * rowp + 2 * C)
    d23 = vload(buf, src + 2 * rowp + 3 * C)
    d30 = vload(buf, src + 3 * rowp)
    d31 = vload(buf, src + 3 * rowp + 1 * C)
    d32 = vload(buf, src + 3 * rowp + 2 * C)
    d33 = vload(buf, src + 3 * rowp + 3 * C)
    t00 = vsub(d00, d20)
    t10 = vadd(d10, d20)
    t20 = vsub(d20, d10)
    t30 = vsub(d10, d30)
    t01 = vsub(d01, d21)
    t11 = vadd(d11, d21)
    t21 = vsub(d21, d11)
    t31 = vsub(d11, d31)
    t02 = vsub(d02, d22)
    t12 = vadd(d12, d22)
    t22 = vsub(d22, d12)
    t32 = vsub(d12, d32)
    t03 = vsub(d03, d23)
    t13 = vadd(d13, d23)
    t23 = vsub(d23, d13)
    t33 = vsub(d13, d33)
    vstore(V, dst, vsub(t00, t02))
    vstore(V, dst + 1 * vstride, vadd(t01, t02))
    vstore(V, dst + 2 * vstride, vsub(t02, t01))
    vstore(V, dst + 3 * vstride, vsub(t01, t03))
    vstore(V, dst + 4 * vstride, vsub(t10, t12))
    vstore(V, dst + 5 * vstride, vadd(t11, t12))
    vstore(V, dst + 6 * vstride, vsub(t12, t11))
    vstore(V, dst + 7 * vstride, vsub(t11, t13))
    vstore(V, dst + 8 * vstride, vsub(t20, t22))
    vstore(V, dst + 9 * vstride, vadd(t21, t22))
    vstore(V, dst + 10 * vstride, vsub(t22, t21))
    vstore(V, dst + 11 * vstride, vsub(t21, t23))
    vstore(V, dst + 12 * vstride, vsub(t30, t32))
    vstore(V, dst + 13 * vstride, vadd(t31, t32))
    vstore(V, dst + 14 * vstride, vsub(t32, t31))
    vstore(V, dst + 15 * vstride, vsub(t31, t33))


@njit(**_OPTS)
def _wino_out(M, src, mstride, bias_v, y, dst, rowp, pitch):
    """The 2x2 outputs A^T m A (+ bias) of the 4x4 vectors m = M[src + k*mstride] at
    y[dst + i*rowp + j*pitch]."""
    m00 = vload(M, src)
    m01 = vload(M, src + 1 * mstride)
    m02 = vload(M, src + 2 * mstride)
    m03 = vload(M, src + 3 * mstride)
    m10 = vload(M, src + 4 * mstride)
    m11 = vload(M, src + 5 * mstride)
    m12 = vload(M, src + 6 * mstride)
    m13 = vload(M, src + 7 * mstride)
    m20 = vload(M, src + 8 * mstride)
    m21 = vload(M, src + 9 * mstride)
    m22 = vload(M, src + 10 * mstride)
    m23 = vload(M, src + 11 * mstride)
    m30 = vload(M, src + 12 * mstride)
    m31 = vload(M, src + 13 * mstride)
    m32 = vload(M, src + 14 * mstride)
    m33 = vload(M, src + 15 * mstride)
    s00 = vadd(vadd(m00, m10), m20)
    s10 = vsub(vsub(m10, m20), m30)
    s01 = vadd(vadd(m01, m11), m21)
    s11 = vsub(vsub(m11, m21), m31)
    s02 = vadd(vadd(m02, m12), m22)
    s12 = vsub(vsub(m12, m22), m32)
    s03 = vadd(vadd(m03, m13), m23)
    s13 = vsub(vsub(m13, m23), m33)
    vstore(y, dst, vadd(vadd(vadd(s00, s01), s02), bias_v))
    vstore(y, dst + pitch, vadd(vsub(vsub(s01, s02), s03), bias_v))
    vstore(y, dst + rowp, vadd(vadd(vadd(s10, s11), s12), bias_v))
    vstore(y, dst + rowp + pitch, vadd(vsub(vsub(s11, s12), s13), bias_v))


# ---- per-image driver ---------------------------------------------------------------------
@njit(**_OPTS)
def _gemm_1x8(V, U, M, vb, ub, mb, C, Fp, fb):
    """M[mb + b*Fp + fb..+15] = sum over c of V[vb + b*C + c] * U[ub + c*Fp + fb..+15], b < 8."""
    a0 = vzero()
    a1, a2, a3, a4, a5, a6, a7 = a0, a0, a0, a0, a0, a0, a0
    for c in range(C):
        u = vload(U, ub + c * Fp + fb)
        q = vb + c
        a0 = vfma_s(a0, sload(V, q), u)
        a1 = vfma_s(a1, sload(V, q + C), u)
        a2 = vfma_s(a2, sload(V, q + 2 * C), u)
        a3 = vfma_s(a3, sload(V, q + 3 * C), u)
        a4 = vfma_s(a4, sload(V, q + 4 * C), u)
        a5 = vfma_s(a5, sload(V, q + 5 * C), u)
        a6 = vfma_s(a6, sload(V, q + 6 * C), u)
        a7 = vfma_s(a7, sload(V, q + 7 * C), u)
    o = mb + fb
    vstore(M, o, a0)
    vstore(M, o + Fp, a1)
    vstore(M, o + 2 * Fp, a2)
    vstore(M, o + 3 * Fp, a3)
    vstore(M, o + 4 * Fp, a4)
    vstore(M, o + 5 * Fp, a5)
    vstore(M, o + 6 * Fp, a6)
    vstore(M, o + 7 * Fp, a7)


@njit(**_OPTS)
def _gemm_2x8(V, U, M, vb, ub, mb, C, Fp, fb):
    """As :func:`_gemm_1x8` for filters fb..fb+31."""
    a0 = vzero()
    a1, a2, a3, a4, a5, a6, a7 = a0, a0, a0, a0, a0, a0, a0
    b0, b1, b2, b3, b4, b5, b6, b7 = a0, a0, a0, a0, a0, a0, a0, a0
    for c in range(C):
        u = vload(U, ub + c * Fp + fb)
        v = vload(U, ub + c * Fp + fb + 16)
        q = vb + c
        s = sload(V, q)
        a0 = vfma_s(a0, s, u)
        b0 = vfma_s(b0, s, v)
        s = sload(V, q + C)
        a1 = vfma_s(a1, s, u)
        b1 = vfma_s(b1, s, v)
        s = sload(V, q + 2 * C)
        a2 = vfma_s(a2, s, u)
        b2 = vfma_s(b2, s, v)
        s = sload(V, q + 3 * C)
        a3 = vfma_s(a3, s, u)
        b3 = vfma_s(b3, s, v)
        s = sload(V, q + 4 * C)
        a4 = vfma_s(a4, s, u)
        b4 = vfma_s(b4, s, v)
        s = sload(V, q + 5 * C)
        a5 = vfma_s(a5, s, u)
        b5 = vfma_s(b5, s, v)
        s = sload(V, q + 6 * C)
        a6 = vfma_s(a6, s, u)
        b6 = vfma_s(b6, s, v)
        s = sload(V, q + 7 * C)
        a7 = vfma_s(a7, s, u)
        b7 = vfma_s(b7, s, v)
    o = mb + fb
    vstore(M, o, a0)
    vstore(M, o + Fp, a1)
    vstore(M, o + 2 * Fp, a2)
    vstore(M, o + 3 * Fp, a3)
    vstore(M, o + 4 * Fp, a4)
    vstore(M, o + 5 * Fp, a5)
    vstore(M, o + 6 * Fp, a6)
    vstore(M, o + 7 * Fp, a7)
    o += 16
    vstore(M, o, b0)
    vstore(M, o + Fp, b1)
    vstore(M, o + 2 * Fp, b2)
    vstore(M, o + 3 * Fp, b3)
    vstore(M, o + 4 * Fp, b4)
    vstore(M, o + 5 * Fp, b5)
    vstore(M, o + 6 * Fp, b6)
    vstore(M, o + 7 * Fp, b7)


@njit(**_OPTS)
def _stage(x, buf, n, H, W, C, Wp):
    """The interior of buf (H + 2, Wp, C) = image n of x (N, H, W, C), C a multiple of 16."""
    rowlen = W * C
    for r in range(H):
        s = (n * H + r) * rowlen
        o = ((r + 1) * Wp + 1) * C
        for k in range(0, rowlen, 16):
            vstore(buf, o + k, vload(x, s + k))


@njit(**_OPTS)
def forward(x, U, bias, y, buf, V, M, N, H, W, C, Fp):
    """y (N, H, W, Fp) = 3x3 correlation of x (N, H, W, C) zero-padded by 1, plus bias, from the
    transformed weight U (16, C, Fp); H and W even, C a multiple of 16. Scratch: buf
    ((H + 2) * (W + 2) * C values), V (16 * 8 * C), M (16 * 8 * Fp)."""
    Wp = W + 2
    rowp = Wp * C
    buf[:] = 0.0
    TW = W // 2
    T = (H // 2) * TW
    wide = Fp % 32 == 0
    image = H * W * C
    lines = image // 16                 # cache lines of 16 values in one image
    blocks = (T + 7) // 8
    per_block = (lines + blocks - 1) // blocks
    for n in range(N):
        _stage(x, buf, n, H, W, C, Wp)
        nxt = min(n + 1, N - 1) * image
        for t0 in range(0, T, 8):
            # the next image's lines, spread over this image's blocks, arrive while it computes
            first = (t0 // 8) * per_block
            for k in range(first, min(first + per_block, lines)):
                prefetch(x, nxt + k * 16)
            nb = min(8, T - t0)
            for b in range(8):
                t = t0 + b if b < nb else t0
                th = t // TW
                tw = t - th * TW
                src = 2 * th * rowp + 2 * tw * C
                for cv in range(0, C, 16):
                    _wino_in(buf, src + cv, rowp, C, V, b * C + cv, 8 * C)
            for xi in range(16):
                if wide:
                    for fb in range(0, Fp, 32):
                        _gemm_2x8(V, U, M, xi * 8 * C, xi * C * Fp, xi * 8 * Fp, C, Fp, fb)
                else:
                    for fb in range(0, Fp, 16):
                        _gemm_1x8(V, U, M, xi * 8 * C, xi * C * Fp, xi * 8 * Fp, C, Fp, fb)
            for b in range(nb):
                t = t0 + b
                th = t // TW
                tw = t - th * TW
                dst = ((n * H + 2 * th) * W + 2 * tw) * Fp
                for fv in range(0, Fp, 16):
                    _wino_out(M, b * Fp + fv, 8 * Fp, vload(bias, fv), y, dst + fv, W * Fp, Fp)
