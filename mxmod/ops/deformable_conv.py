"""Deformable convolutions (contrib): _contrib_DeformableConvolution (v1, Dai et al. 2017) and
_contrib_ModulatedDeformableConvolution (v2, Zhu et al. 2018), 2-D, NCHW.

Each kernel tap (i, j) of output position (oh, ow) reads the input at
``(oh * stride_h - pad_h + i * dilate_h + dh, ow * stride_w - pad_w + j * dilate_w + dw)`` where
``(dh, dw)`` come from ``offset`` (N, deformable_groups * 2 * kh * kw, OH, OW): for deformable
group g and tap k = i * kw + j, channel ``g * 2K + 2k`` holds dh and ``g * 2K + 2k + 1`` holds dw.
The input is read by bilinear interpolation, as MXNet 1.9.1's CPU kernels do:

* v1 samples only inside ``[0, H) x [0, W)``; a position past the last row (column) reads that
  row (column) without interpolating along it;
* v2 samples inside ``(-1, H) x (-1, W)`` with zero outside the image, and multiplies each tap by
  ``mask`` (N, deformable_groups * kh * kw, OH, OW).

The sampled columns then go through an ordinary (grouped) convolution with ``weight``
(num_filter, C / num_group, kh, kw) and ``bias``. Gradients are the exact derivatives of this
forward (MXNet's coordinate gradients agree except on the measure-zero grid lines)."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape


def _pair(op, name, value, default):
    value = tuple(value) if value else (default, default)
    if len(value) != 2:
        raise MXNetError('%s: %s must have 2 entries (only 2-D is supported), got %s'
                         % (op, name, value))
    return value


class _DeformableBase(Operator):
    """Shared shapes, sampling and convolution of the two deformable convolutions."""
    modulated = False
    params = {'kernel': Param('shape'), 'stride': Param('shape', ()), 'dilate': Param('shape', ()),
              'pad': Param('shape', ()), 'num_filter': Param('int'), 'num_group': Param('int', 1),
              'num_deformable_group': Param('int', 1), 'workspace': Param('int', 1024),
              'no_bias': Param('bool', False),
              'layout': Param('str?', None, choices=(None, 'NCW', 'NCHW', 'NCDHW'))}

    def setup(self):
        name = self.op_name
        if len(self.p.kernel) != 2:
            raise MXNetError('%s: only 2-D kernels are supported, got kernel=%s'
                             % (name, self.p.kernel))
        if self.p.layout not in (None, 'NCHW'):
            raise MXNetError('%s: only the NCHW layout is supported, got %s'
                             % (name, self.p.layout))
        self.kernel = tuple(self.p.kernel)
        self.stride = _pair(name, 'stride', self.p.stride, 1)
        self.dilate = _pair(name, 'dilate', self.p.dilate, 1)
        self.pad = _pair(name, 'pad', self.p.pad, 0)
        if self.p.num_filter < 1 or self.p.num_group < 1 or self.p.num_deformable_group < 1:
            raise MXNetError('%s: num_filter, num_group and num_deformable_group must be '
                             'positive' % name)
        if self.p.num_filter % self.p.num_group:
            raise MXNetError('%s: num_filter %d is not a multiple of num_group %d'
                             % (name, self.p.num_filter, self.p.num_group))

    def list_arguments(self):
        args = ['data', 'offset'] + (['mask'] if self.modulated else []) + ['weight']
        return args if self.p.no_bias else args + ['bias']

    # ---- shapes ---------------------------------------------------------------------------------
    def _out_hw(self, h, w):
        (kh, kw), (sh, sw), (dh, dw), (ph, pw) = self.kernel, self.stride, self.dilate, self.pad
        oh = (h + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
        ow = (w + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
        return oh, ow

    def _check_data(self, data):
        name = self.op_name
        if len(data) != 4:
            raise MXNetError('%s: data must be 4-D (N, C, H, W), got %s' % (name, tuple(data)))
        c = data[1]
        if c and c % self.p.num_group:
            raise MXNetError('%s: %d input channels are not a multiple of num_group %d'
                             % (name, c, self.p.num_group))
        if c and c % self.p.num_deformable_group:
            raise MXNetError('%s: %d input channels are not a multiple of num_deformable_group %d'
                             % (name, c, self.p.num_deformable_group))

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: from data (fully known for DeformableConvolution, of known rank for the
        # modulated one) forwards; offset (and mask) must be there already and are only checked
        ins, outs = list(in_shapes), list(out_shapes)
        data = ins[0]
        if data is None and not self.modulated or (data is not None and 0 in data
                                                   and not self.modulated):
            return ins, outs
        if data is None:
            raise MXNetError('%s: data should be 4-D (N, C, H, W), got an unknown shape'
                             % self.op_name)
        self._check_data(data)
        n, c, h, w = data
        names = self.list_arguments()
        iw = names.index('weight')
        ins[iw] = merge_shape(self.op_name, 'weight', ins[iw],
                              (self.p.num_filter, c // self.p.num_group if c else 0) + self.kernel)
        if not self.p.no_bias:
            ins[iw + 1] = merge_shape(self.op_name, 'bias', ins[iw + 1], (self.p.num_filter,))
        if not h or not w:
            raise MXNetError('%s: the spatial size of data %s must be known'
                             % (self.op_name, tuple(data)))
        oh, ow = self._out_hw(h, w)
        self._check_maps(ins, oh, ow)
        outs[0] = merge_shape(self.op_name, 'output', outs[0], (n, self.p.num_filter, oh, ow))
        ins[0] = (outs[0][0],) + tuple(data[1:])     # MXNet fills data's batch from the output
        return ins, outs

    def _check_maps(self, ins, oh, ow):
        """offset (and mask) must be 4-D maps of the output's size with the channels of the
        deformable groups, as MXNet checks them (they are not inferred)."""
        taps = self.kernel[0] * self.kernel[1]
        want = {'offset': 2 * taps} if not self.modulated else {'offset': 2 * taps, 'mask': taps}
        for name, per_group in sorted(want.items()):
            shape = ins[self.list_arguments().index(name)]
            if (shape is None or len(shape) != 4 or tuple(shape[2:]) != (oh, ow)
                    or not shape[1] or shape[1] % taps
                    or shape[1] // per_group != self.p.num_deformable_group):
                raise MXNetError('%s: %s must be a 4-D map (N, %d, %d, %d), got %s'
                                 % (self.op_name, name, per_group * self.p.num_deformable_group,
                                    oh, ow, 'an unknown shape' if shape is None
                                    else tuple(shape)))

    def _check_inputs(self, inputs):
        x = inputs[0]
        self._check_data(x.shape)
        n, _, h, w = x.shape
        oh, ow = self._out_hw(h, w)
        taps = self.kernel[0] * self.kernel[1]
        dg = self.p.num_deformable_group
        want = {'offset': (n, dg * 2 * taps, oh, ow)}
        if self.modulated:
            want['mask'] = (n, dg * taps, oh, ow)
        for name, arr in zip(self.list_arguments(), inputs):
            if name in want and tuple(arr.shape) != want[name]:
                raise MXNetError('%s: %s must have shape %s, got %s'
                                 % (self.op_name, name, want[name], tuple(arr.shape)))
        return oh, ow

    # ---- sampling -------------------------------------------------------------------------------
    def _positions(self, xp, offset, oh, ow):
        """Sampling rows and columns, each (N, G, K, OH * OW), in float64."""
        (kh, kw), (sh, sw), (dh, dw), (ph, pw) = self.kernel, self.stride, self.dilate, self.pad
        n = offset.shape[0]
        g = self.p.num_deformable_group
        off = xp.asarray(offset, dtype=np.float64).reshape(n, g, kh * kw, 2, oh * ow)
        ii, jj = np.divmod(np.arange(kh * kw), kw)
        rows = (np.arange(oh) * sh - ph)[None, :, None] + (ii * dh)[:, None, None]
        cols = (np.arange(ow) * sw - pw)[None, None, :] + (jj * dw)[:, None, None]
        rows = xp.asarray(np.broadcast_to(rows, (kh * kw, oh, ow)).reshape(kh * kw, -1))
        cols = xp.asarray(np.broadcast_to(cols, (kh * kw, oh, ow)).reshape(kh * kw, -1))
        return rows + off[:, :, :, 0], cols + off[:, :, :, 1]

    def _corners(self, xp, hs, ws, height, width):
        """The four bilinear corners: list of (flat index, weight, in-range) and the data needed
        for the coordinate derivatives."""
        if self.modulated:
            inside = (hs > -1) & (ws > -1) & (hs < height) & (ws < width)
            hl, wl = xp.floor(hs), xp.floor(ws)
            lh, lw = hs - hl, ws - wl
            hh, wh = hl + 1, wl + 1
            row_ok = [(hl >= 0), (hh <= height - 1)]
            col_ok = [(wl >= 0), (wh <= width - 1)]
            dlh = dlw = inside
        else:
            inside = (hs >= 0) & (ws >= 0) & (hs < height) & (ws < width)
            hl, wl = xp.floor(hs), xp.floor(ws)
            at_h, at_w = hl >= height - 1, wl >= width - 1
            hh = xp.where(at_h, height - 1, hl + 1)
            wh = xp.where(at_w, width - 1, wl + 1)
            lh = xp.where(at_h, 0.0, hs - hl)
            lw = xp.where(at_w, 0.0, ws - wl)
            row_ok = [inside, inside]
            col_ok = [inside, inside]
            dlh = inside & ~at_h        # d lh / d h: 1 inside, 0 where the row is clamped
            dlw = inside & ~at_w
        rows = [hl, hh]
        cols = [wl, wh]
        wrow = [1 - lh, lh]
        wcol = [1 - lw, lw]
        corners = []
        for a in range(2):
            for b in range(2):
                ok = inside & row_ok[a] & col_ok[b]
                r = xp.clip(rows[a], 0, height - 1).astype(np.int64)
                c = xp.clip(cols[b], 0, width - 1).astype(np.int64)
                corners.append((r * width + c, wrow[a] * wcol[b] * ok, ok, a, b))
        return corners, (wrow, wcol, dlh, dlw)

    def _sample(self, xp, x, hs, ws):
        """Columns (N, G, Cg, K, L) of bilinear samples, plus what backward needs."""
        n, c, height, width = x.shape
        g = self.p.num_deformable_group
        k, length = hs.shape[2], hs.shape[3]
        flat = xp.asarray(x, dtype=np.float64).reshape(n, g, c // g, height * width)
        corners, extra = self._corners(xp, hs, ws, height, width)
        cols = 0
        values = []
        for idx, weight, ok, _, _ in corners:
            take = xp.broadcast_to(idx.reshape(n, g, 1, k * length), (n, g, c // g, k * length))
            v = xp.take_along_axis(flat, take, axis=3).reshape(n, g, c // g, k, length)
            v = v * ok[:, :, None]
            values.append(v)
            cols = cols + v * weight[:, :, None]
        return cols, corners, values, extra

    # ---- forward / backward ---------------------------------------------------------------------
    def _conv(self, xp, cols, weight, n, oh, ow):
        ng = self.p.num_group
        f = self.p.num_filter
        c = weight.shape[1] * ng
        taps = self.kernel[0] * self.kernel[1]
        cols = cols.reshape(n, ng, (c // ng) * taps, oh * ow)
        w = xp.asarray(weight, dtype=np.float64).reshape(ng, f // ng, (c // ng) * taps)
        out = xp.einsum('gfk,ngkl->ngfl', w, cols)
        return out.reshape(n, f, oh, ow)

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        oh, ow = self._check_inputs(inputs)
        x = inputs[0]
        n = x.shape[0]
        hs, ws = self._positions(xp, inputs[1], oh, ow)
        cols = self._sample(xp, x, hs, ws)[0]
        if self.modulated:
            mask = xp.asarray(inputs[2], dtype=np.float64).reshape(
                n, self.p.num_deformable_group, 1, self.kernel[0] * self.kernel[1], oh * ow)
            cols = cols * mask
        w_index = self.list_arguments().index('weight')
        out = self._conv(xp, cols, inputs[w_index], n, oh, ow)
        if not self.p.no_bias:
            out = out + xp.asarray(inputs[w_index + 1], dtype=np.float64).reshape(1, -1, 1, 1)
        return [out.astype(x.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        x = inputs[0]
        n, c, height, width = x.shape
        oh, ow = self._out_hw(height, width)
        g = self.p.num_deformable_group
        ng = self.p.num_group
        f = self.p.num_filter
        taps = self.kernel[0] * self.kernel[1]
        names = self.list_arguments()
        wi = names.index('weight')
        weight = xp.asarray(inputs[wi], dtype=np.float64)
        hs, ws = self._positions(xp, inputs[1], oh, ow)
        samples, corners, values, (wrow, wcol, dlh, dlw) = self._sample(xp, x, hs, ws)
        mask = None
        if self.modulated:
            mask = xp.asarray(inputs[2], dtype=np.float64).reshape(n, g, 1, taps, oh * ow)
        cols = samples if mask is None else samples * mask
        dy = xp.asarray(out_grads[0], dtype=np.float64).reshape(n, ng, f // ng, oh * ow)
        w = weight.reshape(ng, f // ng, (c // ng) * taps)
        grads = {}
        grads['weight'] = xp.einsum('ngfl,ngkl->gfk', dy, cols.reshape(
            n, ng, (c // ng) * taps, oh * ow)).reshape(weight.shape)
        if not self.p.no_bias:
            grads['bias'] = dy.sum(axis=(0, 3)).reshape(-1)
        dcols = xp.einsum('gfk,ngfl->ngkl', w, dy).reshape(n, g, c // g, taps, oh * ow)
        if mask is not None:
            grads['mask'] = (dcols * samples).sum(axis=2).reshape(inputs[2].shape)
            dcols = dcols * mask
        # data: each sample's gradient spread over its four corners
        size = n * g * (c // g) * height * width
        base = (xp.arange(n * g * (c // g)) * (height * width)).reshape(n, g, c // g, 1, 1)
        dx = xp.zeros(size, dtype=np.float64)
        for idx, cweight, _, _, _ in corners:
            pos = (base + idx[:, :, None]).reshape(-1)
            contrib = (dcols * cweight[:, :, None]).reshape(-1)
            dx += xp.bincount(pos, weights=contrib, minlength=size)
        grads['data'] = dx.reshape(x.shape)
        # offsets: d sample / d h and d sample / d w through the interpolation weights
        d_h = 0
        d_w = 0
        for (_, _, _, a, b), v in zip(corners, values):
            sign_r = -1.0 if a == 0 else 1.0
            sign_c = -1.0 if b == 0 else 1.0
            d_h = d_h + v * (sign_r * dlh * wcol[b])[:, :, None]
            d_w = d_w + v * (sign_c * dlw * wrow[a])[:, :, None]
        g_h = (dcols * d_h).sum(axis=2)
        g_w = (dcols * d_w).sum(axis=2)
        grads['offset'] = xp.stack([g_h, g_w], axis=3).reshape(inputs[1].shape)
        return [grads[name].astype(arr.dtype) for name, arr in zip(names, inputs)]


@register
class DeformableConvolution(_DeformableBase):
    """Deformable convolution v1: bilinear taps at learned offsets (see the module docstring)."""
    op_name = '_contrib_DeformableConvolution'


@register
class ModulatedDeformableConvolution(_DeformableBase):
    """Deformable convolution v2: offsets plus a per-tap modulation ``mask``."""
    op_name = '_contrib_ModulatedDeformableConvolution'
    modulated = True
    params = dict(_DeformableBase.params, im2col_step=Param('int', 64))
