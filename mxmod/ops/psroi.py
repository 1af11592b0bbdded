"""contrib.PSROIPooling (R-FCN's position-sensitive ROI pooling): bin (ph, pw) of output channel
``c`` averages input channel ``(c * G + gh) * G + gw`` over the bin, with MXNet's rounded ROI
corners (the end corner one pixel further) and floor/ceil bin edges."""
import numpy as np

from ..base import MXNetError
from .base import Param, register, merge_shape
from .roi import _f32, _round_half_away, roi_input_check
from .roi_pool_base import SeparableROIPool


def _indicator(xp, start, stop, limit, dtype):
    """(R, P, limit) weights: 1 on [start, stop) of each bin."""
    pos = xp.arange(limit)[None, None, :]
    return ((pos >= start[..., None]) & (pos < stop[..., None])).astype(dtype)


@register
class PSROIPooling(SeparableROIPool):
    """Position-sensitive ROI average pooling: data (N, output_dim * G * G, H, W) and rois
    (R, 5) -> (R, output_dim, pooled_size, pooled_size); G = group_size (0: pooled_size)."""
    op_name = '_contrib_PSROIPooling'
    params = {'spatial_scale': Param('float'), 'output_dim': Param('int'),
              'pooled_size': Param('int'), 'group_size': Param('int', 0)}

    def _group(self):
        return self.p.group_size or self.p.pooled_size

    def _channels(self, c):
        g = self._group()
        if c != self.p.output_dim * g * g:
            raise MXNetError('PSROIPooling: data must have output_dim * group_size^2 = %d '
                             'channels, got %d' % (self.p.output_dim * g * g, c))
        return self.p.output_dim

    def infer_shape(self, in_shapes, out_shapes):
        data, rois = in_shapes
        roi_input_check(self.op_name, data, rois)
        p = self.p.pooled_size
        out = (rois[0], self._channels(data[1]), p, p)
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def _weights(self, xp, data, rois):
        dtype = data.dtype
        h, w = data.shape[2:]
        p = self.p.pooled_size
        scale = dtype.type(_f32(self.p.spatial_scale))
        corners = _round_half_away(xp, rois[:, 1:5].astype(dtype))
        x0, y0 = corners[:, 0] * scale, corners[:, 1] * scale
        x1, y1 = (corners[:, 2] + 1) * scale, (corners[:, 3] + 1) * scale
        bins = xp.arange(p, dtype=dtype)

        def edges(start, end, limit):
            size = xp.maximum(end - start, dtype.type(0.1)) / p
            lo = xp.floor(bins * size[:, None] + start[:, None]).astype(np.int64)
            hi = xp.ceil((bins + 1) * size[:, None] + start[:, None]).astype(np.int64)
            return xp.clip(lo, 0, limit), xp.clip(hi, 0, limit)
        (hs, he), (ws, we) = edges(y0, y1, h), edges(x0, x1, w)
        area = ((he - hs)[:, :, None] * (we - ws)[:, None, :]).astype(dtype)
        inv = xp.where(area > 0, 1 / xp.where(area > 0, area, 1), 0)
        return (_indicator(xp, hs, he, h, dtype), _indicator(xp, ws, we, w, dtype), inv,
                rois[:, 0].astype(np.int64))

    def _channel_map(self, xp):
        """Input channel (output_dim, P, P) of every output channel and bin."""
        p, g = self.p.pooled_size, self._group()
        cell = np.clip(np.floor(np.arange(p) * g / p).astype(np.int64), 0, g - 1)
        ctop = np.arange(self.p.output_dim)[:, None, None]
        return xp.asarray((ctop * g + cell[None, :, None]) * g + cell[None, None, :])

    def _select(self, xp, full):
        p = self.p.pooled_size
        rows, cols = xp.arange(p)[None, :, None], xp.arange(p)[None, None, :]
        return full[:, rows, self._channel_map(xp), cols]

    def _spread(self, xp, dy):
        r, _, p, _ = dy.shape
        g = self._group()
        full = xp.zeros((r, self.p.output_dim * g * g, p, p), dtype=dy.dtype)
        rows, cols = xp.arange(p)[None, :, None], xp.arange(p)[None, None, :]
        full[:, self._channel_map(xp), rows, cols] = dy
        return full
