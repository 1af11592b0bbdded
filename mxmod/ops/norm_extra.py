"""GroupNorm and the legacy BatchNorm_v1.

GroupNorm normalises each group of ``C / num_groups`` channels of every sample over the group's
channels and spatial positions, then scales and shifts per group (gamma, beta of shape
(num_groups,), as in MXNet 1.9). BatchNorm_v1 is MXNet's first BatchNorm: channels on axis 1,
its ``var`` output is the variance (not an inverse deviation), inference reports the moving
statistics as mean/var, and a training backward updates the moving statistics."""
from ..base import MXNetError
from .accum import acc_sum, acc_mean_var
from .base import Operator, Param, register, merge_shape
from .norm import _norm_backward   # pylint: disable=protected-access


@register
class GroupNorm(Operator):
    """Group normalisation; outputs (output, mean, std), mean/std of shape (N, num_groups) and
    visible with ``output_mean_var``."""
    op_name = 'GroupNorm'
    arguments = ('data', 'gamma', 'beta')
    outputs = ('output', 'mean', 'std')
    params = {'num_groups': Param('int', 1), 'eps': Param('float', 1e-5),
              'output_mean_var': Param('bool', False)}
    backward_uses = ('inputs', 'outputs')

    def num_visible_outputs(self):
        return 3 if self.p.output_mean_var else 1

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]          # as MXNet: from data forwards only
        if data is None:
            return in_shapes, out_shapes
        groups = self.p.num_groups
        # (an unknown channel count fails in MXNet too: its -1 is not divisible)
        if len(data) < 3 or not data[1] or data[1] % groups:
            raise MXNetError('GroupNorm: data must be (N, C, ...) with at least 3 dimensions and C '
                             'divisible by num_groups=%d, got %s' % (groups, tuple(data)))
        param = (groups,)
        ins = [data] + [merge_shape(self.op_name, n, s, param)
                        for n, s in zip(('gamma', 'beta'), in_shapes[1:])]
        return ins, [data, (data[0], groups), (data[0], groups)]

    def _grouped(self, x):
        return x.reshape((x.shape[0], self.p.num_groups, -1))

    def _param(self, p):
        return p.reshape(1, self.p.num_groups, 1)

    def forward(self, octx, inputs, aux):
        x, gamma, beta = inputs
        xg = self._grouped(x)
        mean, var = acc_mean_var(octx.xp, xg, 2)
        std = octx.xp.sqrt(var + x.dtype.type(self.p.eps))
        out = (xg - mean) / std * self._param(gamma) + self._param(beta)
        n = x.shape[0]
        return [out.reshape(x.shape), mean.reshape(n, -1), std.reshape(n, -1)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        x, gamma, _ = inputs
        mean, std = (o.reshape(o.shape + (1,)) for o in outputs[1:])
        dy = self._grouped(out_grads[0])
        xhat = (self._grouped(x) - mean) / std
        dgamma = acc_sum(xp, dy * xhat, (0, 2))
        dbeta = acc_sum(xp, dy, (0, 2))
        dx = _norm_backward(xp, dy * self._param(gamma), xhat, 1 / std, (2,))
        return [dx.reshape(x.shape), dgamma, dbeta]


@register
class BatchNormV1(Operator):
    """MXNet's legacy batch normalisation over axis 1 (see the module docstring)."""
    op_name = 'BatchNorm_v1'
    params = {'eps': Param('float', 1e-3), 'momentum': Param('float', 0.9),
              'fix_gamma': Param('bool', True), 'use_global_stats': Param('bool', False),
              'output_mean_var': Param('bool', False)}
    arguments = ('data', 'gamma', 'beta')
    outputs = ('output', 'mean', 'var')
    aux_states = ('moving_mean', 'moving_var')
    backward_uses = ('inputs', 'outputs')

    def num_visible_outputs(self):
        return 3 if self.p.output_mean_var else 1

    def input_var_attrs(self):
        return {'moving_mean': {'__init__': '["zero", {}]'},
                'moving_var': {'__init__': '["one", {}]'}}

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]          # as MXNet: from data forwards only
        if data is None:
            return in_shapes, out_shapes
        if len(data) < 2:
            raise MXNetError('BatchNorm_v1: data must have a batch and a channel axis, got '
                             'shape %s' % (tuple(data),))
        chan = (data[1],)
        names = ('gamma', 'beta', 'moving_mean', 'moving_var')
        ins = [data] + [merge_shape(self.op_name, n, s, chan) for n, s in zip(names, in_shapes[1:])]
        return ins, [data, chan, chan]

    @staticmethod
    def _layout(x):
        shape = [1] * x.ndim
        shape[1] = x.shape[1]
        return tuple(i for i in range(x.ndim) if i != 1), tuple(shape)

    def _batch_mode(self, octx):
        return octx.is_train and not self.p.use_global_stats

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        x, gamma, beta = inputs
        if x.ndim not in (2, 4):
            raise MXNetError('BatchNorm_v1: data must be 2-D (batch, channel) or 4-D (batch, '
                             'channel, y, x), got shape %s' % (x.shape,))
        if self.p.fix_gamma:
            gamma[...] = 1
        axes, shape = self._layout(x)
        if self._batch_mode(octx):
            mean, var = (s.reshape(-1) for s in acc_mean_var(xp, x, axes))
        else:
            mean, var = aux[0].copy(), aux[1].copy()
        scale = gamma / xp.sqrt(var + x.dtype.type(self.p.eps))
        out = (x - mean.reshape(shape)) * scale.reshape(shape) + beta.reshape(shape)
        return [out, mean, var]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        x, gamma, _ = inputs
        axes, shape = self._layout(x)
        mean, var = outputs[1], outputs[2]
        dy = out_grads[0]
        invstd = (1 / xp.sqrt(var + x.dtype.type(self.p.eps))).reshape(shape)
        xhat = (x - mean.reshape(shape)) * invstd
        dgamma = xp.zeros_like(gamma) if self.p.fix_gamma else acc_sum(xp, dy * xhat, axes)
        dbeta = acc_sum(xp, dy, axes)
        g = gamma.reshape(shape)
        if self._batch_mode(octx):
            dx = _norm_backward(xp, dy * g, xhat, invstd, axes)
            if aux and aux[0] is not None:
                mom = x.dtype.type(self.p.momentum)
                aux[0][...] = aux[0] * mom + mean * (1 - mom)
                aux[1][...] = aux[1] * mom + var * (1 - mom)
        else:
            dx = dy * g * invstd
        return [dx, dgamma, dbeta]
