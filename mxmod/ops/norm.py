"""Normalisation layers: BatchNorm, InstanceNorm, LayerNorm, LRN and L2Normalization
(SyncBatchNorm: sync_batchnorm.py)."""
from ..base import MXNetError
from .accum import acc_sum, acc_mean_var
from .base import Operator, Param, register, merge_shape
from . import bn_math
from . import bn_jit
from . import jit

__all__ = ['BatchNorm', 'InstanceNorm', 'LayerNorm', 'LRN', 'L2Normalization']


def _param_type(data_type):
    """dtype of scale/shift/statistics for a data dtype (float32 when data is float16)."""
    return 'float32' if data_type == 'float16' else data_type


def _norm_backward(xp, dy, xhat, invstd, axes):
    """Gradient of x -> xhat = (x - mean(x)) * invstd (biased variance) given d xhat."""
    m = 1
    for a in axes:
        m *= dy.shape[a]
    mean_dy = acc_sum(xp, dy, axes, keepdims=True) / m
    mean_dy_xhat = acc_sum(xp, dy * xhat, axes, keepdims=True) / m
    return (dy - mean_dy - xhat * mean_dy_xhat) * invstd


# ---- BatchNorm --------------------------------------------------------------------------------
@register
class BatchNorm(Operator):
    """Batch normalisation over every axis except ``axis``.

    Training (``is_train`` and not ``use_global_stats``) normalises with the batch mean and biased
    variance; otherwise with ``moving_mean`` / ``moving_var``. As in MXNet 1.9.1 on CPU the moving
    statistics are updated (``moving = moving * momentum + batch * (1 - momentum)``) by the
    training *backward* pass. ``fix_gamma`` sets gamma to 1 (in place, as MXNet does) and gives it
    a zero gradient. Outputs: output, mean, var where var holds 1/sqrt(variance + eps); only
    output is visible unless ``output_mean_var``."""
    op_name = 'BatchNorm'
    params = {'eps': Param('float', 1e-3), 'momentum': Param('float', 0.9),
              'fix_gamma': Param('bool', True), 'use_global_stats': Param('bool', False),
              'output_mean_var': Param('bool', False), 'axis': Param('int', 1),
              'cudnn_off': Param('bool', False), 'min_calib_range': Param('float?', None),
              'max_calib_range': Param('float?', None)}
    arguments = ('data', 'gamma', 'beta')
    outputs = ('output', 'mean', 'var')
    aux_states = ('moving_mean', 'moving_var')
    mirror_cheap = True
    backward_uses = ('inputs', 'outputs')
    backward_outputs = (1, 2)   # mean and 1/std: the output itself is not kept for backward
    writes_out = True           # the compiled kernels write the output into the executor's
                                # buffer, which a following in-place Activation reuses

    def num_visible_outputs(self):
        return 3 if self.p.output_mean_var else 1

    def input_var_attrs(self):
        return {'moving_mean': {'__init__': '["zero", {}]'}, 'moving_var': {'__init__': '["one", {}]'}}

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: from data forwards only; the parameters and statistics are (channels,)
        data = in_shapes[0]
        if data is None:
            return list(in_shapes), list(out_shapes)
        chan = (data[self._axis(len(data))],)
        return [data] + [chan] * (len(in_shapes) - 1), [data] + [chan] * (len(out_shapes) - 1)

    def infer_type(self, in_types, out_types):
        data = in_types[0] or out_types[0]
        if data is None:
            return in_types, out_types
        if data not in ('float16', 'float32', 'float64', 'bfloat16'):
            raise MXNetError('%s: this operation supports floating point types only, not %s'
                             % (self.op_name, data))
        ptype = _param_type(data)
        # gamma, beta and the moving statistics are of the accumulation type (float32 for
        # float16 data), as MXNet requires
        return [data] + [ptype] * (len(in_types) - 1), [data] + [ptype] * (len(out_types) - 1)

    def _axis(self, ndim):
        axis = self.p.axis + ndim if self.p.axis < 0 else self.p.axis
        if not 0 <= axis < ndim:
            raise MXNetError('BatchNorm: axis %d out of range for %d-D data' % (self.p.axis, ndim))
        return axis

    def _views(self, x):
        axis = self._axis(x.ndim)
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        return tuple(i for i in range(x.ndim) if i != axis), shape

    def _batch_mode(self, octx):
        return octx.is_train and not self.p.use_global_stats

    def _statistics(self, octx, x, gamma, aux):
        """(broadcast shape of the per-channel values, compute dtype, x in it, eps in it, mean,
        var): the batch's statistics in training mode, the moving ones otherwise."""
        axes, shape = self._views(x)
        ctype = gamma.dtype
        xc = x.astype(ctype, copy=False)
        if self._batch_mode(octx):
            mean, var = acc_mean_var(octx.xp, xc, axes)
            mean, var = mean.reshape(-1), var.reshape(-1)
        else:
            mean, var = aux[0], aux[1]
        return shape, ctype, xc, ctype.type(self.p.eps), mean, var

    def _fast(self, octx, x, gamma):
        """Batch statistics, data in the statistics' dtype: bn_math's kernels."""
        return (x.dtype == gamma.dtype and x.dtype.kind == 'f' and self._batch_mode(octx)
                and x.size > 0)

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        x, gamma, beta = inputs
        if self.p.fix_gamma:
            gamma[...] = 1
        relu = octx.fused in ('bn_relu', 'bn_relu_fresh')
        if self._fast(octx, x, gamma):
            if jit.enabled() and bn_jit.applies(xp, x, gamma):
                out = octx.out[0] if octx.out and octx.fused != 'bn_relu_fresh' else None
                return list(bn_jit.train_forward(x, gamma, beta, self.p.eps, self._axis(x.ndim),
                                                 out, relu))
            out, mean, invstd = bn_math.train_forward(xp, x, gamma, beta, self.p.eps,
                                                      self._axis(x.ndim))
            return [xp.fmax(out, 0, out=out) if relu else out, mean, invstd]
        if relu:    # fused with a float32 relu: NaN gives 0 (nn.mkldnn_like)
            outs = self._plain_forward(octx, x, gamma, beta, aux)
            return [xp.fmax(outs[0], 0, out=outs[0])] + outs[1:]
        return self._plain_forward(octx, x, gamma, beta, aux)

    def _plain_forward(self, octx, x, gamma, beta, aux):
        xp = octx.xp
        shape, ctype, xc, eps, mean, var = self._statistics(octx, x, gamma, aux)
        invstd = 1 / xp.sqrt(var + eps)
        scale = (gamma * invstd).reshape(shape)
        out = (xc - mean.reshape(shape)) * scale + beta.reshape(shape)
        return [out.astype(x.dtype, copy=False), mean.astype(ctype, copy=True),
                invstd.astype(ctype, copy=False)]

    def _relu_mask(self, octx, inputs, aux, dy):
        """dy times the mask of the fused relu, from the BatchNorm output recomputed (numpy paths:
        the same arithmetic as their forward, so the same mask)."""
        saved = octx.fused, octx.out
        octx.fused = octx.out = None        # the output buffer may hold another value by now
        try:
            y = self.forward(octx, list(inputs), aux)[0]
        finally:
            octx.fused, octx.out = saved
        return dy * (y > 0)

    def backward(self, octx, out_grads, inputs, outputs, aux):
        x, gamma, beta = inputs
        relu = octx.fused in ('bn_relu', 'bn_relu_fresh')
        fast = self._fast(octx, x, gamma) and out_grads[0].dtype == x.dtype
        if fast and jit.enabled() and bn_jit.applies(octx.xp, x, gamma):
            grads = bn_jit.train_backward(x, out_grads[0], gamma, outputs[1], outputs[2],
                                          self._axis(x.ndim), self.p.fix_gamma,
                                          beta if relu else None,
                                          not octx.need_grad or octx.need_grad[0])
            self._update_moving(octx, x, outputs[1], outputs[2], aux)
            return list(grads)
        if relu:
            out_grads = [self._relu_mask(octx, inputs, aux, out_grads[0])]
        if fast:
            grads = bn_math.train_backward(octx.xp, x, out_grads[0], gamma, outputs[1],
                                           outputs[2], self._axis(x.ndim), self.p.fix_gamma)
            self._update_moving(octx, x, outputs[1], outputs[2], aux)
            return list(grads)
        axes, shape = self._views(x)
        ctype = gamma.dtype
        xc = x.astype(ctype, copy=False)
        dy = out_grads[0].astype(ctype, copy=False)
        mean, invstd = outputs[1], outputs[2]
        xhat = (xc - mean.reshape(shape)) * invstd.reshape(shape)
        dgamma = acc_sum(octx.xp, dy * xhat, axes)
        dbeta = acc_sum(octx.xp, dy, axes)
        g = gamma.reshape(shape)
        if self.p.use_global_stats:
            dx = dy * g * invstd.reshape(shape)
        else:
            dx = _norm_backward(octx.xp, dy * g, xhat, invstd.reshape(shape), axes)
            self._update_moving(octx, x, mean, invstd, aux)
        if self.p.fix_gamma:
            dgamma = octx.xp.zeros_like(dgamma)
        return [dx.astype(x.dtype, copy=False), dgamma, dbeta]

    def _update_moving(self, octx, x, mean, invstd, aux):
        if not aux or aux[0] is None:
            return
        mom = self.p.momentum
        var = 1 / (invstd * invstd) - invstd.dtype.type(self.p.eps)
        aux[0][...] = aux[0] * mom + mean * (1 - mom)
        aux[1][...] = aux[1] * mom + var * (1 - mom)


