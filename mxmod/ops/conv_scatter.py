"""numba kernel of the data gradient of a strided 2-D float32 convolution on channels-last memory
(imported only when numba is present; conv_jit calls it where the correlation with the flipped
kernel does not fit): every dy pixel's window, dy times the weight at each tap, is added into a
zero-padded buffer of the input's shape, blocks of 8 neighbouring dy pixels at a time with the
sums over the filters in vector registers."""
from numba import njit

from .simd import vzero, vload, vstore, sload, vfma_s, vadd

__all__ = ['data_scatter']

_OPTS = dict(cache=True, boundscheck=False, nogil=True)


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
def _scatter_2x8(dy, wt, dxp, db, F, Cp, wb, ob, pitch):
    """dxp[ob + b*pitch + cb..cb+31] += sum over f of dy[db + b*F + f] * wt[wb + f*Cp + ..31],
    b < 8 (16 accumulators: two channel vectors share each dy broadcast)."""
    a0 = vzero()
    a1, a2, a3, a4, a5, a6, a7 = a0, a0, a0, a0, a0, a0, a0
    b0, b1, b2, b3, b4, b5, b6, b7 = a0, a0, a0, a0, a0, a0, a0, a0
    for f in range(F):
        wv = vload(wt, wb + f * Cp)
        wu = vload(wt, wb + f * Cp + 16)
        s = sload(dy, db + f)
        a0 = vfma_s(a0, s, wv)
        b0 = vfma_s(b0, s, wu)
        s = sload(dy, db + f + F)
        a1 = vfma_s(a1, s, wv)
        b1 = vfma_s(b1, s, wu)
        s = sload(dy, db + f + 2 * F)
        a2 = vfma_s(a2, s, wv)
        b2 = vfma_s(b2, s, wu)
        s = sload(dy, db + f + 3 * F)
        a3 = vfma_s(a3, s, wv)
        b3 = vfma_s(b3, s, wu)
        s = sload(dy, db + f + 4 * F)
        a4 = vfma_s(a4, s, wv)
        b4 = vfma_s(b4, s, wu)
        s = sload(dy, db + f + 5 * F)
        a5 = vfma_s(a5, s, wv)
        b5 = vfma_s(b5, s, wu)
        s = sload(dy, db + f + 6 * F)
        a6 = vfma_s(a6, s, wv)
        b6 = vfma_s(b6, s, wu)
        s = sload(dy, db + f + 7 * F)
        a7 = vfma_s(a7, s, wv)
        b7 = vfma_s(b7, s, wu)
    _add8(dxp, ob, pitch, a0, a1, a2, a3, a4, a5, a6, a7)
    _add8(dxp, ob + 16, pitch, b0, b1, b2, b3, b4, b5, b6, b7)


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
                        cb = 0
                        while cb + 32 <= Cp:
                            _scatter_2x8(dy, wt, dxp, db, F, Cp, (i * KW + j) * F * Cp + cb,
                                         ob + cb, SW * Cp)
                            cb += 32
                        if cb < Cp:
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
