"""Adaptive-rate optimizers: Adam, Adamax, Nadam, AdaGrad, RMSProp, AdaDelta, Ftrl, FTML, Test.

Adam, RMSProp, Ftrl and FTML use the arithmetic of MXNet's update operators; AdaGrad,
AdaDelta, Adamax, Nadam and Test repeat the sequence of array operations MXNet's Python code
performs (including its quirks: AdaDelta ignores the learning rate and scales ``grad`` in place,
Nadam's momentum schedule is shared by all weights)."""
import math


from ..ndarray.ndarray import zeros
from ..ops import optimizer_kernels as K
from .base import Optimizer, register
from .sgd import check_arrays, clip_or_off

__all__ = ['Adam', 'Adamax', 'Nadam', 'AdaGrad', 'RMSProp', 'AdaDelta', 'Ftrl', 'FTML', 'Test']


def _zeros_like(weight, count, dtype=None, stype='default'):
    """``count`` zero arrays shaped like weight (its dtype unless ``dtype`` is given)."""
    dtype = weight.dtype if dtype is None else dtype
    return tuple(zeros(weight.shape, weight.context, dtype=dtype, stype=stype)
                 for _ in range(count))


def _python_side_grad(optimizer, weight, grad, wd):
    """rescale_grad*grad + wd*weight, clipped when clip_gradient is not None."""
    xp = weight.context.xp
    g = grad._data * float(optimizer.rescale_grad) + float(wd) * weight._data
    if optimizer.clip_gradient is not None:
        bound = float(optimizer.clip_gradient)
        g = xp.clip(g, -bound, bound)
    return g