# ---- InstanceNorm / LayerNorm -----------------------------------------------------------------
@register
class InstanceNorm(Operator):
    """Normalise each (instance, channel) over its spatial axes; per-channel ``gamma``/``beta``."""
    op_name = 'InstanceNorm'
    params = {'eps': Param('float', 1e-3)}
    arguments = ('data', 'gamma', 'beta')
    outputs = ('output', 'mean', 'var')
    backward_uses = ('inputs', 'outputs')

    def num_visible_outputs(self):
        return 1

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: from data forwards only; MXNet reads data's channel axis even when data's
        # shape is unknown, and fails
        data = in_shapes[0]
        if data is None or len(data) < 2:
            raise MXNetError('InstanceNorm: data must have a batch and a channel axis, got %s'
                             % ('an unknown shape' if data is None else tuple(data),))
        chan = (data[1],)
        stat = tuple(data[:2])
        return [data, chan, chan], [data, stat, stat]

    def forward(self, octx, inputs, aux):
        x, gamma, beta = inputs
        axes = tuple(range(2, x.ndim))
        shape = (1, -1) + (1,) * (x.ndim - 2)
        mean, var = acc_mean_var(octx.xp, x, axes)
        xhat = (x - mean) / octx.xp.sqrt(var + x.dtype.type(self.p.eps))
        out = xhat * gamma.reshape(shape) + beta.reshape(shape)
        return [out, mean.reshape(x.shape[:2]), var.reshape(x.shape[:2])]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        x, gamma, _ = inputs
        axes = tuple(range(2, x.ndim))
        shape = (1, -1) + (1,) * (x.ndim - 2)
        stat = x.shape[:2] + (1,) * (x.ndim - 2)
        invstd = 1 / octx.xp.sqrt(outputs[2].reshape(stat) + x.dtype.type(self.p.eps))
        xhat = (x - outputs[1].reshape(stat)) * invstd
        dy = out_grads[0]
        dx = _norm_backward(octx.xp, dy * gamma.reshape(shape), xhat, invstd, axes)
        xp = octx.xp
        return [dx, acc_sum(xp, dy * xhat, (0,) + axes), acc_sum(xp, dy, (0,) + axes)]


