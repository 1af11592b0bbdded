"""Contrib SyncBatchNorm: BatchNorm with the batch statistics shared across devices (one process:
the local batch is the whole batch)."""
from ..base import MXNetError
from .accum import acc_sum
from .base import Param, register
from .norm import BatchNorm, _norm_backward   # pylint: disable=protected-access

__all__ = ['SyncBatchNorm']


@register
class SyncBatchNorm(BatchNorm):
    """Batch normalisation over every axis except axis 1, with the batch statistics shared by
    the ``ndev`` devices of one ``key`` (one process here: the local batch is the whole batch).

    As MXNet 1.9.1's contrib SyncBatchNorm: outputs output, mean and var where var is the biased
    batch variance (BatchNorm gives 1/sqrt(var + eps) there); outside training the mean and var
    outputs are zeros. The moving statistics are updated by the training backward pass with the
    biased variance; ``fix_gamma`` sets gamma to 1 in place and gives it a zero gradient."""
    op_name = '_contrib_SyncBatchNorm'
    aliases = ()
    writes_out = False
    params = {'eps': Param('float', 1e-3), 'momentum': Param('float', 0.9),
              'fix_gamma': Param('bool', True), 'use_global_stats': Param('bool', False),
              'output_mean_var': Param('bool', False), 'ndev': Param('int', 1),
              'key': Param('str')}

    def setup(self):
        if self.p.ndev < 1:
            raise MXNetError('SyncBatchNorm: ndev must be at least 1, got %d' % self.p.ndev)

    def _axis(self, ndim):
        if ndim < 2:
            raise MXNetError('SyncBatchNorm: data must have at least 2 dimensions (batch, '
                             'channel, ...), got %d' % ndim)
        return 1

    def infer_shape(self, in_shapes, out_shapes):
        if in_shapes[0] is None or 0 in in_shapes[0]:   # MXNet waits for the whole data shape
            return list(in_shapes), list(out_shapes)
        return super().infer_shape(in_shapes, out_shapes)

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        x, gamma, beta = inputs
        if self.p.fix_gamma:
            gamma[...] = 1
        shape, ctype, xc, eps, mean, var = self._statistics(octx, x, gamma, aux)
        if self._batch_mode(octx):
            stats = [mean.astype(ctype, copy=True), var.astype(ctype, copy=True)]
        else:
            stats = [xp.zeros_like(aux[0]), xp.zeros_like(aux[1])]
        scale = (gamma / xp.sqrt(var + eps)).reshape(shape)
        out = (xc - mean.reshape(shape)) * scale + beta.reshape(shape)
        return [out.astype(x.dtype, copy=False)] + stats

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        x, gamma, _ = inputs
        axes, shape = self._views(x)
        ctype = gamma.dtype
        eps = ctype.type(self.p.eps)
        xc = x.astype(ctype, copy=False)
        dy = out_grads[0].astype(ctype, copy=False)
        g = gamma.reshape(shape)
        if self._batch_mode(octx):
            mean, var = outputs[1], outputs[2]
            invstd = 1 / xp.sqrt(var + eps)
            xhat = (xc - mean.reshape(shape)) * invstd.reshape(shape)
            dx = _norm_backward(xp, dy * g, xhat, invstd.reshape(shape), axes)
            if aux and aux[0] is not None:
                mom = self.p.momentum
                aux[0][...] = aux[0] * mom + mean * (1 - mom)
                aux[1][...] = aux[1] * mom + var * (1 - mom)
        else:
            invstd = 1 / xp.sqrt(aux[1] + eps)
            xhat = (xc - aux[0].reshape(shape)) * invstd.reshape(shape)
            dx = dy * g * invstd.reshape(shape)
        dgamma = acc_sum(xp, dy * xhat, axes)
        if self.p.fix_gamma:
            dgamma = xp.zeros_like(dgamma)
        return [dx.astype(x.dtype, copy=False), dgamma, acc_sum(xp, dy, axes)]
