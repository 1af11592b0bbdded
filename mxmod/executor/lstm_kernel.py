"""The computation of one unrolled LSTMCell layer as a whole (see fuse_lstm.py, which finds the
layers in a bound graph and puts one ``FusedLSTM`` step in place of each).

Forward: the input-to-hidden product of every time step is ONE matrix product ((T*B, I) by
(I, 4H)) made before the time loop; each step then adds its hidden-to-hidden product (B, H) by
(H, 4H) and does the gate arithmetic in place in preallocated arrays. Backward: the gate
derivatives of all steps are formed at once, the time loop only carries dh and dc back (one
(B, 4H) by (4H, H) product per step), and the gradients of the inputs, of both weights and of both
biases are each ONE product or sum over all steps.

The arithmetic is the unrolled graph's: sigmoid is 1 / (1 + exp(-x)) (the sigmoid gates' weight
rows and biases enter the products negated, which is exact), c' = f * c + i * g,
h' = o * tanh(c'); the results agree with the step-by-step graph to float rounding (the large
products sum in another order)."""
import numpy as np

from ..ops import blas
from ..ops.accum import acc_sum
from ..ops.base import Operator

_CHUNK = 6400 * 4  # elements per (chunk, B, H) factor array in backward (about 100 KB)


class FusedLSTM(Operator):
    """``steps`` cells of one LSTM layer sharing their weights.

    Arguments: ``data0 .. data<T-1>`` (B, I), ``begin_h``, ``begin_c`` (B, H), ``i2h_weight``
    (4H, I), ``i2h_bias``, ``h2h_weight`` (4H, H), ``h2h_bias`` (4H,), the gates along 4H in the
    order input, forget, transform, output as LSTMCell has them. Outputs: the states ``outs``
    names, each ``('h', t)`` or ``('c', t)`` (the hidden or cell state after step t)."""
    op_name = '_fused_lstm'
    backward_uses = ('inputs',)

    def __init__(self, name, steps, hidden, outs, begin_h_zero):  # pylint: disable=super-init-not-called
        self.attrs = {}
        self.p = None
        self.name = name
        self.steps = steps
        self.hidden = hidden
        self.outs = list(outs)
        self.begin_h_zero = begin_h_zero

    def describe(self):
        return 'LSTMCell layer %s (%d steps, fused)' % (self.name, self.steps)

    def list_arguments(self):
        return ['data%d' % t for t in range(self.steps)] + [
            'begin_h', 'begin_c', 'i2h_weight', 'i2h_bias', 'h2h_weight', 'h2h_bias']

    def list_outputs(self):
        return ['%s%d' % (kind, t) for kind, t in self.outs]

    # ---- forward ------------------------------------------------------------------------
    def forward(self, octx, inputs, aux):
        T, H = self.steps, self.hidden
        xs = inputs[:T]
        h0, c0, wi, bi, wh, bh = inputs[T:T + 6]
        B, I = xs[0].shape
        dtype = xs[0].dtype
        X = _time_major(xs)
        # gate columns in the order i, f, o, g inside, the three sigmoids' columns negated (exact)
        # so that the products give -x and sigmoid is 1 / (1 + exp(-x)) without a negation pass
        wiT = _permuted_t(wi, H, dtype)
        whT = _permuted_t(wh, H, dtype)
        bias = _permuted(bi + bh, H)
        bias[:3 * H] *= -1
        A = np.empty((T, B, 4 * H), dtype)
        blas.matmul(X.reshape(T * B, I), wiT, out=A.reshape(T * B, 4 * H))
        Hs = np.empty((T + 1, B, H), dtype)
        C = np.empty((T + 1, B, H), dtype)
        TC = np.empty((T, B, H), dtype)
        Hs[0] = h0
        C[0] = c0
        Z = np.empty((B, 4 * H), dtype)
        kern = _kernels(dtype)
        octx.saved['lstm'] = (X, A, Hs, C, TC)
        if kern is not None:
            bias32 = np.ascontiguousarray(bias, dtype)
            row = np.empty(4 * H, dtype)
            for t in range(T):
                add_z = bool(t or not self.begin_h_zero)
                if add_z:
                    blas.matmul(Hs[t], whT, out=Z)
                kern.forward_step(A[t], Z, add_z, bias32, C[t], C[t + 1], TC[t], Hs[t + 1], row)
            return [Hs[t + 1] if kind == 'h' else C[t + 1] for kind, t in self.outs]
        A += bias
        Y = np.empty((B, H), dtype)
        H2, H3 = 2 * H, 3 * H
        for t in range(T):
            a = A[t]
            if t or not self.begin_h_zero:
                blas.matmul(Hs[t], whT, out=Z)
                np.add(a, Z, out=a)
            s = a[:, :H3]
            np.exp(s, out=s)
            np.add(s, 1, out=s)
            np.reciprocal(s, out=s)
            g = a[:, H3:]
            np.tanh(g, out=g)
            c = C[t + 1]
            np.multiply(a[:, H:H2], C[t], out=c)
            np.multiply(a[:, :H], g, out=Y)
            np.add(c, Y, out=c)
            tc = TC[t]
            np.tanh(c, out=tc)
            np.multiply(a[:, H2:H3], tc, out=Hs[t + 1])
        return [Hs[t + 1] if kind == 'h' else C[t + 1] for kind, t in self.outs]

    # ---- backward -----------------------------------------------------------------------
    def backward(self, octx, out_grads, inputs, outputs, aux):
        T, H = self.steps, self.hidden
        X, A, Hs, C, TC = octx.saved['lstm']
        need = octx.need_grad or [True] * (T + 6)
        wi, wh = inputs[T + 2], inputs[T + 4]
        B = A.shape[1]
        dtype = A.dtype
        ext_h, ext_c = [None] * T, [None] * T
        for (kind, t), g in zip(self.outs, out_grads):
            if g is not None:
                (ext_h if kind == 'h' else ext_c)[t] = g
        kern = _kernels(dtype)
        if kern is not None:
            return self._backward_jit(kern, octx, need, ext_h, ext_c, wi, wh)
        chunk = max(1, min(T, _CHUNK // (B * H)))
        factors = _Factors(A, C, TC, H, chunk)
        dG = np.empty((T, B, 4, H), dtype)        # gate gradients, LSTMCell's order i, f, g, o
        f_all = A[:, :, H:2 * H]
        dh, dc = np.empty((B, H), dtype), np.empty((B, H), dtype)
        dh_rec, dc_next = None, None
        rec_buf, dcn_buf = np.empty((B, H), dtype), np.empty((B, H), dtype)
        want_h0, want_c0 = need[T], need[T + 1]
        for t in range(T - 1, -1, -1):
            e = ext_h[t]
            if dh_rec is None:
                dh_t = e if e is not None else _zeros(dh)
            elif e is None:
                dh_t = dh_rec
            else:
                dh_t = np.add(e, dh_rec, out=dh)
            dg = dG[t]
            R, Q, P = factors.at(t)
            np.multiply(dh_t, P, out=dg[:, 3])
            np.multiply(dh_t, Q, out=dc)
            if dc_next is not None:
                dc += dc_next
            if ext_c[t] is not None:
                dc += ext_c[t]
            np.multiply(dc[:, None, :], R, out=dg[:, :3])
            if t or want_c0:
                dc_next = np.multiply(dc, f_all[t], out=dcn_buf)
            if t or want_h0:
                dh_rec = blas.matmul(dg.reshape(B, 4 * H), wh, out=rec_buf)
        return self._weight_grads(octx, need, dG.reshape(T * B, 4 * H), X, Hs, wi,
                                  dh_rec, dc_next)

    def _backward_jit(self, kern, octx, need, ext_h, ext_c, wi, wh):
        """The backward time loop with one compiled pass per step (``lstm_kernels``), which also
        sums the bias gradient (float64) as it goes."""
        T, H = self.steps, self.hidden
        X, A, Hs, C, TC = octx.saved['lstm']
        B, dtype = A.shape[1], A.dtype
        dG = np.empty((T, B, 4, H), dtype)
        db = np.zeros((4, H), np.float64)
        zero = np.zeros((B, H), dtype)
        rec = np.empty((B, H), dtype)
        dcn, dco = np.empty((B, H), dtype), np.empty((B, H), dtype)
        want_h0, want_c0 = need[T], need[T + 1]
        for t in range(T - 1, -1, -1):
            kern.backward_step(A[t], C[t], TC[t], _operand(ext_h[t], zero),
                               rec if t < T - 1 else zero, dcn if t < T - 1 else zero,
                               _operand(ext_c[t], zero), dG[t], dco, db)
            dcn, dco = dco, dcn
            if t or want_h0:
                blas.matmul(dG[t].reshape(B, 4 * H), wh, out=rec)
        dh0 = rec if want_h0 else None
        dc0 = dcn if want_c0 else None
        return self._weight_grads(octx, need, dG.reshape(T * B, 4 * H), X, Hs, wi, dh0, dc0,
                                  db.reshape(4 * H).astype(dtype))

    def _weight_grads(self, octx, need, G2, X, Hs, wi, dh0, dc0, db=None):
        T = self.steps
        into = octx.grad_out or [None] * (T + 6)
        grads = [None] * (T + 6)
        # the weight and bias gradients first: those written into their arrays are reported
        # (gradient overlap) and travel while the data gradient is computed
        if need[T + 2]:
            grads[T + 2] = _product_t(G2, X.reshape(G2.shape[0], -1), into[T + 2])
        if need[T + 4]:
            grads[T + 4] = _product_t(G2, Hs[:T].reshape(G2.shape[0], -1), into[T + 4])
        if need[T + 3] or need[T + 5]:
            db = acc_sum(np, G2, 0) if db is None else db
            for k in (T + 3, T + 5):
                if need[k]:
                    grads[k] = _into(db, into[k])
        if octx.grad_ready is not None:
            for k in range(T + 2, T + 6):
                if grads[k] is not None and grads[k] is into[k]:
                    octx.grad_ready(k)
        if any(need[:T]):
            dX = blas.matmul(G2, wi).reshape((T, -1, wi.shape[1]))
            for t in range(T):
                if need[t]:
                    grads[t] = dX[t]
        grads[T] = dh0 if need[T] else None
        grads[T + 1] = dc0 if need[T + 1] else None
        return grads


class _Factors(object):
    """The factors that turn dc (R: for i, f, g) and dh (Q: into dc, P: for o) into the gate
    gradients: R = [g * i(1-i), c_prev * f(1-f), i * (1-g^2)], Q = o * (1 - tanh(c)^2),
    P = tanh(c) * o(1-o). They are formed for ``chunk`` steps at a time as the backward loop
    reaches them, in arrays small enough to stay in cache (over all steps at once the fifteen
    passes ran at memory speed)."""

    def __init__(self, A, C, TC, H, chunk):
        self.A, self.C, self.TC, self.H, self.chunk = A, C, TC, H, chunk
        B, dtype = A.shape[1], A.dtype
        self.R = np.empty((chunk, B, 3, H), dtype)
        self.Q = np.empty((chunk, B, H), dtype)
        self.P = np.empty((chunk, B, H), dtype)
        self.tmp = np.empty((chunk, B, H), dtype)
        self.start = None

    def at(self, t):
        """(R, Q, P) of step t; steps are asked for in descending order."""
        if self.start is None or t < self.start:
            self.start = max(0, t + 1 - self.chunk)
            self._fill(self.start, t + 1)
        k = t - self.start
        return self.R[k], self.Q[k], self.P[k]

    def _fill(self, t0, t1):
        H, n = self.H, t1 - t0
        A = self.A[t0:t1]
        i, f, o, g = (A[:, :, k * H:(k + 1) * H] for k in range(4))
        R, Q, P, tmp = self.R[:n], self.Q[:n], self.P[:n], self.tmp[:n]
        np.subtract(1, i, out=tmp)
        tmp *= i
        np.multiply(tmp, g, out=R[:, :, 0])
        np.subtract(1, f, out=tmp)
        tmp *= f
        np.multiply(tmp, self.C[t0:t1], out=R[:, :, 1])
        np.multiply(g, g, out=tmp)
        np.subtract(1, tmp, out=tmp)
        np.multiply(tmp, i, out=R[:, :, 2])
        tc = self.TC[t0:t1]
        np.multiply(tc, tc, out=Q)
        np.subtract(1, Q, out=Q)
        Q *= o
        np.subtract(1, o, out=P)
        P *= o
        P *= tc


def _kernels(dtype):
    """The compiled kernels (``ops.lstm_kernels``) for float32 when numba is in use, else None."""
    if dtype != np.float32:
        return None
    from ..ops import jit  # pylint: disable=import-outside-toplevel
    if not jit.enabled():
        return None
    from ..ops import lstm_kernels  # pylint: disable=import-outside-toplevel
    return lstm_kernels


def _operand(g, dummy):
    """An output gradient as a C-ordered float32 (B, H) array for the kernels (``dummy`` when
    absent)."""
    if g is None:
        return dummy
    if g.dtype != dummy.dtype or not g.flags.c_contiguous:
        return np.ascontiguousarray(g, dtype=dummy.dtype)
    return g


def _zeros(buf):
    buf[...] = 0
    return buf


def _permuted(v, H):
    """Rows (or entries) of LSTMCell's gate order i, f, g, o in the order i, f, o, g."""
    out = np.empty_like(v)
    out[:2 * H] = v[:2 * H]
    out[2 * H:3 * H] = v[3 * H:]
    out[3 * H:] = v[2 * H:3 * H]
    return out


def _permuted_t(w, H, dtype):
    """C-ordered transpose of a (4H, K) weight with its gate rows permuted (i, f, o, g) and
    those of the sigmoid gates (i, f, o) negated."""
    out = np.empty((w.shape[1], 4 * H), dtype)
    np.negative(w[:2 * H].T, out=out[:, :2 * H])
    np.negative(w[3 * H:].T, out=out[:, 2 * H:3 * H])
    out[:, 3 * H:] = w[2 * H:3 * H].T
    return out


def _product_t(G2, M, out):
    """G2^T M, written into ``out`` (an argument's gradient array) when given."""
    if out is not None and out.dtype == G2.dtype and out.size == G2.shape[1] * M.shape[1]:
        blas.matmul(G2.T, M, out=out.reshape(G2.shape[1], M.shape[1]))
        return out
    return blas.matmul(G2.T, M)


def _into(value, out):
    if out is not None and out.shape == value.shape and out.dtype == value.dtype:
        out[...] = value
        return out
    return value.copy()


def _time_major(xs):
    """The inputs of all steps as one C-ordered (T, B, I) array: a view when they already are
    consecutive blocks of one array (the previous fused layer's hidden states), one copy when they
    are equally spaced slices of one array (an embedding split along time), else stacked."""
    x0 = xs[0]
    base = x0.base
    if base is not None and all(x.base is base for x in xs):
        p0 = x0.__array_interface__['data'][0]
        step = xs[1].__array_interface__['data'][0] - p0 if len(xs) > 1 else x0.nbytes
        if step > 0 and all(x.shape == x0.shape and x.strides == x0.strides and
                            x.__array_interface__['data'][0] == p0 + t * step
                            for t, x in enumerate(xs)):
            view = np.lib.stride_tricks.as_strided(x0, (len(xs),) + x0.shape,
                                                   (step,) + x0.strides, writeable=False)
            return view if view.flags.c_contiguous else np.ascontiguousarray(view)
    return np.stack(xs)