@register
class Adam(Optimizer):
    """Adam (Kingma & Ba): bias correction folded into the learning rate, weight decay added to
    the gradient before clipping.

    Parameters
    ----------
    learning_rate : float, optional
    beta1, beta2 : float, optional
        Decay rates of the first and second moment estimates.
    epsilon : float, optional
        Added to the denominator.
    lazy_update : bool, optional
        With a row_sparse gradient, update only its rows (weight, mean, variance).
    **kwargs
        See :class:`Optimizer`.
    """
    sparse_update_rule = 'lazy_update'

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super(Adam, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return _zeros_like(weight, 2, stype=weight.stype if self.lazy_update else 'default')

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr *= math.sqrt(1. - self.beta2 ** t) / (1. - self.beta1 ** t)
        mean, var = state
        weight._data[...] = K.adam(weight.context.xp, weight._data, grad._data, mean._data,
                                   var._data, lr, self.beta1, self.beta2, self.epsilon, wd,
                                   self.rescale_grad, clip_or_off(self.clip_gradient))


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al.): per-coordinate rates from the accumulated squared gradients.

    Parameters
    ----------
    eps : float, optional
        Added to the history before the square root.
    **kwargs
        See :class:`Optimizer`.
    """

    sparse_update_rule = 'always'     # a row_sparse gradient updates its rows only

    def __init__(self, eps=1e-7, **kwargs):
        super(AdaGrad, self).__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context, stype=weight.stype)

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        xp, w, history = weight.context.xp, weight._data, state._data
        g = grad._data * float(self.rescale_grad)
        if self.clip_gradient is not None:
            g = xp.clip(g, -float(self.clip_gradient), float(self.clip_gradient))
        history += g * g
        div = g / xp.sqrt(history + self.float_stable_eps)
        w += (div + w * wd) * -lr


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton's (``centered=False``) or Graves' centered version.

    Parameters
    ----------
    learning_rate : float, optional
    gamma1 : float, optional
        Decay of the moving average of squared gradients.
    gamma2 : float, optional
        Momentum of the centered version.
    epsilon : float, optional
    centered : bool, optional
    clip_weights : float, optional
        Clip the weights to ``[-clip_weights, clip_weights]`` after the update.
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9,
                 epsilon=1e-8, centered=False, clip_weights=None, **kwargs):
        super(RMSProp, self).__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        return tuple(zeros(weight.shape, weight.context, stype=weight.stype)
                     for _ in range(3 if self.centered else 1))

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        args = (lr, self.gamma1)
        tail = (self.epsilon, wd, self.rescale_grad, clip_or_off(self.clip_gradient),
                clip_or_off(self.clip_weights))
        xp, w, g = weight.context.xp, weight._data, grad._data
        if not self.centered:
            w[...] = K.rmsprop(xp, w, g, state[0]._data, *(args + tail))
        else:
            n, g_avg, delta = (s._data for s in state)
            w[...] = K.rmspropalex(xp, w, g, n, g_avg, delta, *(args + (self.gamma2,) + tail))


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler): rates from running averages of squared gradients and updates.

    As in MXNet the learning rate is not used and ``grad`` is scaled by ``rescale_grad`` in
    place.

    Parameters
    ----------
    rho : float, optional
        Decay rate of both running averages.
    epsilon : float, optional
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super(AdaDelta, self).__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context), zeros(weight.shape, weight.context))

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        wd = self._get_wd(index)
        self._update_count(index)
        xp, w = weight.context.xp, weight._data
        grad._data *= float(self.rescale_grad)
        g = grad._data
        if self.clip_gradient is not None:
            g = xp.clip(g, -float(self.clip_gradient), float(self.clip_gradient))
        acc_g, acc_delta = state[0]._data, state[1]._data
        acc_g *= self.rho
        acc_g += (1. - self.rho) * g * g
        delta = xp.sqrt(acc_delta + self.epsilon) / xp.sqrt(acc_g + self.epsilon) * g
        acc_delta *= self.rho
        acc_delta += (1. - self.rho) * delta * delta
        w -= delta + wd * w


@register
class Ftrl(Optimizer):
    """FTRL-proximal (McMahan et al.), MXNet's ``ftrl_update``.

    Parameters
    ----------
    lamda1 : float, optional
        L1 regularization coefficient.
    learning_rate : float, optional
    beta : float, optional
        Per-coordinate learning-rate parameter.
    **kwargs
        See :class:`Optimizer`.
    """

    sparse_update_rule = 'row_sparse_weight'    # lazy when weight and gradient are row_sparse

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super(Ftrl, self).__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return _zeros_like(weight, 2, stype=weight.stype)

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        self._update_count(index)
        wd, lr = self._get_wd(index), self._get_lr(index)
        z, n = state
        weight._data[...] = K.ftrl(weight.context.xp, weight._data, grad._data, z._data, n._data,
                                   lr, self.lamda1, self.beta, wd, self.rescale_grad,
                                   clip_or_off(self.clip_gradient))


@register
class Adamax(Optimizer):
    """AdaMax: Adam with the infinity norm (Kingma & Ba, section 7).

    Parameters
    ----------
    learning_rate : float, optional
    beta1, beta2 : float, optional
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super(Adamax, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return _zeros_like(weight, 2)

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr /= (1. - self.beta1 ** t)
        xp, w = weight.context.xp, weight._data
        g = _python_side_grad(self, weight, grad, wd)
        m_t, u_t = state[0]._data, state[1]._data
        m_t *= self.beta1
        m_t += (1. - self.beta1) * g
        u_t[...] = xp.maximum(self.beta2 * u_t, xp.abs(g))
        w -= lr * m_t / u_t


@register
class Nadam(Optimizer):
    """Nesterov-accelerated Adam (Dozat).

    Parameters
    ----------
    learning_rate : float, optional
    beta1, beta2 : float, optional
    epsilon : float, optional
    schedule_decay : float, optional
        Decay of the momentum warming schedule.
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super(Nadam, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    def create_state(self, index, weight):
        return _zeros_like(weight, 2)

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        xp, w = weight.context.xp, weight._data
        g = _python_side_grad(self, weight, grad, wd)
        momentum_t = self.beta1 * (1. - 0.5 * (pow(0.96, t * self.schedule_decay)))
        momentum_t_1 = self.beta1 * (1. - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        self.m_schedule = self.m_schedule * momentum_t
        m_schedule_next = self.m_schedule * momentum_t_1
        m_t, v_t = state[0]._data, state[1]._data
        m_t *= self.beta1
        m_t += (1. - self.beta1) * g
        v_t *= self.beta2
        v_t += (1. - self.beta2) * g * g
        grad_prime = g / (1. - self.m_schedule)
        m_t_prime = m_t / (1. - m_schedule_next)
        v_t_prime = v_t / (1. - pow(self.beta2, t))
        m_t_bar = (1. - momentum_t) * grad_prime + momentum_t_1 * m_t_prime
        w -= lr * m_t_bar / (xp.sqrt(v_t_prime) + self.epsilon)


@register
class FTML(Optimizer):
    """FTML, Follow the Moving Leader (Zheng & Kwok, 2017), MXNet's ``ftml_update``.

    Parameters
    ----------
    beta1, beta2 : float, optional
    epsilon : float, optional
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super(FTML, self).__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return _zeros_like(weight, 3)

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        d, v, z = (s._data for s in state)
        weight._data[...] = K.ftml(weight.context.xp, weight._data, grad._data, d, v, z, lr,
                                   self.beta1, self.beta2, self.epsilon, t, wd,
                                   self.rescale_grad, clip_or_off(self.clip_gradient))


@register
class Test(Optimizer):
    """The test optimizer: ``w += rescale_grad * grad`` and the state mirrors the weight."""

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context)

    def update(self, index, weight, grad, state):
        weight._data += grad._data * float(self.rescale_grad)
        state._data[...] = weight._data
