"""Region-of-interest pooling: ROIPooling (max over rounded bins) and contrib ROIAlign (average of
bilinear samples), with MXNet's bin arithmetic, and gradients to the feature map only.

ROIPooling gathers each bin's window from an NHWC view (padded to the largest window, in chunks
of ROIs to bound memory) and, for the gradient, finds the first maximum in row-major order, as
MXNet's argmax. ROIAlign's sampling weights are separable (see roi_pool_base)."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from .roi_pool_base import SeparableROIPool

_CHUNK_ELEMENTS = 1 << 22
_FLT_MAX = float(np.finfo(np.float32).max)


def _f32(value):
    """A parameter as MXNet holds it (a C float), widened again."""
    return float(np.float32(value))


def _round_half_away(xp, x):
    return xp.sign(x) * xp.floor(xp.abs(x) + 0.5)


def roi_input_check(op, data, rois, width=5, layout='[batch, x1, y1, x2, y2]'):
    """MXNet's checks of an ROI operator's inputs at inference: data 4-D and rois
    (num_rois, ``width``), both of known rank (an unknown shape fails, as in MXNet)."""
    if data is None or len(data) != 4:
        raise MXNetError('%s: data must be 4-D (batch, channel, y, x), got %s'
                         % (op, 'an unknown shape' if data is None else tuple(data)))
    if rois is None or len(rois) != 2 or rois[1] != width:
        raise MXNetError('%s: rois must be (num_rois, %d) %s, got %s'
                         % (op, width, layout, 'an unknown shape' if rois is None
                            else tuple(rois)))


def _roi_shapes(op, in_shapes, pooled, channels=None):
    data, rois = in_shapes
    roi_input_check(op, data, rois)
    return (rois[0], data[1] if channels is None else channels, pooled[0], pooled[1])


@register
class ROIPooling(Operator):
    """Max pooling of each ROI (scaled by ``spatial_scale``, corners rounded) into
    ``pooled_size`` bins; empty bins and ROIs of an invalid batch index give 0."""
    op_name = 'ROIPooling'
    arguments = ('data', 'rois')
    params = {'pooled_size': Param('shape'), 'spatial_scale': Param('float')}
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        out = _roi_shapes(self.op_name, in_shapes, self.p.pooled_size)
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def _bins(self, xp, rois, height, width):
        """Start/end rows (R, PH) and columns (R, PW), and the batch index of each ROI."""
        ph, pw = self.p.pooled_size
        corners = _round_half_away(xp, rois[:, 1:5] * rois.dtype.type(_f32(self.p.spatial_scale)))
        x0, y0, x1, y1 = (corners[:, i].astype(np.int64) for i in range(4))
        rh = xp.maximum(y1 - y0 + 1, 1).astype(rois.dtype)
        rw = xp.maximum(x1 - x0 + 1, 1).astype(rois.dtype)

        def edges(start, size, count, limit):
            k = xp.arange(count, dtype=rois.dtype)
            step = (size / count)[:, None]
            lo = xp.floor(k * step).astype(np.int64) + start[:, None]
            hi = xp.ceil((k + 1) * step).astype(np.int64) + start[:, None]
            return xp.clip(lo, 0, limit), xp.clip(hi, 0, limit)
        return edges(y0, rh, ph, height), edges(x0, rw, pw, width), rois[:, 0].astype(np.int64)

    def _pool(self, xp, data, rois, with_index):
        """Pooled (R, C, PH, PW) values and, when asked, the flat index of each maximum."""
        n, c, h, w = data.shape
        (hs, he), (ws, we), batch = self._bins(xp, rois, h, w)
        valid_roi = (batch >= 0) & (batch < n)
        kh = max(int((he - hs).max()) if hs.size else 1, 1)
        kw = max(int((we - ws).max()) if ws.size else 1, 1)
        step = max(1, _CHUNK_ELEMENTS // max(c * hs.shape[1] * ws.shape[1] * kh * kw, 1))
        pixels = data.transpose(0, 2, 3, 1).reshape(-1, c)                 # (N*H*W, C)
        outs, args = [], []
        for lo in range(0, rois.shape[0], step):
            part = slice(lo, lo + step)
            windows = _bin_windows(xp, (h, w), (hs[part], he[part]), (ws[part], we[part]),
                                   xp.where(valid_roi[part], batch[part], 0), kh, kw)
            o, a = _max_pool(xp, pixels, windows, valid_roi[part], with_index)
            outs.append(o)
            args.append(a)
        if not outs:
            empty = xp.zeros((0, c) + tuple(self.p.pooled_size), data.dtype)
            return empty, xp.zeros(empty.shape, np.int64)
        return xp.concatenate(outs), (xp.concatenate(args) if with_index else None)

    def forward(self, octx, inputs, aux):
        return [self._pool(octx.xp, inputs[0], inputs[1], False)[0]]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        data, rois = inputs
        index = self._pool(xp, data, rois, True)[1].reshape(-1)
        keep = index >= 0
        grad = xp.bincount(index[keep], weights=out_grads[0].reshape(-1)[keep],
                           minlength=data.size)
        return [grad.reshape(data.shape).astype(data.dtype), xp.zeros_like(rois)]


def _bin_windows(xp, size, row_bins, col_bins, batch, kh, kw):
    """Pixel positions (R, PH, PW, kh*kw) of every bin's window (padded by repeating the bin's
    last row/column, which leaves maxima and their first occurrence unchanged) and whether each
    bin is empty."""
    h, w = size
    (hs, he), (ws, we) = row_bins, col_bins
    rows = xp.minimum(hs[:, :, None] + xp.arange(kh), xp.maximum(he - 1, hs)[:, :, None])
    cols = xp.minimum(ws[:, :, None] + xp.arange(kw), xp.maximum(we - 1, ws)[:, :, None])
    rows, cols = xp.minimum(rows, h - 1), xp.minimum(cols, w - 1)
    r, ph, pw = rows.shape[0], rows.shape[1], cols.shape[1]
    pos = (rows[:, :, None, :, None] * w + cols[:, None, :, None, :]).reshape(r, ph, pw, -1)
    empty = (he <= hs)[:, :, None] | (we <= ws)[:, None, :]
    return batch[:, None, None, None] * (h * w) + pos, empty, h * w


def _max_pool(xp, pixels, windows, valid_roi, with_index):
    """Window maxima of the NHWC ``pixels`` (R, C, PH, PW), MXNet's -FLT_MAX floor, and the
    flat NCHW index of the first maximum (-1 where there is none) when ``with_index``."""
    pos, empty, plane = windows
    c = pixels.shape[1]
    vals = pixels[pos]                                                  # (R, PH, PW, K, C)
    top = vals.max(axis=3)                                              # (R, PH, PW, C)
    bad = (empty[..., None] | ~valid_roi[:, None, None, None])
    found = (top > -_FLT_MAX) & ~bad
    out = xp.where(bad, 0, xp.where(found, top, -_FLT_MAX)).astype(pixels.dtype)
    index = None
    if with_index:
        best = xp.argmax(vals, axis=3)
        where = xp.take_along_axis(pos[..., None], best[:, :, :, None], axis=3)[:, :, :, 0]
        image, pix = where // plane, where % plane
        index = xp.where(found, (image * c + xp.arange(c)) * plane + pix, -1)
        index = index.transpose(0, 3, 1, 2)
    return out.transpose(0, 3, 1, 2), index


def _axis_weights(xp, start, bin_size, count, grid, limit, dtype):
    """(R, count, limit) weights of ROIAlign's samples along one axis: for every bin, the sum over
    its ``grid`` samples of the two linear-interpolation weights (MXNet's edge rules)."""
    r = start.shape[0]
    most = int(grid.max()) if r else 1
    k = xp.arange(count, dtype=dtype)[None, :, None]
    i = xp.arange(most, dtype=dtype)[None, None, :]
    g = grid.astype(dtype)[:, None, None]
    pos = start[:, None, None] + k * bin_size[:, None, None] + (i + 0.5) * bin_size[:, None, None] / g
    used = (i < g) & (pos >= -1.0) & (pos <= limit)
    pos = xp.maximum(pos, 0)
    low = xp.floor(pos).astype(np.int64)
    edge = low >= limit - 1
    low = xp.where(edge, limit - 1, low)
    high = xp.where(edge, limit - 1, low + 1)
    frac = xp.where(edge, 0, pos - low)
    rows = (xp.arange(r)[:, None, None] * count + xp.arange(count)[None, :, None]) * limit
    rows = xp.broadcast_to(rows, pos.shape)
    target = xp.concatenate([(rows + low)[used], (rows + high)[used]])
    weight = xp.concatenate([(1 - frac)[used], frac[used]])
    return xp.bincount(target, weights=weight, minlength=r * count * limit).reshape(
        r, count, limit).astype(dtype)


@register
class ROIAlign(SeparableROIPool):
    """contrib.ROIAlign: the average of ``sample_ratio`` x ``sample_ratio`` (adaptive when <= 0)
    bilinear samples per bin; ``aligned`` shifts by half a pixel; ``position_sensitive`` reads
    one channel group per bin."""
    op_name = '_contrib_ROIAlign'
    params = {'pooled_size': Param('shape'), 'spatial_scale': Param('float'),
              'sample_ratio': Param('int', -1), 'position_sensitive': Param('bool', False),
              'aligned': Param('bool', False)}

    def _channels(self, c):
        if not self.p.position_sensitive:
            return c
        bins = self.p.pooled_size[0] * self.p.pooled_size[1]
        if c % bins:
            raise MXNetError('ROIAlign: with position_sensitive the channels (%d) must be a '
                             'multiple of the number of bins (%d)' % (c, bins))
        return c // bins

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        roi_input_check(self.op_name, data, in_shapes[1])
        chans = self._channels(data[1])
        out = _roi_shapes(self.op_name, in_shapes, self.p.pooled_size, chans)
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def _weights(self, xp, data, rois):
        """Row weights (R, PH, H), column weights (R, PW, W), 1/count and batch indices."""
        dtype = data.dtype
        h, w = data.shape[2:]
        ph, pw = self.p.pooled_size
        if rois.shape[1] == 5:
            batch, box = rois[:, 0].astype(np.int64), rois[:, 1:5]
        else:
            batch, box = xp.zeros(rois.shape[0], np.int64), rois
        offset = 0.5 if self.p.aligned else 0.0
        box = box.astype(dtype) * dtype.type(_f32(self.p.spatial_scale)) - dtype.type(offset)
        rw, rh = box[:, 2] - box[:, 0], box[:, 3] - box[:, 1]
        if not self.p.aligned:
            rw, rh = xp.maximum(rw, 1), xp.maximum(rh, 1)
        ratio = self.p.sample_ratio
        gh = xp.full(rh.shape, ratio) if ratio > 0 else xp.ceil(rh / ph).astype(np.int64)
        gw = xp.full(rw.shape, ratio) if ratio > 0 else xp.ceil(rw / pw).astype(np.int64)
        gh, gw = xp.maximum(gh, 1), xp.maximum(gw, 1)
        wy = _axis_weights(xp, box[:, 1], rh / ph, ph, gh, h, dtype)
        wx = _axis_weights(xp, box[:, 0], rw / pw, pw, gw, w, dtype)
        return wy, wx, (1.0 / (gh * gw)).astype(dtype)[:, None, None], batch

    def _select(self, xp, full):
        """(R, PH, C_in, PW) pooled values -> (R, C_out, PH, PW)."""
        r, ph, cin, pw = full.shape
        if not self.p.position_sensitive:
            return full.transpose(0, 2, 1, 3)
        grouped = full.reshape(r, ph, cin // (ph * pw), ph, pw, pw)
        i, j = xp.arange(ph)[:, None], xp.arange(pw)[None, :]
        return grouped[:, i, :, i, j, j].transpose(2, 3, 0, 1)

    def _spread(self, xp, dy):
        """Position-sensitive heads (R, C_out, PH, PW) -> per input channel (R, C_in, PH, PW)."""
        if not self.p.position_sensitive:
            return dy
        r, cout, ph, pw = dy.shape
        full = xp.zeros((r, cout, ph, pw, ph, pw), dtype=dy.dtype)
        i, j = xp.arange(ph)[:, None], xp.arange(pw)[None, :]
        full[:, :, i, j, i, j] = dy
        return full.reshape(r, cout * ph * pw, ph, pw)
