"""Convolution and Deconvolution over 1, 2 or 3 spatial axes (im2col + matrix products).

Importing this module also registers Pooling (``pooling.py``) and UpSampling (``upsampling.py``)."""
import numpy

from ..base import MXNetError
from .accum import acc_sum
from .base import Operator, Param, register, merge_shape
from . import convutil as cu
from . import conv_cl
from . import conv_jit
from . import jit

__all__ = ['Convolution', 'Deconvolution']

_LAYOUTS = (None, 'NCW', 'NCHW', 'NCDHW', 'NHWC', 'NDHWC')


def _prod(dims):
    out = 1
    for d in dims:
        out *= d
    return out


# ---- the three products of a (grouped) convolution -----------------------------------------------
def conv_apply(xp, cols, w, groups):
    """Convolution output (N, F, *out) from batch-first columns (N, C, K, *out) and weight
    (F, C/g, *k): one matrix product per sample and group, written straight in NC* order."""
    n, c, k = cols.shape[:3]
    f = w.shape[0]
    cm = cols.reshape(n, groups, (c // groups) * k, _prod(cols.shape[3:]))
    wm = w.reshape(groups, f // groups, (c // groups) * k)
    return xp.matmul(wm, cm).reshape((n, f) + cols.shape[3:])


def conv_apply_ckn(xp, cols, w, groups):
    """conv_apply for columns (C, K, N, *out): one product per group, then (F, N) swapped."""
    c, k = cols.shape[:2]
    f = w.shape[0]
    y = xp.matmul(w.reshape(groups, f // groups, (c // groups) * k),
                  cols.reshape(groups, (c // groups) * k, -1))
    return xp.ascontiguousarray(y.reshape((f,) + cols.shape[2:]).swapaxes(0, 1))


def filters_first(dy, groups):
    """dy (N, F, *out) as (groups, F/g, N*L), the layout of the weight gradient's product."""
    f = dy.shape[1]
    return dy.swapaxes(0, 1).reshape(groups, f // groups, -1)


def conv_weight_grad(xp, cols, dyt, w_shape, groups):
    """Gradient of the weight (F, C/g, *k) from columns (C, K, N, *out) and
    ``dyt = filters_first(dy)`` (groups, F/g, N*L), or from batch-last columns (C, K, *out, N)
    and dy batch-last (groups, F/g, L*N)."""
    cm = cols.reshape(groups, -1, dyt.shape[-1])
    return xp.matmul(dyt, cm.transpose(0, 2, 1)).reshape(w_shape)


def conv_data_cols(xp, dyb, w, groups):
    """Batch-last columns (C, K, *out, N) of the data gradient, W^T dy per group, from dy
    batch-last ``dyb = convutil.batch_last(dy)`` (F, *out, N), for :func:`convutil.col2im`."""
    f, cg = dyb.shape[0], w.shape[1]
    k = _prod(w.shape[2:])
    wm = w.reshape(groups, f // groups, cg * k)
    dcols = cu.scratch(xp, 'dcols', (groups, cg * k, dyb.size // f), xp.result_type(w, dyb))
    xp.matmul(wm.transpose(0, 2, 1), dyb.reshape(groups, f // groups, -1), out=dcols)
    return dcols.reshape((cg * groups, k) + tuple(dyb.shape[1:]))


def pointwise_data_grad(xp, dy, w, groups, x_shape):
    """Data gradient of a 1x1 (stride 1, unpadded) convolution: W^T dy per sample and group."""
    n, f = dy.shape[:2]
    wm = w.reshape(groups, f // groups, -1)
    return xp.matmul(wm.transpose(0, 2, 1), dy.reshape(n, groups, f // groups, -1)).reshape(x_shape)


# ---- shared parameter handling ----------------------------------------------------------------
def _conv_params(deconv):
    """Parameter declarations in MXNet's order (the order of positional parameters)."""
    params = {'kernel': Param('shape'), 'stride': Param('shape', ()), 'dilate': Param('shape', ()),
              'pad': Param('shape', ())}
    if deconv:
        params.update(adj=Param('shape', ()), target_shape=Param('shape', ()))
    params.update(
        num_filter=Param('int', lower=1), num_group=Param('int', 1),
        workspace=Param('int', 512 if deconv else 1024), no_bias=Param('bool', deconv),
        cudnn_tune=Param('str?', None, choices=(None, 'off', 'limited_workspace', 'fastest')),
        cudnn_off=Param('bool', False), layout=Param('str?', None, choices=_LAYOUTS))
    return params


class _ConvBase(Operator):
    """Parameter normalisation, argument names and layout handling shared by both ops."""
    backward_uses = ('inputs',)

    def setup(self):
        p = self.p
        nd = len(p.kernel or ())
        if nd not in (1, 2, 3):
            raise MXNetError('%s: kernel must have 1, 2 or 3 entries, got %s' % (self.op_name, p.kernel))
        self.nd = nd
        self.kernel = tuple(p.kernel)
        self.stride = cu.expand(self.op_name, 'stride', p.stride, nd, 1)
        self.dilate = cu.expand(self.op_name, 'dilate', p.dilate, nd, 1)
        self.pad = cu.expand(self.op_name, 'pad', p.pad, nd, 0)
        self.layout = p.layout or cu.DEFAULT_LAYOUT[nd]
        if len(self.layout) != nd + 2:
            raise MXNetError('%s: layout %s does not match a %d-D kernel' % (self.op_name, self.layout, nd))
        if min(self.kernel + self.stride + self.dilate) < 1 or p.num_group < 1:
            raise MXNetError('%s: kernel, stride, dilate and num_group must be positive (got '
                             'kernel=%s stride=%s dilate=%s num_group=%d)' % (
                                 self.op_name, self.kernel, self.stride, self.dilate, p.num_group))
        if p.num_filter % p.num_group:
            raise MXNetError('%s: num_filter=%d must be divisible by num_group=%d'
                             % (self.op_name, p.num_filter, p.num_group))
        self.dk = tuple(1 + (k - 1) * d for k, d in zip(self.kernel, self.dilate))

    def list_arguments(self):
        return ['data', 'weight'] if self.p.no_bias else ['data', 'weight', 'bias']

    def _check_data(self, data):
        if len(data) != self.nd + 2:
            raise MXNetError('%s: data must have %d dimensions for a %d-D kernel, got shape %s'
                             % (self.op_name, self.nd + 2, self.nd, tuple(data)))
        d = cu.shape_to_cf(tuple(data), self.layout)
        if d[1] and d[1] % self.p.num_group:
            raise MXNetError('%s: input channels %d must be divisible by num_group=%d'
                             % (self.op_name, d[1], self.p.num_group))
        return d

    def _weight_layout(self, w_cf):
        return cu.shape_from_cf(w_cf, self.layout)

    def _add_bias(self, y, inputs):
        if not self.p.no_bias:
            y += inputs[2].reshape((1, -1) + (1,) * self.nd)
        return y

    def _bias_grad(self, xp, dy_cf):
        return acc_sum(xp, dy_cf, (0,) + tuple(range(2, dy_cf.ndim)))

    def _cf(self, arr):
        return cu.to_channel_first(arr, self.layout)

    def _back(self, arr, xp):
        return xp.ascontiguousarray(cu.from_channel_first(arr, self.layout))


def _write_into(octx, i, grad):
    """Copy ``grad`` into the gradient array of argument ``i`` the executor handed the step
    (``octx.grad_out``); False when it gave none (or one of another shape or type)."""
    into = octx.grad_out[i] if octx.grad_out and i < len(octx.grad_out) else None
    if into is None or into.shape != grad.shape or into.dtype != grad.dtype:
        return False
    into[...] = grad
    return True


@register
class Convolution(_ConvBase):
    """N-D convolution (cross-correlation) with stride, dilation, zero padding and groups.

    Weight shape (num_filter, C/num_group, *kernel) in channel-first layouts."""
    op_name = 'Convolution'
    params = _conv_params(deconv=False)

    def infer_shape(self, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        if ins[0] is None:
            return ins, outs
        d = self._check_data(ins[0])
        g, f = self.p.num_group, self.p.num_filter
        ins[1] = merge_shape(self.op_name, 'weight', ins[1],
                             self._weight_layout((f, d[1] // g) + self.kernel))
        if not self.p.no_bias:
            ins[2] = merge_shape(self.op_name, 'bias', ins[2], (f,))
        spatial = []
        for i, (x, p, k, s) in enumerate(zip(d[2:], self.pad, self.dk, self.stride)):
            if x and k > x + 2 * p:
                raise MXNetError('%s: kernel size %d (dilated) exceeds input size %d padded by %d '
                                 'on spatial axis %d' % (self.op_name, k, x, p, i))
            spatial.append((x + 2 * p - k) // s + 1 if x else 0)
        out = cu.shape_to_cf(merge_shape(self.op_name, 'output', outs[0],
                                         cu.shape_from_cf((d[0], f) + tuple(spatial), self.layout)),
                             self.layout)
        back = [out[0], d[1]]
        for x, o, p, k, s in zip(d[2:], out[2:], self.pad, self.dk, self.stride):
            back.append(o + k - 1 - 2 * p if (o and s == 1 and not x) else x)
        ins[0] = merge_shape(self.op_name, 'data', ins[0], cu.shape_from_cf(tuple(back), self.layout))
        outs[0] = cu.shape_from_cf(out, self.layout)
        return ins, outs

    def _channels_last(self, xp, inputs):
        """The channels-last module that computes this convolution, or None: 2-D, one group,
        NCHW or NHWC; float32 on numpy with numba: the compiled kernels (conv_jit.py); else
        kernels up to 3x3 and at least 4 input channels (fewer make column runs too short to
        gain; 5x5 LeNet-style layers measured no faster): numpy's (conv_cl.py)."""
        if not (self.nd == 2 and self.p.num_group == 1 and self.layout in ('NCHW', 'NHWC')):
            return None
        x = inputs[0]
        if xp is numpy and jit.enabled() and conv_jit.applies(x, inputs[1]):
            return conv_jit
        if max(self.kernel) <= 3 and x.shape[1 if self.layout == 'NCHW' else 3] >= 4:
            return conv_cl
        return None

    def _cl_forward(self, xp, mod, inputs):
        x, w = self._cf(inputs[0]), self._cf(inputs[1])
        bias = None if self.p.no_bias else inputs[2].reshape(-1)
        y = mod.forward(xp, x, w, bias, self.stride, self.dilate, self.pad)
        return [cu.from_channel_first(y, self.layout)]

    def _cl_backward(self, octx, mod, need, out_grads, inputs):
        xp = octx.xp
        x, w = self._cf(inputs[0]), self._cf(inputs[1])
        dy = self._cf(out_grads[0])
        need = list(need) + [False] * (3 - len(need))
        args = (self.stride, self.dilate, self.pad)
        if octx.grad_ready is not None and need[0] and (need[1] or need[2]):
            # the weight and bias gradients first, written into their arrays and reported, so
            # that they travel (gradient overlap) while the data gradient is computed
            grads = mod.backward(xp, x, w, dy, [False, need[1], need[2]], *args)
            early = [None, None if grads[1] is None else self._back(grads[1], xp), grads[2]]
            for i in (1, 2):
                if early[i] is not None and _write_into(octx, i, early[i]):
                    early[i] = octx.grad_out[i]
                    octx.grad_ready(i)
            grads = mod.backward(xp, x, w, dy, [True, False, False], *args)[:1] + early[1:]
        else:
            grads = mod.backward(xp, x, w, dy, need, *args)
            grads[1] = None if grads[1] is None else self._back(grads[1], xp)
        out = [None if grads[0] is None else cu.from_channel_first(grads[0], self.layout),
               grads[1]]
        if not self.p.no_bias:
            out.append(grads[2])
        return out

    def _columns(self, xp, x_cf, layout):
        out = [(x + 2 * p - k) // s + 1
               for x, p, k, s in zip(x_cf.shape[2:], self.pad, self.dk, self.stride)]
        xpad = (cu.batch_last(xp, x_cf, self.pad) if layout == 'bl'
                else cu.pad_spatial(xp, x_cf, self.pad))
        return cu.im2col(xp, xpad, self.kernel, self.stride, self.dilate, out, layout)

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        mod = self._channels_last(xp, inputs)
        if mod is not None:
            return self._cl_forward(xp, mod, inputs)
        x, w = self._cf(inputs[0]), self._cf(inputs[1])
        y = conv_apply(xp, self._columns(xp, x, 'nck'), w, self.p.num_group)
        return [self._back(self._add_bias(y, inputs), xp)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        need = octx.need_grad or [True] * len(inputs)
        mod = self._channels_last(xp, inputs)
        if mod is not None:
            return self._cl_backward(octx, mod, need, out_grads, inputs)
        x, w = self._cf(inputs[0]), self._cf(inputs[1])
        dy = self._cf(out_grads[0])
        g = self.p.num_group
        grads = [None, None]
        dyb = None
        if need[0] and dy.shape[2:] == x.shape[2:] and _prod(self.kernel) == 1:
            grads[0] = self._back(pointwise_data_grad(xp, dy, w, g, x.shape), xp)
        elif need[0]:
            dyb = cu.batch_last(xp, dy)
            padded = x.shape[:2] + tuple(n + 2 * p for n, p in zip(x.shape[2:], self.pad))
            dx = cu.col2im(xp, conv_data_cols(xp, dyb, w, g), padded, self.kernel, self.stride,
                           self.dilate, self.pad)
            grads[0] = self._back(dx, xp)
        if need[1] and dyb is not None and dy.shape[-1] <= 16:
            # short output rows: batch-last columns copy in long runs, and dy is batch-last already
            dyg = dyb.reshape(g, dyb.shape[0] // g, -1)
            gw = conv_weight_grad(xp, self._columns(xp, x, 'bl'), dyg, w.shape, g)
            grads[1] = self._back(gw, xp)
        elif need[1]:
            gw = conv_weight_grad(xp, self._columns(xp, x, 'ckn'), filters_first(dy, g), w.shape,
                                  g)
            grads[1] = self._back(gw, xp)
        if not self.p.no_bias:
            grads.append(self._bias_grad(xp, dy) if need[2] else None)
        return grads


@register
class Deconvolution(_ConvBase):
    """Transposed convolution: the data gradient of Convolution used as a forward pass.

    Weight shape (C, num_filter/num_group, *kernel); output size
    stride*(in-1) + dilated_kernel - 2*pad + adj, or ``target_shape`` (pad and adj derived)."""
    op_name = 'Deconvolution'
    params = _conv_params(deconv=True)

    def setup(self):
        super().setup()
        self.adj = cu.expand(self.op_name, 'adj', self.p.adj, self.nd, 0)
        self.target = tuple(self.p.target_shape or ())
        if self.target and len(self.target) != self.nd:
            raise MXNetError('%s: target_shape=%s must have %d entries'
                             % (self.op_name, self.target, self.nd))

    def _pad_adj(self, spatial):
        """(pad, adj) per axis, derived from target_shape when one is set."""
        if not any(self.target):
            return self.pad, self.adj
        pads, adjs = [], []
        for x, s, k, t in zip(spatial, self.stride, self.dk, self.target):
            if not x:               # unknown in partial inference: its output stays unknown
                pads.append(0)
                adjs.append(0)
                continue
            total = s * (x - 1) + k - t
            if total < 0:
                raise MXNetError('%s: target_shape %s is too big for input %s'
                                 % (self.op_name, self.target, tuple(spatial)))
            pads.append((total + 1) // 2)
            adjs.append(total % 2)
        return tuple(pads), tuple(adjs)

    def _out_spatial(self, spatial):
        pad, adj = self._pad_adj(spatial)
        for a, s in zip(adj, self.stride):
            if a >= s:
                raise MXNetError('%s: adj %s must be smaller than stride %s'
                                 % (self.op_name, adj, self.stride))
        return [s * (x - 1) + k - 2 * p + a if x else 0
                for x, s, k, p, a in zip(spatial, self.stride, self.dk, pad, adj)], pad

    def infer_shape(self, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        if ins[0] is None:
            return ins, outs
        d = self._check_data(ins[0])
        g, f = self.p.num_group, self.p.num_filter
        ins[1] = merge_shape(self.op_name, 'weight', ins[1],
                             self._weight_layout((d[1], f // g) + self.kernel))
        if not self.p.no_bias:
            ins[2] = merge_shape(self.op_name, 'bias', ins[2], (f,))
        spatial, _ = self._out_spatial(d[2:])    # per axis: unknown where the input's is
        outs[0] = merge_shape(self.op_name, 'output', outs[0],
                              cu.shape_from_cf((d[0], f) + tuple(spatial), self.layout))
        return ins, outs

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        x, w = self._cf(inputs[0]), self._cf(inputs[1])
        spatial, pad = self._out_spatial(x.shape[2:])
        g, f = self.p.num_group, self.p.num_filter
        # x plays the role of a convolution's output gradient, w of its (C, F/g, *k) weight
        padded = (x.shape[0], f) + tuple(n + 2 * p for n, p in zip(spatial, pad))
        y = cu.col2im(xp, conv_data_cols(xp, cu.batch_last(xp, x), w, g), padded, self.kernel,
                      self.stride, self.dilate, pad)
        return [self._back(self._add_bias(y, inputs), xp)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        need = octx.need_grad or [True] * len(inputs)
        x, w = self._cf(inputs[0]), self._cf(inputs[1])
        dy = self._cf(out_grads[0])
        _, pad = self._out_spatial(x.shape[2:])
        g = self.p.num_group
        grads = [None, None]
        if need[0] or need[1]:
            # the data gradient is the convolution of dy with w; x plays dy's part in the
            # weight gradient of a convolution
            cols = cu.im2col(xp, cu.pad_spatial(xp, dy, pad), self.kernel, self.stride,
                             self.dilate, x.shape[2:])
        if need[0]:
            grads[0] = self._back(conv_apply_ckn(xp, cols, w, g), xp)
        if need[1]:
            grads[1] = self._back(conv_weight_grad(xp, cols, filters_first(x, g), w.shape, g), xp)
        if not self.p.no_bias:
            grads.append(self._bias_grad(xp, dy) if need[2] else None)
        return grads