@register
class LayerNorm(Operator):
    """Normalise over ``axis`` with ``gamma``/``beta`` of that axis' size. Outputs output, mean,
    std (std = sqrt(var + eps)); mean/std visible with ``output_mean_var``."""
    op_name = 'LayerNorm'
    params = {'axis': Param('int', -1), 'eps': Param('float', 1e-5),
              'output_mean_var': Param('bool', False)}
    arguments = ('data', 'gamma', 'beta')
    outputs = ('output', 'mean', 'std')
    mirror_cheap = True
    backward_uses = ('inputs', 'outputs')

    def num_visible_outputs(self):
        return 3 if self.p.output_mean_var else 1

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]          # as MXNet: from data forwards only
        if data is None:
            return list(in_shapes), list(out_shapes)
        axis = self.p.axis % len(data)
        chan = (data[axis],)
        stat = tuple(1 if i == axis else d for i, d in enumerate(data))
        return ([data, merge_shape(self.op_name, 'gamma', in_shapes[1], chan),
                 merge_shape(self.op_name, 'beta', in_shapes[2], chan)], [data, stat, stat])

    def _shape(self, x):
        axis = self.p.axis % x.ndim
        shape = [1] * x.ndim
        shape[axis] = -1
        return axis, shape

    def forward(self, octx, inputs, aux):
        x, gamma, beta = inputs
        axis, shape = self._shape(x)
        mean, var = acc_mean_var(octx.xp, x, axis)
        std = octx.xp.sqrt(var + x.dtype.type(self.p.eps))
        out = (x - mean) / std * gamma.reshape(shape) + beta.reshape(shape)
        return [out, mean, std]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        x, gamma, _ = inputs
        axis, shape = self._shape(x)
        invstd = 1 / outputs[2]
        xhat = (x - outputs[1]) * invstd
        dy = out_grads[0]
        other = tuple(i for i in range(x.ndim) if i != axis)
        dx = _norm_backward(octx.xp, dy * gamma.reshape(shape), xhat, invstd, (axis,))
        return [dx, acc_sum(octx.xp, dy * xhat, other), acc_sum(octx.xp, dy, other)]


