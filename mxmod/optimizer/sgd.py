"""SGD-family optimizers: SGD (and ccSGD), NAG, Signum, SGLD, DCASGD.

The update arithmetic is that of MXNet's update operators (mxmod.ops.optimizer_kernels), applied
directly to the arrays of the weights and states."""
import math
import os

import numpy as np

from ..base import MXNetError
from ..ndarray.ndarray import NDArray, zeros
from ..ops import optimizer_kernels as K
from .base import Optimizer, register, _warn_float16

__all__ = ['SGD', 'ccSGD', 'NAG', 'Signum', 'SGLD', 'DCASGD', 'check_arrays', 'clip_or_off',
           'data_of', 'aggregation_size']


def check_arrays(optimizer, weight, grad):
    """Raise TypeError unless weight and grad are NDArrays, MXNetError unless they have one
    shape and one dtype (MXNet's update operators do not cast)."""
    if isinstance(weight, NDArray) and isinstance(grad, NDArray):
        if weight.dtype != grad.dtype or weight.shape != grad.shape:
            raise MXNetError('%s.update: the gradient (shape %s, %s) does not match its weight '
                             '(shape %s, %s); MXNet does not cast: give both the same shape and '
                             'dtype' % (type(optimizer).__name__, grad.shape,
                                        np.dtype(grad.dtype).name, weight.shape,
                                        np.dtype(weight.dtype).name))
        return
    for what, arr in (('weight', weight), ('grad', grad)):
        if not isinstance(arr, NDArray):
            raise TypeError('%s.update: %s must be an NDArray, got %s'
                            % (type(optimizer).__name__, what, type(arr).__name__))


def clip_or_off(clip_gradient):
    """The operator's clip_gradient parameter: -1 (off) unless a non-zero bound is set, since
    MXNet only passes ``clip_gradient`` to its update operators when it is truthy."""
    return clip_gradient if clip_gradient else -1.0


def data_of(arr):
    """The array of an NDArray, or None for None."""
    return None if arr is None else arr._data


def _master_state(optimizer, index, weight, name):
    """(momentum state, float32 master copy) for float16 weights with multi_precision on."""
    if optimizer.multi_precision and weight.dtype == np.float16:
        master = weight.astype(np.float32)
        return (optimizer.create_state(index, master), master)
    _warn_float16(weight, optimizer.multi_precision, name)
    return None


def _momentum_state(weight, momentum, stype='default'):
    if momentum != 0.0:
        return zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)
    return None


@register
class SGD(Optimizer):
    """Stochastic gradient descent with momentum and weight decay.

    Without momentum ``w = w - lr*wd*w - lr*clip(rescale_grad*g)``; with momentum
    ``m = momentum*m - lr*wd*w - lr*clip(rescale_grad*g); w += m``. Dense weights are updated
    with the arithmetic of MXNet's aggregated ``multi_sgd*_update`` kernels, as MXNet does.

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    lazy_update : bool, optional
        With a row_sparse gradient, update only its rows (weight, momentum); otherwise every
        row (weight decay reaches all of them).
    **kwargs
        See :class:`Optimizer` (``multi_precision`` keeps float32 master copies of float16
        weights).
    """

    sparse_update_rule = 'lazy_update'

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super(SGD, self).__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = aggregation_size(4)

    def create_state_multi_precision(self, index, weight):
        state = _master_state(self, index, weight, 'SGD')
        return state if state is not None else self.create_state(index, weight)

    def create_state(self, index, weight):
        return _momentum_state(weight, self.momentum,
                               weight.stype if self.lazy_update else 'default')

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        if not isinstance(indices, (tuple, list)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        for weight, grad in zip(weights, grads):
            if type(weight) is not NDArray or type(grad) is not NDArray or \
                    weight._data.shape != grad._data.shape or \
                    weight._data.dtype != grad._data.dtype:
                check_arrays(self, weight, grad)
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        momentum = self.momentum if self.momentum > 0 else 0.0
        clip = clip_or_off(self.clip_gradient)
        rescale = self.rescale_grad
        for weight, grad, state, lr, wd in zip(weights, grads, states, lrs, wds):
            mom, master = (state if multi_precision else (state, None))
            if momentum == 0.0:
                mom = None
            data = weight._data
            new = K.multi_sgd(weight._ctx.xp, data, grad._data, data_of(mom),
                              data_of(master), lr, wd, momentum, rescale, clip,
                              into_weight=True)
            if new is not data:
                data[...] = new

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        first = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and first.dtype == np.float16)


