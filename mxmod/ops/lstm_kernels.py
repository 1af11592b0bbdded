"""numba kernels of the fused LSTM's per-step gate arithmetic (imported only when numba is
present; executor/lstm_kernel.py calls them for float32 and keeps the numpy arithmetic they
replace as the reference).

One pass over a step's (B, 4H) gate block instead of ten numpy calls forward and about a dozen
backward. numba has no vectorised exp or tanh here (no SVML), so tanh is the rational
approximation x P(x^2) / Q(x^2) on [-7.9, 7.9] (degree 13 over 6, clamped outside, where float32
tanh is +-1 to within half an ulp) that Eigen and XNNPACK use, and sigmoid(x) = (1 + tanh(x/2))
/ 2: pure arithmetic, which LLVM vectorises. Both agree with numpy's float32 functions to a few
units in the last place (absolute error below 1e-7 for sigmoid).

Gate columns are in the fused order i, f, o, g with the sigmoid gates' pre-activations negated
(see lstm_kernel.py); the gate gradients are written in LSTMCell's order i, f, g, o."""
import numpy as np
from numba import njit

__all__ = ['forward_step', 'backward_step']

_OPTS = dict(cache=True, boundscheck=False, nogil=True, fastmath=True, error_model='numpy')

_CLAMP = np.float32(7.90531110763549805)
_A1 = np.float32(4.89352455891786e-03)
_A3 = np.float32(6.37261928875436e-04)
_A5 = np.float32(1.48572235717979e-05)
_A7 = np.float32(5.12229709037114e-08)
_A9 = np.float32(-8.60467152213735e-11)
_A11 = np.float32(2.00018790482477e-13)
_A13 = np.float32(-2.76076847742355e-16)
_B0 = np.float32(4.89352518554385e-03)
_B2 = np.float32(2.26843463243900e-03)
_B4 = np.float32(1.18534705686654e-04)
_B6 = np.float32(1.19825839466702e-06)
_HALF = np.float32(0.5)
_ONE = np.float32(1.0)


@njit(inline='always', **_OPTS)
def _tanh(x):
    x = x if x < _CLAMP else _CLAMP
    x = x if x > -_CLAMP else -_CLAMP
    x2 = x * x
    p = x2 * _A13 + _A11
    p = x2 * p + _A9
    p = x2 * p + _A7
    p = x2 * p + _A5
    p = x2 * p + _A3
    p = x2 * p + _A1
    q = x2 * _B6 + _B4
    q = x2 * q + _B2
    q = x2 * q + _B0
    return x * p / q


@njit(**_OPTS)
def tanh(x, out):
    """out = tanh(x) elementwise (flat float32 arrays; for the tests)."""
    for k in range(x.size):
        out[k] = _tanh(x[k])