# ---- LRN / L2Normalization --------------------------------------------------------------------
def _channel_window_sum(xp, a, nsize):
    """Sum over a window of ``nsize`` channels centred on each channel (zero padded)."""
    half = nsize // 2
    padded = xp.pad(a, [(0, 0), (half, nsize - 1 - half)] + [(0, 0)] * (a.ndim - 2))
    csum = xp.cumsum(padded, axis=1)
    zero = xp.zeros_like(csum[:, :1])
    csum = xp.concatenate([zero, csum], axis=1)
    c = a.shape[1]
    return csum[:, nsize:nsize + c] - csum[:, :c]


@register
class LRN(Operator):
    """Local response normalisation across channels:
    out = x * (knorm + alpha / nsize * sum_window(x^2)) ^ -beta."""
    op_name = 'LRN'
    params = {'alpha': Param('float', 1e-4), 'beta': Param('float', 0.75),
              'knorm': Param('float', 2.0), 'nsize': Param('int')}
    outputs = ('output', 'tmp_norm')
    mirror_cheap = True
    backward_uses = ('inputs', 'outputs')

    def setup(self):
        if self.p.nsize < 1 or self.p.nsize % 2 != 1:
            raise MXNetError('LRN only supports odd values for nsize (local size), got %d'
                             % self.p.nsize)

    def num_visible_outputs(self):
        return 1

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]          # as MXNet: from a fully known data forwards only
        if data is None or 0 in data:
            return list(in_shapes), list(out_shapes)
        return [data], [data, data]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        t = x.dtype.type
        norm = _channel_window_sum(octx.xp, x * x, self.p.nsize) * t(self.p.alpha / self.p.nsize) \
            + t(self.p.knorm)
        return [x * norm ** t(-self.p.beta), norm]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        x, norm, dy = inputs[0], outputs[1], out_grads[0]
        t = x.dtype.type
        inner = _channel_window_sum(octx.xp, dy * x * norm ** t(-self.p.beta - 1), self.p.nsize)
        coef = t(2 * self.p.beta * self.p.alpha / self.p.nsize)
        return [dy * norm ** t(-self.p.beta) - coef * x * inner]


@register
class L2Normalization(Operator):
    """Divide by the L2 norm over all non-batch axes ('instance'), over axis 1 ('channel') or over
    the spatial axes 2.. ('spatial'): out = x / sqrt(sum(x^2) + eps)."""
    op_name = 'L2Normalization'
    params = {'eps': Param('float', 1e-10),
              'mode': Param('str', 'instance', choices=('instance', 'spatial', 'channel'))}
    outputs = ('output', 'norm')
    mirror_cheap = True
    backward_uses = ('outputs',)

    def num_visible_outputs(self):
        return 1

    def _axes(self, ndim):
        if self.p.mode == 'instance':
            return tuple(range(1, ndim))
        if self.p.mode == 'channel':
            return (1,)
        return tuple(range(2, ndim))

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: from data forwards only; MXNet reads data's dims even when its shape is
        # unknown, and fails
        data = in_shapes[0]
        if data is None or (self.p.mode != 'instance' and len(data) < 3):
            raise MXNetError('L2Normalization: data must have %s, got %s'
                             % ('a batch axis' if self.p.mode == 'instance' else
                                'at least 3 dimensions in %s mode' % self.p.mode,
                                'an unknown shape' if data is None else tuple(data)))
        axes = self._axes(len(data))
        norm = tuple(d for i, d in enumerate(data) if i not in axes)
        return [data], [data, norm]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        axes = self._axes(x.ndim)
        norm = octx.xp.sqrt((x * x).sum(axis=axes, keepdims=True) + x.dtype.type(self.p.eps))
        keep = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return [x / norm, norm.reshape(keep)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        y, dy = outputs[0], out_grads[0]
        axes = self._axes(y.ndim)
        shape = tuple(1 if i in axes else d for i, d in enumerate(y.shape))
        norm = outputs[1].reshape(shape)
        return [(dy - y * (dy * y).sum(axis=axes, keepdims=True)) / norm]
