"""Normalization layers of ``mx.gluon.nn``: BatchNorm (and BatchNormReLU), InstanceNorm,
LayerNorm and GroupNorm."""
import numpy as np

from ..hybrid_block import HybridBlock

__all__ = ['BatchNorm', 'BatchNormReLU', 'InstanceNorm', 'LayerNorm', 'GroupNorm']


def _kwargs_repr(block, in_channels=True):
    content = ', '.join('%s=%r' % (key, value) for key, value in block._kwargs.items())
    if in_channels:
        channels = block.gamma.shape[0]
        content += ', in_channels=%s' % channels
    return '%s(%s)' % (type(block).__name__, content)


class _BatchNorm(HybridBlock):
    """Batch normalization over every axis but ``axis``; the running statistics are updated
    in training mode (``autograd.record()``) and used otherwise."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, fuse_relu=False, beta_initializer='zeros',
                 gamma_initializer='ones', running_mean_initializer='zeros',
                 running_variance_initializer='ones', in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'axis': axis, 'eps': epsilon, 'momentum': momentum,
                        'fix_gamma': not scale, 'use_global_stats': use_global_stats}
        self.fuse_relu = fuse_relu
        if in_channels != 0:
            self.in_channels = in_channels
        self.gamma = self.params.get('gamma', grad_req='write' if scale else 'null',
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True, differentiable=scale)
        self.beta = self.params.get('beta', grad_req='write' if center else 'null',
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True, differentiable=center)
        self.running_mean = self.params.get('running_mean', grad_req='null',
                                            shape=(in_channels,),
                                            init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get('running_var', grad_req='null',
                                           shape=(in_channels,),
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def cast(self, dtype):
        if np.dtype(dtype).name == 'float16':
            dtype = 'float32'
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):  # pylint: disable=arguments-differ,invalid-name
        out = F.BatchNorm(x, gamma, beta, running_mean, running_var, name='fwd', **self._kwargs)
        return F.relu(out) if self.fuse_relu else out

    def __repr__(self):
        return _kwargs_repr(self).replace('in_channels=0', 'in_channels=None')


class BatchNorm(_BatchNorm):
    """Batch normalization.

    Parameters
    ----------
    axis : int, default 1
        The channel axis.
    momentum : float, default 0.9
    epsilon : float, default 1e-5
    center, scale : bool, default True
        Learn beta / gamma (else they stay 0 / 1).
    use_global_stats : bool, default False
        Always normalize with the running statistics.
    beta_initializer, gamma_initializer, running_mean_initializer,
    running_variance_initializer : Initializer or str
    in_channels : int, default 0
        Number of channels (0: inferred at the first call).
    """

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer='zeros', gamma_initializer='ones',
                 running_mean_initializer='zeros', running_variance_initializer='ones',
                 in_channels=0, **kwargs):
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats, fuse_relu=False,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)


class BatchNormReLU(_BatchNorm):
    """Batch normalization followed by ReLU (same arguments as BatchNorm)."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer='zeros', gamma_initializer='ones',
                 running_mean_initializer='zeros', running_variance_initializer='ones',
                 in_channels=0, **kwargs):
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats, fuse_relu=True,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)


class InstanceNorm(HybridBlock):
    """Normalize each sample and channel over the remaining (spatial) axes.

    Parameters
    ----------
    axis : int, default 1
        The channel axis.
    epsilon : float, default 1e-5
    center : bool, default True
    scale : bool, default False
    beta_initializer, gamma_initializer : Initializer or str
    in_channels : int, default 0
    """

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False, beta_initializer='zeros',
                 gamma_initializer='ones', in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale}
        self._axis = axis
        self._epsilon = epsilon
        self.gamma = self.params.get('gamma', grad_req='write' if scale else 'null',
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get('beta', grad_req='write' if center else 'null',
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, x, gamma, beta):  # pylint: disable=arguments-differ,invalid-name
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name='fwd', eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name='fwd',
                              eps=self._epsilon).swapaxes(1, self._axis)

    def __repr__(self):
        return _kwargs_repr(self)


class LayerNorm(HybridBlock):
    """Normalize each sample over ``axis``, then scale by gamma and shift by beta.

    Parameters
    ----------
    axis : int, default -1
    epsilon : float, default 1e-5
    center, scale : bool, default True
    beta_initializer, gamma_initializer : Initializer or str
    in_channels : int, default 0
    """

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True, beta_initializer='zeros',
                 gamma_initializer='ones', in_channels=0, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale}
        self._axis = axis
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self.gamma = self.params.get('gamma', grad_req='write' if scale else 'null',
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get('beta', grad_req='write' if center else 'null',
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):  # pylint: disable=arguments-differ,invalid-name
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)

    def __repr__(self):
        return _kwargs_repr(self)


class GroupNorm(HybridBlock):
    """Normalize each sample over groups of ``num_groups`` channels (axis 1).

    Parameters
    ----------
    num_groups : int, default 1
    epsilon : float, default 1e-5
    center, scale : bool, default True
    beta_initializer, gamma_initializer : Initializer or str
    """

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer='zeros', gamma_initializer='ones', prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {'eps': epsilon, 'num_groups': num_groups, 'center': center,
                        'scale': scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self.gamma = self.params.get('gamma', grad_req='write' if scale else 'null',
                                     shape=(num_groups,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get('beta', grad_req='write' if center else 'null',
                                    shape=(num_groups,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):  # pylint: disable=arguments-differ,invalid-name
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self):
        return _kwargs_repr(self, in_channels=False)