@njit(**_OPTS)
def forward_step(a, z, add_z, bias, c_prev, c, tc, h, scratch):
    """One step of the gate arithmetic, in place.

    ``a`` (B, 4H): this step's input product (i, f, o negated); ``z`` (B, 4H): the hidden
    product, added when ``add_z``; ``bias`` (4H,): both biases (i, f, o negated). Writes the gate
    activations i, f, o, g back into ``a``, c = f c_prev + i g, tc = tanh(c), h = o tc.
    ``scratch`` (4H,): a work row. (Each row's gates are formed in ``scratch`` and copied back:
    written straight into ``a``, the loop's reads and writes of one array made LLVM's overlap
    check fail and run the scalar loop, 4x slower.)"""
    rows, h4 = a.shape
    H = h4 // 4
    bi = bias[:H]
    bf = bias[H:2 * H]
    bo = bias[2 * H:3 * H]
    bg = bias[3 * H:]
    si = scratch[:H]
    sf = scratch[H:2 * H]
    so = scratch[2 * H:3 * H]
    sg = scratch[3 * H:]
    for b in range(rows):
        ai = a[b, :H]
        af = a[b, H:2 * H]
        ao = a[b, 2 * H:3 * H]
        ag = a[b, 3 * H:]
        cp = c_prev[b]
        cr = c[b]
        tr = tc[b]
        hr = h[b]
        if add_z:
            zi = z[b, :H]
            zf = z[b, H:2 * H]
            zo = z[b, 2 * H:3 * H]
            zg = z[b, 3 * H:]
            for j in range(H):
                # the sigmoid gates' inputs are negated: sigmoid(x) = (1 - tanh(-x / 2)) / 2
                gi = _HALF - _HALF * _tanh(_HALF * (ai[j] + zi[j] + bi[j]))
                gf = _HALF - _HALF * _tanh(_HALF * (af[j] + zf[j] + bf[j]))
                go = _HALF - _HALF * _tanh(_HALF * (ao[j] + zo[j] + bo[j]))
                gg = _tanh(ag[j] + zg[j] + bg[j])
                cv = gf * cp[j] + gi * gg
                tv = _tanh(cv)
                si[j] = gi
                sf[j] = gf
                so[j] = go
                sg[j] = gg
                cr[j] = cv
                tr[j] = tv
                hr[j] = go * tv
        else:
            for j in range(H):
                gi = _HALF - _HALF * _tanh(_HALF * (ai[j] + bi[j]))
                gf = _HALF - _HALF * _tanh(_HALF * (af[j] + bf[j]))
                go = _HALF - _HALF * _tanh(_HALF * (ao[j] + bo[j]))
                gg = _tanh(ag[j] + bg[j])
                cv = gf * cp[j] + gi * gg
                tv = _tanh(cv)
                si[j] = gi
                sf[j] = gf
                so[j] = go
                sg[j] = gg
                cr[j] = cv
                tr[j] = tv
                hr[j] = go * tv
        ar = a[b]
        for k in range(h4):
            ar[k] = scratch[k]


@njit(**_OPTS)
def backward_step(a, c_prev, tc, dh_ext, dh_rec, dc_next, dc_ext, dg, dc_out, db):
    """One step of the gate derivatives.

    ``a`` (B, 4H): the step's activations i, f, o, g; ``c_prev``, ``tc`` (B, H): the previous
    cell state and tanh of this one; dh = dh_ext + dh_rec and the carried dc_next + dc_ext (an
    absent term is an array of zeros: flags and branches kept the loop from vectorising). Writes the
    pre-activation gradients into ``dg`` (B, 4, H) in LSTMCell's order i, f, g, o, dc f into
    ``dc_out`` (the next dc_next; it must not be ``dc_next``, or the loop runs unvectorised) and
    adds dg's column sums into ``db`` (4, H) float64."""
    rows, h4 = a.shape
    H = h4 // 4
    for b in range(rows):
        ai = a[b, :H]
        af = a[b, H:2 * H]
        ao = a[b, 2 * H:3 * H]
        ag = a[b, 3 * H:]
        cp = c_prev[b]
        tr = tc[b]
        he = dh_ext[b]
        hr = dh_rec[b]
        cn = dc_next[b]
        ce = dc_ext[b]
        co = dc_out[b]
        di = dg[b, 0]
        df = dg[b, 1]
        dgg = dg[b, 2]
        do = dg[b, 3]
        for j in range(H):
            gi = ai[j]
            gf = af[j]
            go = ao[j]
            gg = ag[j]
            t = tr[j]
            dh = he[j] + hr[j]
            dc = dh * go * (_ONE - t * t) + (cn[j] + ce[j])
            di[j] = dc * gg * gi * (_ONE - gi)
            df[j] = dc * cp[j] * gf * (_ONE - gf)
            dgg[j] = dc * gi * (_ONE - gg * gg)
            do[j] = dh * t * go * (_ONE - go)
            co[j] = dc * gf
    for b in range(rows):
        for k in range(4):
            d = dg[b, k]
            s = db[k]
            for j in range(H):
                s[j] += d[j]
