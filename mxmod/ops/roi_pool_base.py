"""Region pooling with separable bin weights (contrib.ROIAlign, contrib.PSROIPooling): every ROI
is a matrix of row weights (bins x rows) and one of column weights (bins x columns), so its
pooling is ``A_y @ image @ A_x^T``. Each ROI's window (the rows and columns its weights touch) is
gathered from an NHWC view of the feature map and pooled with two batched products; the
gradient is the transposed product, scattered back with one bincount."""
from .base import Operator

_CHUNK_ELEMENTS = 1 << 22


def _local(xp, weights):
    """The (R, P, K) slice of (R, P, L) weights over each row's smallest window of non-zero
    columns, and the window's column indices (R, K) (clamped; their weights are zero)."""
    r, _, limit = weights.shape
    used = (weights != 0).any(axis=1)                                      # (R, L)
    first = xp.where(used.any(axis=1), xp.argmax(used, axis=1), 0)
    last = limit - 1 - xp.argmax(used[:, ::-1], axis=1)
    span = int((last - first).max()) + 1 if r else 1
    cols = first[:, None] + xp.arange(max(span, 1))[None, :]
    inside = cols < limit
    cols = xp.minimum(cols, limit - 1)
    local = xp.take_along_axis(weights, xp.broadcast_to(cols[:, None, :], (r, weights.shape[1],
                                                                            cols.shape[1])), 2)
    return local * inside[:, None, :], cols


def _pool_windows(xp, wy, window, wx):
    """(R, PH, C, PW) = wy (R, PH, Kh) . window (R, Kh, Kw, C) . wx (R, PW, Kw)^T."""
    r, kh, kw, c = window.shape
    cols = xp.matmul(wx[:, None], window)                          # (R, Kh, PW, C)
    out = xp.matmul(wy, cols.reshape(r, kh, -1))                   # (R, PH, PW*C)
    return out.reshape(r, wy.shape[1], wx.shape[1], c).transpose(0, 1, 3, 2)


def _unpool_windows(xp, wy, dy, wx):
    """The adjoint of :func:`_pool_windows`: (R, Kh, Kw, C) from dy (R, C, PH, PW)."""
    r, c, ph, pw = dy.shape
    heads = dy.transpose(0, 2, 3, 1).reshape(r, ph, pw * c)
    rows = xp.matmul(wy.transpose(0, 2, 1), heads).reshape(r, -1, pw, c)    # (R, Kh, PW, C)
    return xp.matmul(wx.transpose(0, 2, 1)[:, None], rows)                   # (R, Kh, Kw, C)


class SeparableROIPool(Operator):
    """Base of ROI pooling operators given as separable weights. Subclasses implement
    ``_weights(xp, data, rois)`` -> (row weights (R, PH, H), column weights (R, PW, W),
    output scale broadcastable to (R, PH, PW), batch index (R,)), ``_select`` (pooled
    (R, PH, C_in, PW) -> output (R, C_out, PH, PW)) and ``_spread`` (its adjoint)."""
    arguments = ('data', 'rois')
    backward_uses = ('inputs',)

    def _windows(self, xp, data, rois):
        """Per ROI: the local row/column weights (R, PH, Kh), (R, PW, Kw) over the smallest
        window holding its samples, the window's rows (R, Kh) and columns (R, Kw), the batch
        index and the output scale (zero for ROIs of an invalid batch index)."""
        wy, wx, scale, batch = self._weights(xp, data, rois)
        ok = (batch >= 0) & (batch < data.shape[0])
        local_y, rows = _local(xp, wy)
        local_x, cols = _local(xp, wx)
        scale = xp.broadcast_to(scale, (rois.shape[0], wy.shape[1], wx.shape[1]))
        return (local_y, local_x, rows, cols, xp.where(ok, batch, 0),
                xp.where(ok[:, None, None], scale, 0).astype(data.dtype))

    @staticmethod
    def _positions(data, rows, cols, batch):
        """Flat (batch, row, column) positions (R, Kh, Kw) of the ROI windows in an NHWC copy."""
        h, w = data.shape[2:]
        return (batch[:, None, None] * h + rows[:, :, None]) * w + cols[:, None, :]

    @staticmethod
    def _chunks(data, windows):
        rows, cols = windows[2], windows[3]
        per_roi = data.shape[1] * rows.shape[1] * cols.shape[1] * 2
        step = max(1, _CHUNK_ELEMENTS // max(per_roi, 1))
        return [slice(lo, lo + step) for lo in range(0, rows.shape[0], step)]

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        data, rois = inputs
        windows = self._windows(xp, data, rois)
        wy, wx, rows, cols, batch, scale = windows
        pixels = data.transpose(0, 2, 3, 1).reshape(-1, data.shape[1])      # (N*H*W, C)
        outs = []
        for part in self._chunks(data, windows):
            window = pixels[self._positions(data, rows[part], cols[part], batch[part])]
            pooled = _pool_windows(xp, wy[part], window, wx[part])
            outs.append(self._select(xp, pooled) * scale[part][:, None])
        if not outs:
            return [xp.zeros((0, self._channels(data.shape[1])) + tuple(wy.shape[1:2]) +
                             tuple(wx.shape[1:2]), data.dtype)]
        return [xp.concatenate(outs)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        data, rois = inputs
        n, c, h, w = data.shape
        windows = self._windows(xp, data, rois)
        wy, wx, rows, cols, batch, scale = windows
        targets, weights = [], []
        for part in self._chunks(data, windows):
            dy = self._spread(xp, out_grads[0][part] * scale[part][:, None])
            dwin = _unpool_windows(xp, wy[part], dy, wx[part])                # (R, Kh, Kw, C)
            pos = self._positions(data, rows[part], cols[part], batch[part])
            targets.append((pos[..., None] * c + xp.arange(c)).reshape(-1))
            weights.append(dwin.reshape(-1))
        grad = xp.zeros(data.size, dtype=data.dtype)
        if targets:
            grad = xp.bincount(xp.concatenate(targets), weights=xp.concatenate(weights),
                               minlength=data.size).astype(data.dtype)
        return [grad.reshape(n, h, w, c).transpose(0, 3, 1, 2).copy(), xp.zeros_like(rois)]