@register
class ccSGD(SGD):  # pylint: disable=invalid-name
    """[DEPRECATED] Same as :class:`SGD`, kept for backward compatibility."""


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient (MXNet's ``nag_mom_update``).

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, momentum=0.0, **kwargs):
        super(NAG, self).__init__(**kwargs)
        self.momentum = momentum

    def create_state_multi_precision(self, index, weight):
        state = _master_state(self, index, weight, 'NAG')
        return state if state is not None else self.create_state(index, weight)

    def create_state(self, index, weight):
        return _momentum_state(weight, self.momentum)

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        momentum = self.momentum if self.momentum > 0 else 0.0
        args = dict(lr=lr, wd=wd, rescale_grad=self.rescale_grad,
                    clip_gradient=clip_or_off(self.clip_gradient))
        xp, w, g = weight.context.xp, weight._data, grad._data
        if not multi_precision:
            if state is not None:
                new = K.nag_mom(xp, w, g, state._data, momentum=momentum, in_place=True,
                                **args)
            else:
                new = K.sgd(xp, w, g, **args)
        elif state[0] is not None:
            new = K.mp_nag_mom(xp, w, g, state[0]._data, state[1]._data, momentum=momentum,
                               **args)
        else:
            new = K.mp_sgd(xp, w, g, state[1]._data, **args)
        w[...] = new

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        use_mp = (self.multi_precision and weight.dtype == np.float16
                  and isinstance(state, (tuple, list)))
        self._update_impl(index, weight, grad, state, multi_precision=use_mp)


@register
class Signum(Optimizer):
    """Signum / signSGD: step by the sign of the (momentum of the) gradient.

    Parameters
    ----------
    learning_rate : float, optional
        The learning rate.
    momentum : float, optional
        Momentum of the gradient average; 0 gives signSGD.
    wd_lh : float, optional
        Decoupled weight decay (Loshchilov & Hutter), applied outside the momentum.
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super(Signum, self).__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        return _momentum_state(weight, self.momentum)

    def _update_impl(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        xp, w, g = weight.context.xp, weight._data, grad._data
        clip = clip_or_off(self.clip_gradient)
        if state is not None:
            w[...] = K.signum(xp, w, g, state._data, lr, self.momentum if self.momentum > 0 else 0.0,
                              wd, self.rescale_grad, clip, self.wd_lh)
        elif self.wd_lh:
            raise MXNetError('Signum: wd_lh=%s needs momentum; signsgd_update (momentum=0) has '
                             'no wd_lh parameter' % self.wd_lh)
        else:
            w[...] = K.signsgd(xp, w, g, lr, wd, self.rescale_grad, clip)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state)


def _clipped_rescaled(optimizer, grad):
    """rescale_grad * grad, clipped when clip_gradient is not None (MXNet's Python-side rule)."""
    xp = grad.context.xp
    g = grad._data * float(optimizer.rescale_grad)
    if optimizer.clip_gradient is not None:
        bound = float(optimizer.clip_gradient)
        g = xp.clip(g, -bound, bound)
    return g


def _gaussian(weight, scale):
    """N(0, scale) noise shaped like ``weight`` from the device's random stream."""
    try:
        from .. import random as _random  # pylint: disable=import-outside-toplevel
    except ImportError:
        _random = None
    if _random is not None and hasattr(_random, 'normal'):
        return _random.normal(0, scale, shape=weight.shape, dtype=weight.dtype,
                              ctx=weight.context)._data
    from ..rng import generator  # pylint: disable=import-outside-toplevel
    noise = generator(weight.context).normal(0, scale, size=weight.shape)
    return noise.astype(weight._data.dtype)


@register
class SGLD(Optimizer):
    """Stochastic Gradient Langevin Dynamics: a half SGD step plus N(0, lr) noise."""

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        w = weight._data
        g = _clipped_rescaled(self, grad)
        w += -lr / 2 * (g + wd * w)
        w += _gaussian(weight, math.sqrt(lr))


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al., 2016).

    Parameters
    ----------
    momentum : float, optional
        The momentum value.
    lamda : float, optional
        Scale of the delay compensation term.
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super(DCASGD, self).__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        return (_momentum_state(weight, self.momentum), weight.copy())

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = _clipped_rescaled(self, grad)
        mom, previous = state
        w, prev = weight._data, previous._data
        step = -lr * (g + wd * w + self.lamda * g * g * (w - prev))
        if mom is not None:
            mom._data *= self.momentum
            mom._data += step
            step = mom._data
        prev[...] = w
        w += step


def aggregation_size(default):
    """MXNET_OPTIMIZER_AGGREGATION_SIZE, or ``default`` when unset."""
    return int(os.getenv('MXNET_OPTIMIZER_AGGREGATION_SIZE', str(default)))
