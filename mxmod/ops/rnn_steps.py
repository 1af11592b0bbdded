"""The time-step kernels of the fused ``RNN`` operator: one step of each cell type (forward and
backward) and one direction of one layer run over the whole sequence, vectorised over the batch."""
def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


# ---- one time step of each cell type: forward (state -> state, cache) and backward ---------------
class _Vanilla(object):
    """h = act(Wx x + bx + Wh h_prev + bh)."""

    def __init__(self, relu):
        self.relu = relu

    def forward(self, xp, gx, h_prev, c_prev, w):
        pre = gx + h_prev @ w.wh.T + w.bh
        h = xp.fmax(pre, 0) if self.relu else xp.tanh(pre)    # NaN gives 0, as in MXNet
        return h, None, h

    def backward(self, xp, cache, w, dh, dc):
        h = cache
        dpre = dh * (h > 0) if self.relu else dh * (1 - h * h)
        return dpre, dpre, dpre @ w.wh, None, None


class _LSTM(object):
    """c = f*c_prev + i*g, clipped to ``clip = (low, high, fix_nan)`` when given; h = o*tanh(c);
    with a projection the state and output are r = Whr h."""

    def __init__(self, clip=None):
        self.clip = clip

    def forward(self, xp, gx, h_prev, c_prev, w):
        pre = gx + h_prev @ w.wh.T + w.bh
        size = pre.shape[1] // 4
        i = _sigmoid(xp, pre[:, :size])
        f = _sigmoid(xp, pre[:, size:2 * size])
        g = xp.tanh(pre[:, 2 * size:3 * size])
        o = _sigmoid(xp, pre[:, 3 * size:])
        c_raw = f * c_prev + i * g
        c = c_raw
        if self.clip is not None:
            c = xp.clip(c_raw, self.clip[0], self.clip[1])
            if self.clip[2]:
                c = xp.where(xp.isnan(c), xp.asarray(self.clip[0], dtype=c.dtype), c)
        tc = xp.tanh(c)
        hc = o * tc
        h = hc if w.whr is None else hc @ w.whr.T
        return h, c, (c_prev, i, f, g, o, c_raw, tc, hc)

    def backward(self, xp, cache, w, dh, dc):
        c_prev, i, f, g, o, c_raw, tc, hc = cache
        proj = None
        if w.whr is not None:
            proj = (dh, hc)
            dh = dh @ w.whr
        dcc = dc + dh * o * (1 - tc * tc)
        if self.clip is not None:   # no gradient through clipped entries
            dcc = dcc * ((c_raw >= self.clip[0]) & (c_raw <= self.clip[1]))
        dpre = xp.concatenate([dcc * g * i * (1 - i), dcc * c_prev * f * (1 - f),
                               dcc * i * (1 - g * g), dh * tc * o * (1 - o)], axis=1)
        return dpre, dpre, dpre @ w.wh, dcc * f, proj


class _GRU(object):
    """MXNet's GRU: n = tanh(Wx_n x + bx_n + r*(Wh_n h + bh_n)), h = (1-z)*n + z*h_prev."""

    def forward(self, xp, gx, h_prev, c_prev, w):
        gh = h_prev @ w.wh.T + w.bh
        size = gh.shape[1] // 3
        r = _sigmoid(xp, gx[:, :size] + gh[:, :size])
        z = _sigmoid(xp, gx[:, size:2 * size] + gh[:, size:2 * size])
        hn = gh[:, 2 * size:]
        n = xp.tanh(gx[:, 2 * size:] + r * hn)
        h = (1 - z) * n + z * h_prev
        return h, None, (h_prev, r, z, n, hn)

    def backward(self, xp, cache, w, dh, dc):
        h_prev, r, z, n, hn = cache
        dn = dh * (1 - z) * (1 - n * n)
        dz = dh * (h_prev - n) * z * (1 - z)
        dr = dn * hn * r * (1 - r)
        dgx = xp.concatenate([dr, dz, dn], axis=1)
        dgh = xp.concatenate([dr, dz, dn * r], axis=1)
        return dgx, dgh, dgh @ w.wh + dh * z, None, None


# ---- one direction of one layer over the whole sequence -----------------------------------------
def _run_direction(xp, cell, w, x, h0, c0, reverse, valid):
    """Run ``cell`` over ``x`` (T, N, I); return outputs (T, N, P|H), final h and c, step records.

    ``valid`` (T, N, 1 bool or None) freezes the state and zeroes the output past each length."""
    steps_t, batch = x.shape[0], x.shape[1]
    gx_all = (x.reshape(steps_t * batch, -1) @ w.wx.T + w.bx).reshape(steps_t, batch, -1)
    h, c = h0, c0
    ys, records = [None] * steps_t, [None] * steps_t
    for t in (range(steps_t - 1, -1, -1) if reverse else range(steps_t)):
        h_new, c_new, cache = cell.forward(xp, gx_all[t], h, c, w)
        records[t] = (h, cache)
        if valid is None:
            ys[t] = h_new
        else:
            ys[t] = xp.where(valid[t], h_new, xp.zeros_like(h_new))
            h_new = xp.where(valid[t], h_new, h)
            if c_new is not None:
                c_new = xp.where(valid[t], c_new, c)
        h, c = h_new, c_new
    return xp.stack(ys), h, c, records


def _back_direction(xp, cell, w, gw, x, dy, dh, dc, records, reverse, valid):
    """Backward of _run_direction: fill the weight gradients ``gw``; return dx, dh0, dc0."""
    steps_t, batch = x.shape[0], x.shape[1]
    dgx_all, dgh_all, h_prev_all = [None] * steps_t, [None] * steps_t, [None] * steps_t
    proj_terms = []
    for t in (range(steps_t) if reverse else range(steps_t - 1, -1, -1)):
        h_prev, cache = records[t]
        if valid is None:
            dh_new, dc_new = dh + dy[t], dc
        else:
            keep = 1 - valid[t]
            dh_new, dh_keep = (dh + dy[t]) * valid[t], dh * keep
            dc_new = None if dc is None else dc * valid[t]
        dgx, dgh, dh, dc_prev, proj = cell.backward(xp, cache, w, dh_new, dc_new)
        if valid is not None:
            dh = dh + dh_keep
            dc_prev = None if dc is None else dc_prev + dc * keep
        dc = dc_prev
        dgx_all[t], dgh_all[t], h_prev_all[t] = dgx, dgh, h_prev
        if proj is not None:
            proj_terms.append(proj)
    dgx, dgh = xp.stack(dgx_all), xp.stack(dgh_all)
    gates = dgx.shape[2]
    flat_dgx = dgx.reshape(steps_t * batch, gates)
    gw.wx[...] = flat_dgx.T @ x.reshape(steps_t * batch, -1)
    gw.bx[...] = flat_dgx.sum(axis=0)
    gw.wh[...] = dgh.reshape(-1, gates).T @ xp.stack(h_prev_all).reshape(steps_t * batch, -1)
    gw.bh[...] = dgh.reshape(-1, gates).sum(axis=0)
    if proj_terms:
        gw.whr[...] = sum(dr.T @ hc for dr, hc in proj_terms)
    dx = (flat_dgx @ w.wx).reshape(steps_t, batch, -1)
    return dx, dh, dc
