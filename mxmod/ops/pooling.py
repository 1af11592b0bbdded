"""Pooling over 1, 2 or 3 spatial axes: max, avg, sum and lp, with MXNet's valid/full/same output
conventions, count_include_pad, global pooling and channel-last layouts."""
import math

import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from . import convutil as cu
from .layout import dense_order
from . import jit

__all__ = ['Pooling']


def _dense(xp, arr):
    """``arr`` itself when its memory is dense in some axis order, else a C-ordered copy."""
    if arr.flags.c_contiguous or dense_order(arr) is not None:
        return arr
    return xp.ascontiguousarray(arr)


@register
class Pooling(Operator):
    """Pool windows of ``kernel`` moved by ``stride`` over zero-padded (``pad``) input.

    ``pooling_convention`` 'valid' floors the output size, 'full' ceils it, 'same' (1-D) gives
    ceil(width / stride). Average pooling divides by the window clipped to the padded input
    (``count_include_pad`` True, the default) or to the real input. The max-pooling gradient goes
    to the first maximal element of each window."""
    op_name = 'Pooling'
    params = {
        'kernel': Param('shape', ()), 'pool_type': Param('str', 'max', choices=('max', 'avg', 'sum', 'lp')),
        'global_pool': Param('bool', False), 'cudnn_off': Param('bool', False),
        'pooling_convention': Param('str', 'valid', choices=('valid', 'full', 'same')),
        'stride': Param('shape', ()), 'pad': Param('shape', ()), 'p_value': Param('int?', None),
        'count_include_pad': Param('bool?', None),
        'layout': Param('str?', None, choices=(None, 'NCW', 'NCHW', 'NCDHW', 'NWC', 'NHWC', 'NDHWC')),
    }
    mirror_cheap = True
    backward_uses = ('inputs', 'outputs')

    def setup(self):
        p = self.p
        if not p.global_pool and len(p.kernel or ()) not in (1, 2, 3):
            raise MXNetError('Pooling: kernel must have 1, 2 or 3 entries (or global_pool=True), '
                             'got %s' % (p.kernel,))
        if p.pool_type == 'lp' and p.p_value is None:
            raise MXNetError('Pooling: pool_type=lp needs p_value')
        self.include_pad = True if p.count_include_pad is None else p.count_include_pad
        # MXNet 1.9.1's (MKLDNN) max pooling carries a hidden second output, its workspace; it
        # shows in symbol JSON (node_row_ptr), so the same operators have it here too
        self.workspace = (p.pool_type == 'max' and len(p.kernel or ()) in (1, 2, 3)
                          and p.layout in (None, 'NCW', 'NCHW', 'NCDHW'))

    def list_outputs(self):
        return ['output', 'workspace'] if self.workspace else ['output']

    def num_visible_outputs(self):
        return 1

    def _layout(self, ndim):
        if self.p.layout is not None:
            if len(self.p.layout) != ndim:
                raise MXNetError('Pooling: layout %s does not match %d-D data' % (self.p.layout, ndim))
            return self.p.layout
        return cu.DEFAULT_LAYOUT.get(ndim - 2, 'NCHW')

    def _geometry(self, spatial):
        """(kernel, stride, pad, out) per spatial axis for channel-first spatial sizes."""
        nd = len(spatial)
        if self.p.global_pool:
            return tuple(spatial), (1,) * nd, (0,) * nd, (1,) * nd
        kernel = tuple(self.p.kernel)
        if len(kernel) != nd:
            raise MXNetError('Pooling: %d-D kernel %s for data with %d spatial axes'
                             % (len(kernel), kernel, nd))
        # MXNet reads the first entries of longer stride/pad tuples (pad=(0, 0, 0) with a 1-D kernel)
        stride = cu.expand('Pooling', 'stride', tuple(self.p.stride or ())[:nd], nd, 1)
        pad = cu.expand('Pooling', 'pad', tuple(self.p.pad or ())[:nd], nd, 0)
        conv = self.p.pooling_convention
        if conv == 'same' and (nd != 1 or any(pad)):
            raise MXNetError("Pooling: pooling_convention='same' supports 1-D data without pad only")
        out = []
        for x, k, s, p in zip(spatial, kernel, stride, pad):
            if not x:       # MXNet compares the kernel with the unknown size (-1) and fails
                raise MXNetError('Pooling: kernel size (%d) needs the spatial sizes of data, '
                                 'got an unknown size in %s' % (k, tuple(spatial)))
            if k > x + 2 * p:
                raise MXNetError('Pooling: kernel size (%d) exceeds input (%d padded to %d)'
                                 % (k, x, x + 2 * p))
            if conv == 'valid':
                out.append(1 + (x + 2 * p - k) // s)
            elif conv == 'full':
                out.append(1 + int(math.ceil(float(x + 2 * p - k) / s)))
            else:
                out.append(int(math.ceil(float(x + 2 * p) / s)))
        return kernel, stride, pad, tuple(out)

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:
            return list(in_shapes), list(out_shapes)
        if not 3 <= len(data) <= 5:
            raise MXNetError('Pooling: data must be 3-D, 4-D or 5-D (N, C, spatial...), got %s'
                             % (tuple(data),))
        layout = self._layout(len(data))
        d = cu.shape_to_cf(tuple(data), layout)
        out = cu.shape_from_cf(d[:2] + self._geometry(d[2:])[3], layout)
        out = merge_shape(self.op_name, 'output', out_shapes[0], out)
        return [data], [out] * len(out_shapes)

    def _padded(self, xp, x, fill):
        """The padded channel-first input and the geometry (kernel, stride, pad, out)."""
        geom = self._geometry(x.shape[2:])
        kernel, stride, pad, out = geom
        extra = tuple(max(0, (o - 1) * s + k - (n + 2 * p))
                      for o, s, k, n, p in zip(out, stride, kernel, x.shape[2:], pad))
        return cu.pad_spatial(xp, x, pad, fill, extra), geom

    @staticmethod
    def _views(arr, geom):
        """One strided (N, C, *out) view of ``arr`` per window offset, in window order."""
        kernel, stride, _, out = geom
        return cu.offset_views(arr, kernel, stride, (1,) * len(kernel), out)

    def _divisor(self, xp, spatial, geom, dtype):
        """Per-output-position window sizes for average pooling, shape (*out)."""
        kernel, stride, pad, out = geom
        div = None
        for ax, (n, k, s, p, o) in enumerate(zip(spatial, kernel, stride, pad, out)):
            start = np.arange(o) * s - p
            end = np.minimum(start + k, n + p)
            if self.include_pad:
                size = end - start
            else:
                size = np.minimum(end, n) - np.maximum(start, 0)
            size = size.reshape([-1 if i == ax else 1 for i in range(len(out))])
            div = size if div is None else div * size
        return xp.asarray(np.maximum(div, 1), dtype=dtype)

    def _fill(self, dtype):
        return np.finfo(dtype).min if self.p.pool_type == 'max' and dtype.kind == 'f' else 0

    def _reduce(self, xp, views):
        """Max, sum or sum of p-th powers over the window views, offset by offset in window order
        (the order, hence the rounding, of a reduction over a stacked window axis)."""
        kind, pv = self.p.pool_type, self.p.p_value
        if kind != 'max' and math.prod(views[0].shape[2:]) == 1:
            # one window per channel (global pooling): a contiguous reduction, as numpy sums it
            wins = xp.stack(views, axis=2)
            return (wins ** pv if kind == 'lp' and pv != 1 else wins).sum(axis=2)
        if kind == 'lp' and pv != 1:
            y = views[0] ** pv
            for view in views[1:]:
                y += view ** pv
            return y
        y = views[0].copy(order='K')       # in the input's memory order (channels-last stays so)
        for view in views[1:]:
            if kind == 'max':
                xp.maximum(y, view, out=y)
            else:
                y += view
        return y

    def _compiled(self, xp, x):
        """(kernels module, 'last' or 'first', geometry) when the compiled max-pooling kernels
        apply: numpy, float32/64, 2-D max pooling whose windows lie inside the input (no
        padding), channel-first ``x`` in channels-last or C-ordered memory; else None."""
        if not (xp is np and self.p.pool_type == 'max' and x.ndim == 4 and jit.enabled()
                and x.dtype in (np.float32, np.float64)):
            return None
        geom = self._geometry(x.shape[2:])
        kernel, stride, pad, out = geom
        if any(pad) or any((o - 1) * s + k > n for o, s, k, n in zip(out, stride, kernel,
                                                                        x.shape[2:])):
            return None
        if x.transpose(0, 2, 3, 1).flags.c_contiguous:
            order = 'last'
        elif x.flags.c_contiguous:
            order = 'first'
        else:
            return None
        from . import pool_kernels  # pylint: disable=import-outside-toplevel
        return pool_kernels, order, geom

    def _compiled_forward(self, xp, x, layout, fast):
        kernels, order, (kernel, stride, _, out) = fast
        if order == 'last':
            y = np.empty((x.shape[0],) + out + (x.shape[1],), dtype=x.dtype)
            run = kernels.max_forward_last32 if x.dtype == np.float32 else kernels.max_forward_last
            run(x.transpose(0, 2, 3, 1), y, kernel[0], kernel[1], stride[0], stride[1])
            y = y.transpose(0, 3, 1, 2)
        else:
            y = np.empty(x.shape[:2] + out, dtype=x.dtype)
            kernels.max_forward_first(x, y, kernel[0], kernel[1], stride[0], stride[1])
        y = _dense(xp, cu.from_channel_first(y, layout))
        return [y, xp.broadcast_to(xp.zeros((), dtype=y.dtype), y.shape)] if self.workspace else [y]

    def _compiled_backward(self, x, dy, layout, fast):
        kernels, order, (kernel, stride, _, _) = fast
        if order == 'last':     # dy (a quarter of x's size or less) copied into x's order if need be
            dy4 = np.ascontiguousarray(dy.transpose(0, 2, 3, 1))
            shape = (x.shape[0],) + x.shape[2:] + (x.shape[1],)
            if x.dtype == np.float32 and tuple(stride) == tuple(kernel):
                dx = np.empty(shape, dtype=x.dtype)
                kernels.max_backward_disjoint32(x.transpose(0, 2, 3, 1), dy4, dx, kernel[0],
                                                kernel[1])
            else:
                dx = np.zeros(shape, dtype=x.dtype)
                kernels.max_backward_last(x.transpose(0, 2, 3, 1), dy4, dx, kernel[0], kernel[1],
                                          stride[0], stride[1])
            dx = dx.transpose(0, 3, 1, 2)
        else:
            dx = np.zeros_like(x)
            kernels.max_backward_first(x, np.ascontiguousarray(dy), dx, kernel[0], kernel[1],
                                       stride[0], stride[1])
        return [_dense(np, cu.from_channel_first(dx, layout))]

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        layout = self._layout(inputs[0].ndim)
        x = cu.to_channel_first(inputs[0], layout)
        fast = self._compiled(xp, x)
        if fast is not None:
            return self._compiled_forward(xp, x, layout, fast)
        xpad, geom = self._padded(xp, x, self._fill(x.dtype))
        y = self._reduce(xp, self._views(xpad, geom))
        kind = self.p.pool_type
        if kind == 'lp' and self.p.p_value != 1:
            y = y ** x.dtype.type(1.0 / self.p.p_value)
        elif kind == 'avg':
            y = y / self._divisor(xp, x.shape[2:], geom, x.dtype)
        y = _dense(xp, cu.from_channel_first(y.astype(x.dtype, copy=False), layout))
        if self.workspace:
            return [y, xp.broadcast_to(xp.zeros((), dtype=y.dtype), y.shape)]
        return [y]

    @staticmethod
    def _max_backward(xp, xviews, dviews, y, dy):
        """Each window's gradient to its first maximal element (the first NaN if it holds one,
        as argmax picks), adding offset by offset."""
        nans = y.dtype.kind in 'fc' and bool(xp.isnan(y).any())
        free = None
        for view, grad in zip(xviews, dviews):
            hit = view == y
            if nans:
                hit |= view != view
            if free is None:
                free = ~hit
            else:
                hit &= free
                free ^= hit
            grad += (hit * dy).astype(grad.dtype, copy=False)

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        layout = self._layout(inputs[0].ndim)
        x = cu.to_channel_first(inputs[0], layout)
        dy = cu.to_channel_first(out_grads[0], layout)
        fast = self._compiled(xp, x) if dy.dtype == x.dtype else None
        if fast is not None:
            return self._compiled_backward(x, dy, layout, fast)
        xpad, geom = self._padded(xp, x, self._fill(x.dtype))
        dxp = xp.zeros_like(xpad, dtype=x.dtype)
        dviews = self._views(dxp, geom)
        kind = self.p.pool_type
        if kind == 'max':
            y = cu.to_channel_first(outputs[0], layout)
            self._max_backward(xp, self._views(xpad, geom), dviews, y, dy)
        elif kind == 'lp' and self.p.p_value != 1:
            y = cu.to_channel_first(outputs[0], layout)
            for view, grad in zip(self._views(xpad, geom), dviews):
                grad += (dy * (view / y) ** (self.p.p_value - 1)).astype(x.dtype, copy=False)
        else:
            if kind == 'avg':
                dy = dy / self._divisor(xp, x.shape[2:], geom, x.dtype)
            dy = dy.astype(x.dtype, copy=False)
            for grad in dviews:
                grad += dy
        dx = cu.crop_spatial(dxp, geom[2], x.shape[2:])
        return [_dense(xp, cu.from_channel_first(dx, layout))]
