"""numba kernels of 2-D max pooling without padding (imported only when numba is present;
pooling.py keeps the numpy code they replace). Arrays are C-contiguous and either channels-last,
(N, H, W, C), or channels-first, (N, C, H, W); each window is read once. The gradient of a window
goes to its first maximal element in window order, or to its first NaN when it holds one (what
numpy's argmax over the window picks), added into ``dx`` (windows may overlap)."""
import numpy as np
from numba import njit

from .simd import vbcast, vhit, vload_n, vmax, vmaxnan, vmul, vsel, vstore_n, vsub, vzero

__all__ = ['max_forward_last', 'max_forward_first', 'max_backward_last', 'max_backward_first',
           'max_forward_last32', 'max_backward_disjoint32']

_OPTS = dict(cache=True, boundscheck=False, nogil=True)


@njit(**_OPTS)
def max_forward_last(x, y, KH, KW, SH, SW):
    """y (N, Ho, Wo, C) = window maxima of x (N, H, W, C) (NaN wins); branch-free over the
    channels, so that the channel loop vectorises."""
    n_img, ho_n, wo_n, chans = y.shape
    for n in range(n_img):
        for ho in range(ho_n):
            for wo in range(wo_n):
                h0, w0 = ho * SH, wo * SW
                out = y[n, ho, wo]
                first = x[n, h0, w0]
                for c in range(chans):
                    out[c] = first[c]
                for t in range(1, KH * KW):
                    row = x[n, h0 + t // KW, w0 + t % KW]
                    for c in range(chans):
                        v = row[c]
                        b = out[c]
                        out[c] = v if (v > b) | ((v != v) & (b == b)) else b


@njit(**_OPTS)
def max_forward_first(x, y, KH, KW, SH, SW):
    """y (N, C, Ho, Wo) = window maxima of x (N, C, H, W) (NaN wins)."""
    n_img, chans, ho_n, wo_n = y.shape
    for n in range(n_img):
        for c in range(chans):
            for ho in range(ho_n):
                for wo in range(wo_n):
                    h0, w0 = ho * SH, wo * SW
                    b = x[n, c, h0, w0]
                    for i in range(KH):
                        for j in range(KW):
                            v = x[n, c, h0 + i, w0 + j]
                            b = v if (v > b) | ((v != v) & (b == b)) else b
                    y[n, c, ho, wo] = b


@njit(**_OPTS)
def max_backward_last(x, dy, dx, KH, KW, SH, SW):
    """dx (N, H, W, C), zeroed by the caller, += each window's dy at its first maximum."""
    n_img, ho_n, wo_n, chans = dy.shape
    best = np.empty(chans, x.dtype)
    arg = np.empty(chans, np.int64)
    zero = x.dtype.type(0)
    for n in range(n_img):
        for ho in range(ho_n):
            for wo in range(wo_n):
                h0, w0 = ho * SH, wo * SW
                first = x[n, h0, w0]
                for c in range(chans):
                    best[c] = first[c]
                    arg[c] = 0
                for t in range(1, KH * KW):
                    row = x[n, h0 + t // KW, w0 + t % KW]
                    for c in range(chans):
                        v = row[c]
                        b = best[c]
                        take = (v > b) | ((v != v) & (b == b))
                        best[c] = v if take else b
                        arg[c] = t if take else arg[c]
                g = dy[n, ho, wo]
                for t in range(KH * KW):
                    d = dx[n, h0 + t // KW, w0 + t % KW]
                    for c in range(chans):
                        d[c] += g[c] if arg[c] == t else zero


@njit(**_OPTS)
def max_backward_first(x, dy, dx, KH, KW, SH, SW):
    """As :func:`max_backward_last` for (N, C, H, W) arrays."""
    n_img, chans, ho_n, wo_n = dy.shape
    for n in range(n_img):
        for c in range(chans):
            for ho in range(ho_n):
                for wo in range(wo_n):
                    h0, w0 = ho * SH, wo * SW
                    b = x[n, c, h0, w0]
                    arg = 0
                    for t in range(1, KH * KW):
                        v = x[n, c, h0 + t // KW, w0 + t % KW]
                        take = (v > b) | ((v != v) & (b == b))
                        b = v if take else b
                        arg = t if take else arg
                    dx[n, c, h0 + arg // KW, w0 + arg % KW] += dy[n, c, ho, wo]


# ---- float32 channels-last, 16 channels at a time --------------------------------------------
@njit(**_OPTS)
def max_forward_last32(x, y, KH, KW, SH, SW):
    """As :func:`max_forward_last` for float32, 16 channels per vector (masked at the end)."""
    n_img, ho_n, wo_n, chans = y.shape
    H, W = x.shape[1], x.shape[2]
    xf = x.reshape(-1)
    yf = y.reshape(-1)
    for n in range(n_img):
        for ho in range(ho_n):
            for wo in range(wo_n):
                base = ((n * H + ho * SH) * W + wo * SW) * chans
                out = ((n * ho_n + ho) * wo_n + wo) * chans
                for cv in range(0, chans, 16):
                    cnt = min(16, chans - cv)
                    m = vload_n(xf, base + cv, cnt)
                    for t in range(1, KH * KW):
                        off = ((t // KW) * W + t % KW) * chans
                        m = vmaxnan(m, vload_n(xf, base + off + cv, cnt))
                    vstore_n(yf, out + cv, m, cnt)


@njit(**_OPTS)
def max_backward_disjoint32(x, dy, dx, KH, KW):
    """dx (N, H, W, C) of float32 max pooling whose windows do not overlap (stride = kernel):
    written, not added (positions no window covers are zeroed), 16 channels per vector; the
    window maximum is found again and dy goes to its first occurrence (first NaN)."""
    n_img, ho_n, wo_n, chans = dy.shape
    H, W = x.shape[1], x.shape[2]
    xf = x.reshape(-1)
    df = dy.reshape(-1)
    of = dx.reshape(-1)
    one = vbcast(np.float32(1.0))
    for n in range(n_img):
        for ho in range(ho_n):
            for wo in range(wo_n):
                base = ((n * H + ho * KH) * W + wo * KW) * chans
                grad = ((n * ho_n + ho) * wo_n + wo) * chans
                for cv in range(0, chans, 16):
                    cnt = min(16, chans - cv)
                    m = vload_n(xf, base + cv, cnt)
                    for t in range(1, KH * KW):
                        off = ((t // KW) * W + t % KW) * chans
                        m = vmaxnan(m, vload_n(xf, base + off + cv, cnt))
                    g = vload_n(df, grad + cv, cnt)
                    done = vzero()
                    for t in range(KH * KW):
                        off = base + ((t // KW) * W + t % KW) * chans + cv
                        h = vhit(vload_n(xf, off, cnt), m)
                        vstore_n(of, off, vsel(vmul(h, vsub(one, done)), g), cnt)
                        done = vmax(done, h)
        for h in range(ho_n * KH, H):       # rows and columns no window reaches
            for w in range(W):
                for c in range(chans):
                    dx[n, h, w, c] = 0.0
        for h in range(ho_n * KH):
            for w in range(wo_n * KW, W):
                for c in range(chans):
                    dx[n, h, w, c] = 0.0
