"""Correlation (FlowNet's correlation layer): for every displacement of a
(2 * max_displacement / stride2 + 1)^2 grid, the mean over a kernel window and the channels of
``data1 * data2`` shifted (or ``|data1 - data2|`` without ``is_multiply``), sampled every
``stride1`` pixels, with MXNet's window placement (windows start at ``max_displacement`` in the
zero-padded images) and gradients to both inputs.

The loop runs over displacements; each step is whole-array work on the batch."""
import math

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape


@register
class Correlation(Operator):
    """Correlation of ``data1`` and ``data2`` (both (N, C, H, W)): output
    (N, D*D, out_h, out_w) with D = 2 * (max_displacement // stride2) + 1."""
    op_name = 'Correlation'
    arguments = ('data1', 'data2')
    params = {'kernel_size': Param('int', 1), 'max_displacement': Param('int', 1),
              'stride1': Param('int', 1), 'stride2': Param('int', 1), 'pad_size': Param('int', 0),
              'is_multiply': Param('bool', True)}
    backward_uses = ('inputs',)

    def _geometry(self, height, width):
        p = self.p
        border = p.max_displacement + (p.kernel_size - 1) // 2
        out_h = math.ceil((height + 2 * p.pad_size - 2 * border) / p.stride1)
        out_w = math.ceil((width + 2 * p.pad_size - 2 * border) / p.stride1)
        if out_h < 1 or out_w < 1:
            raise MXNetError('Correlation cannot be done with these settings: the neighbourhood '
                             'and kernel do not fit in a %d x %d input' % (height, width))
        radius = p.max_displacement // p.stride2
        return out_h, out_w, radius

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: both of rank 4; the output from data1 alone, whose spatial size must be
        # known (MXNet's arithmetic on an unknown -1 fails)
        d1, d2 = in_shapes
        for name, s in (('data1', d1), ('data2', d2)):
            if s is None or len(s) != 4:
                raise MXNetError('Correlation: %s must be 4-D, got %s'
                                 % (name, 'an unknown shape' if s is None else tuple(s)))
        if 0 in d1[2:]:
            raise MXNetError('Correlation: the spatial size of data1 %s must be known'
                             % (tuple(d1),))
        out_h, out_w, radius = self._geometry(d1[2], d1[3])
        out = (d1[0], (2 * radius + 1) ** 2, out_h, out_w)
        return list(in_shapes), [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def _displacements(self, radius):
        width = 2 * radius + 1
        for t in range(width * width):
            yield t, (t // width - radius) * self.p.stride2, (t % width - radius) * self.p.stride2

    def _windows(self, out_h, out_w):
        """The kernel offsets (h, w) and the strided slices of the window starts they add."""
        p = self.p
        start = p.max_displacement
        for h in range(p.kernel_size):
            for w in range(p.kernel_size):
                yield (slice(start + h, start + h + p.stride1 * (out_h - 1) + 1, p.stride1),
                       slice(start + w, start + w + p.stride1 * (out_w - 1) + 1, p.stride1))

    def _pad(self, xp, x):
        pad = self.p.pad_size
        return xp.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x

    @staticmethod
    def _shifted(a, dy, dx):
        """Views of ``a`` and ``a`` moved by (dy, dx), over the positions where both exist."""
        h, w = a.shape[2:]
        ys, xs = slice(max(0, -dy), h - max(0, dy)), slice(max(0, -dx), w - max(0, dx))
        ys2, xs2 = slice(ys.start + dy, ys.stop + dy), slice(xs.start + dx, xs.stop + dx)
        return (Ellipsis, ys, xs), (Ellipsis, ys2, xs2)

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        p1, p2 = (self._pad(xp, x) for x in inputs)
        n, c, hp, wp = p1.shape
        out_h, out_w, radius = self._geometry(*inputs[0].shape[2:])
        out = xp.zeros((n, (2 * radius + 1) ** 2, out_h, out_w), dtype=p1.dtype)
        scale = p1.dtype.type(1.0 / (self.p.kernel_size ** 2 * c))
        for t, dy, dx in self._displacements(radius):
            here, there = self._shifted(p1, dy, dx)
            pair = p1[here] * p2[there] if self.p.is_multiply else xp.abs(p1[here] - p2[there])
            corr = xp.zeros((n, hp, wp), dtype=p1.dtype)
            corr[here] = pair.sum(axis=1)
            for rows, cols in self._windows(out_h, out_w):
                out[:, t] += corr[:, rows, cols]
        return [out * scale]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        p1, p2 = (self._pad(xp, x) for x in inputs)
        n, c, hp, wp = p1.shape
        out_h, out_w, radius = self._geometry(*inputs[0].shape[2:])
        g1, g2 = xp.zeros_like(p1), xp.zeros_like(p2)
        dy_all = out_grads[0] * p1.dtype.type(1.0 / (self.p.kernel_size ** 2 * c))
        for t, dy, dx in self._displacements(radius):
            spread = xp.zeros((n, 1, hp, wp), dtype=p1.dtype)
            for rows, cols in self._windows(out_h, out_w):
                spread[:, 0, rows, cols] += dy_all[:, t]
            here, there = self._shifted(p1, dy, dx)
            if self.p.is_multiply:
                g1[here] += spread[here] * p2[there]
                g2[there] += spread[here] * p1[here]
            else:
                sign = xp.where(p1[here] >= p2[there], 1, -1).astype(p1.dtype)
                g1[here] += spread[here] * sign
                g2[there] -= spread[here] * sign
        pad, (h, w) = self.p.pad_size, inputs[0].shape[2:]
        crop = (Ellipsis, slice(pad, pad + h), slice(pad, pad + w))
        return [g1[crop], g2[crop]]
