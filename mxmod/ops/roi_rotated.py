"""contrib.RROIAlign: ROIAlign over rotated boxes (rois (R, 6) = [batch, centre x, centre y,
width, height, angle in degrees]): each bin averages ``sampling_ratio`` x ``sampling_ratio``
(adaptive when <= 0) bilinear samples of the rotated grid, with ROIAlign's edge rules. As in
MXNet, it has no gradient."""
import math

import numpy as np

from .base import Operator, Param, register, merge_shape
from .roi import _f32, roi_input_check

_CHUNK_ELEMENTS = 1 << 22


def _corners(xp, y, x, height, width, used):
    """Flat positions (..., 4) and weights (..., 4) of the bilinear corners of samples (y, x),
    zero where a sample is unused or outside [-1, size]."""
    used = used & (y >= -1.0) & (y <= height) & (x >= -1.0) & (x <= width)
    y, x = xp.maximum(y, 0), xp.maximum(x, 0)
    y0, x0 = xp.floor(y).astype(np.int64), xp.floor(x).astype(np.int64)
    y_edge, x_edge = y0 >= height - 1, x0 >= width - 1
    y0, x0 = xp.where(y_edge, height - 1, y0), xp.where(x_edge, width - 1, x0)
    y1, x1 = xp.where(y_edge, y0, y0 + 1), xp.where(x_edge, x0, x0 + 1)
    ly, lx = xp.where(y_edge, 0, y - y0), xp.where(x_edge, 0, x - x0)
    hy, hx = 1 - ly, 1 - lx
    pos = xp.stack([y0 * width + x0, y0 * width + x1, y1 * width + x0, y1 * width + x1], -1)
    weight = xp.stack([hy * hx, hy * lx, ly * hx, ly * lx], -1) * used[..., None]
    return pos, weight


@register
class RROIAlign(Operator):
    """Rotated ROI align: (N, C, H, W) data, (R, 6) rois -> (R, C, PH, PW)."""
    op_name = '_contrib_RROIAlign'
    arguments = ('data', 'rois')
    params = {'pooled_size': Param('shape'), 'spatial_scale': Param('float'),
              'sampling_ratio': Param('int', -1)}
    differentiable = False
    backward_uses = ()

    def infer_shape(self, in_shapes, out_shapes):
        data, rois = in_shapes
        roi_input_check(self.op_name, data, rois, 6, '[batch, x, y, w, h, angle]')
        out = (rois[0], data[1]) + tuple(self.p.pooled_size)
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def _samples(self, xp, rois, dtype):
        """Per ROI the sample coordinates (R, PH, PW, Gh, Gw), their use mask and 1/count."""
        ph, pw = self.p.pooled_size
        scale = dtype.type(_f32(self.p.spatial_scale))
        cx, cy = rois[:, 1] * scale, rois[:, 2] * scale
        w, h = xp.maximum(rois[:, 3] * scale, 1), xp.maximum(rois[:, 4] * scale, 1)
        theta = rois[:, 5] * dtype.type(math.pi / 180.0)
        ratio = self.p.sampling_ratio
        gh = xp.full(h.shape, ratio) if ratio > 0 else xp.ceil(h / ph).astype(np.int64)
        gw = xp.full(w.shape, ratio) if ratio > 0 else xp.ceil(w / pw).astype(np.int64)
        most_h, most_w = max(int(gh.max()), 1), max(int(gw.max()), 1)
        iy = xp.arange(most_h, dtype=dtype)
        ix = xp.arange(most_w, dtype=dtype)
        bh, bw = (h / ph)[:, None, None], (w / pw)[:, None, None]
        yy = -h[:, None, None] / 2 + xp.arange(ph, dtype=dtype)[None, :, None] * bh + \
            (iy + dtype.type(0.5))[None, None, :] * bh / gh[:, None, None]          # (R, PH, Gh)
        xx = -w[:, None, None] / 2 + xp.arange(pw, dtype=dtype)[None, :, None] * bw + \
            (ix + dtype.type(0.5))[None, None, :] * bw / gw[:, None, None]          # (R, PW, Gw)
        cos, sin = xp.cos(theta)[:, None, None, None, None], xp.sin(theta)[:, None, None, None, None]
        yy, xx = yy[:, :, None, :, None], xx[:, None, :, None, :]
        x = xx * cos + yy * sin + cx[:, None, None, None, None]
        y = yy * cos - xx * sin + cy[:, None, None, None, None]
        used = ((iy[None, None, None, :, None] < gh[:, None, None, None, None]) &
                (ix[None, None, None, None, :] < gw[:, None, None, None, None]))
        return y, x, used, (1.0 / (gh * gw)).astype(dtype)

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        data, rois = inputs
        n, c, height, width = data.shape
        pixels = data.transpose(0, 2, 3, 1).reshape(-1, c)
        y, x, used, inv = self._samples(xp, rois.astype(data.dtype), data.dtype)
        pos, weight = _corners(xp, y, x, height, width, used)       # (R, PH, PW, Gh, Gw, 4)
        pos = pos + (rois[:, 0].astype(np.int64) * (height * width))[:, None, None, None, None, None]
        per_roi = int(np.prod(pos.shape[1:])) * c
        step = max(1, _CHUNK_ELEMENTS // max(per_roi, 1))
        outs = []
        for lo in range(0, rois.shape[0], step):
            part = slice(lo, lo + step)
            vals = pixels[pos[part]] * weight[part][..., None]       # (r, PH, PW, Gh, Gw, 4, C)
            outs.append(vals.sum(axis=(3, 4, 5)).transpose(0, 3, 1, 2) *
                        inv[part][:, None, None, None])
        if not outs:
            return [xp.zeros((0, c) + tuple(self.p.pooled_size), data.dtype)]
        return [xp.concatenate(outs).astype(data.dtype)]
