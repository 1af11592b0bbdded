"""Large-batch optimizers: LARS (layer-wise adaptive rate scaling) and LBSGD.

LARS follows MXNet's aggregated path (``multi_sum_sq`` + ``multi_lars`` + the preloaded multi-SGD
kernels); LBSGD accumulates gradients over ``batch_scale`` calls and warms its rate up."""
import logging
import math

import numpy as np

from ..argcheck import as_number
from ..ndarray.ndarray import NDArray, zeros
from ..ops import optimizer_kernels as K
from .base import Optimizer, register, _warn_float16
from .sgd import SGD, check_arrays, clip_or_off, data_of

__all__ = ['LARS', 'LBSGD']


def _lars_exempt(name):
    return name.endswith('gamma') or name.endswith('beta') or name.endswith('bias')


def _multi_lars(lr, w_sum_sq, g_sum_sq, wd, eta, eps, rescale_grad):
    """MXNet's multi_lars kernel for one layer (float32 arithmetic)."""
    f = np.float32
    w_norm = np.sqrt(f(w_sum_sq))
    if not (w_norm > 0 and f(g_sum_sq) > 0):
        return f(lr)
    return f(lr) * f(eta) * w_norm / (np.sqrt(f(g_sum_sq)) * f(rescale_grad) + f(wd) * w_norm
                                      + f(eps))


@register
class LARS(SGD):
    """LARS (You et al., 2017): SGD whose rate is scaled per layer by
    ``eta * ||w|| / (||rescale_grad*g|| + wd*||w|| + eps)``; biases, gammas and betas are exempt.

    Parameters
    ----------
    momentum : float, optional
    lazy_update : bool, optional
        No effect on dense arrays.
    eta : float, optional
        LARS coefficient.
    eps : float, optional
        Added to the denominator of the trust ratio.
    momentum_correction : bool, optional
        Scale the momentum by the ratio of the current to the previous learning rate.
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super(LARS, self).__init__(momentum=momentum, lazy_update=lazy_update, **kwargs)
        self.momentum_correction = momentum_correction
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = as_number(self.learning_rate, '%s: lr' % type(self).__name__)
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return self._get_mults(lr, indices, self.lr_mult, 'lr_mult')

    def set_wd_mult(self, args_wd_mult):
        self.wd_mult = {name: 0.0 for name in self.idx2name.values()
                        if not name.endswith('_weight')}
        self.wd_mult.update(self._attr_mults('__wd_mult__'))
        self.wd_mult.update(args_wd_mult)

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        if not isinstance(indices, (tuple, list)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        for weight, grad in zip(weights, grads):
            check_arrays(self, weight, grad)
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        momentum = 0.0
        if self.momentum > 0:
            momentum = self.momentum
            if self.momentum_correction and self.last_lr != 0:
                momentum = self.momentum * (self.cur_lr / self.last_lr)
        for index, weight, grad, state, lr, wd in zip(indices, weights, grads, states, lrs, wds):
            xp = weight.context.xp
            if not _lars_exempt(self.idx2name.get(index, str(index))):
                lr = _multi_lars(lr, K.sum_sq(xp, weight._data), K.sum_sq(xp, grad._data), wd,
                                 self.eta, self.eps, self.rescale_grad)
            mom, master = (state if multi_precision else (state, None))
            if self.momentum <= 0:
                mom = None
            weight._data[...] = K.multi_sgd(xp, weight._data, grad._data, data_of(mom),
                                            data_of(master), lr, wd, momentum,
                                            self.rescale_grad, clip_or_off(self.clip_gradient))


@register
class LBSGD(Optimizer):
    """Large-batch SGD: gradients accumulated over ``batch_scale`` calls, then an SGD step whose
    rate is warmed up ('linear', 'power2', 'sqrt') or scaled by LARS ('lars').

    Parameters
    ----------
    momentum : float, optional
    multi_precision : bool, optional
    warmup_strategy : {'linear', 'power2', 'sqrt', 'lars'}, optional
    warmup_epochs : int, optional
    batch_scale : int, optional
        Number of calls whose gradients make one large batch.
    updates_per_epoch : int, optional
    begin_epoch : int, optional
    num_epochs : int, optional
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy='linear',
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super(LBSGD, self).__init__(**kwargs)
        logging.info('Running Large-Batch SGD Algorithm')
        logging.info('(Batch_scale=%f, warmup_epochs=%d, warmup_strategy=%s, updates_per_epoch=%d)',
                     batch_scale, warmup_epochs, warmup_strategy, updates_per_epoch)
        self.momentum = momentum
        self.multi_precision = multi_precision
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index, weight):
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            momentum = zeros(weight.shape, weight.context, dtype=np.float32) \
                if self.momentum != 0.0 else None
            return (momentum, master)
        _warn_float16(weight, self.multi_precision, 'SGD')
        if self.momentum != 0.0:
            return zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def _get_lbmult(self, nup):
        """Warmup multiplier of the learning rate after ``nup`` accumulated updates."""
        nwup = self.warmup_epochs * self.updates_per_epoch
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        if self.warmup_strategy == 'linear':
            return 1.0 + (maxmult - 1) * nup / nwup
        if self.warmup_strategy == 'power2':
            return 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
        if self.warmup_strategy == 'sqrt':
            return 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
        return 1.0

    def _get_lars(self, weight, g, wd):
        """LARS multiplier sqrt(|w|^2 / (|g|^2 + wd*|w|^2)), clamped to [0.01, 100]."""
        weight2, grad2 = self._l2norm(weight), self._l2norm(g)
        lars = math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18))
        return min(max(lars, 0.01), 100)

    def _l2norm(self, v):
        """Sum of squares (MXNet names it a norm)."""
        data = v._data * v._data
        return float(np.sum(data.get() if hasattr(data, 'get') else data))

    def _reset_cum_gradient(self, index):
        self.cumgrads[index]['cum_grad'] = 0

    def _get_cum_gradient(self, index):
        return self.cumgrads.get(index, {})

    def _put_cum_gradient(self, index, cgrad):
        self.cumgrads[index] = cgrad

    def _cumulate_gradient(self, grad, index):
        cgrad = self._get_cum_gradient(index)
        if cgrad and cgrad['num_cums'] > 0:
            cum_grad, num_cums = cgrad['cum_grad'] + grad, cgrad['num_cums'] + 1
        else:
            cum_grad, num_cums = grad, self.init_updates + 1
        cgrad = {'cum_grad': cum_grad, 'num_cums': num_cums}
        self._put_cum_gradient(index, cgrad)
        return cgrad

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        lr, wd = self._get_lr(index), self._get_wd(index)
        self._update_count(index)
        cgrad = self._cumulate_gradient(grad, index)
        xp, w = weight.context.xp, weight._data
        if cgrad['num_cums'] % self.batch_scale != 0:
            w[...] = K.sgd(xp, w, grad._data, 0.0, wd, 1.0, -1.0)
            return
        grad = cgrad['cum_grad'] / self.batch_scale
        if self.warmup_strategy == 'lars':
            lr *= self._get_lars(weight, grad, wd)
        else:
            lr *= self._get_lbmult(cgrad['num_cums'])
        args = dict(lr=lr, wd=wd, rescale_grad=self.rescale_grad,
                    clip_gradient=clip_or_off(self.clip_gradient))
        momentum = self.momentum if self.momentum > 0 else 0.0
        g = grad._data
        if isinstance(state, (list, tuple)):
            mom, master = state
            if mom is not None:
                w[...] = K.mp_sgd_mom(xp, w, g, mom._data, master._data, momentum=momentum, **args)
            else:
                w[...] = K.mp_sgd(xp, w, g, master._data, **args)
        elif isinstance(state, NDArray):
            w[...] = K.sgd_mom(xp, w, g, state._data, momentum=momentum, **args)
        else:
            w[...] = K.sgd(xp, w, g, **args)
        self._reset_cum_gradient(index)
