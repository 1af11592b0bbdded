"""LAMB (layer-wise adaptive moments for large batches).

A single weight goes through MXNet's ``lamb_update_phase1``/``phase2`` arithmetic; a list of
weights (what the Updater passes when aggregating) through that of its ``multi_lamb_update``
kernels, which round differently and, with multi_precision, also update the float32 master copy
(the single-weight path of MXNet 1.9.1 leaves it untouched)."""
import numpy as np

from ..ops import optimizer_kernels as K
from .adaptive import _zeros_like
from .base import Optimizer, register
from .sgd import check_arrays, clip_or_off, aggregation_size

__all__ = ['LAMB']


@register
class LAMB(Optimizer):
    """LAMB (You et al., 2019): Adam directions scaled per layer by ||w|| / ||direction||.

    Parameters
    ----------
    learning_rate : float, optional
    beta1, beta2 : float, optional
    epsilon : float, optional
    lower_bound, upper_bound : float, optional
        Bounds of the weight norm used in the trust ratio.
    bias_correction : bool, optional
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super(LAMB, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, aggregation_size(45)))

    def create_state(self, index, weight):
        return _zeros_like(weight, 2)

    def _update_one(self, index, weight, grad, state, multi_precision):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        phase1 = dict(beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
                      t=self._index_update_count[index], bias_correction=self.bias_correction,
                      wd=wd, rescale_grad=self.rescale_grad,
                      clip_gradient=clip_or_off(self.clip_gradient))
        bounds = dict(lower_bound=clip_or_off(self.lower_bound),
                      upper_bound=clip_or_off(self.upper_bound))
        xp, w = weight.context.xp, weight._data
        master = state[0]._data if multi_precision else None
        mean, var = state[1] if multi_precision else state
        g = K.lamb_phase1(xp, w, grad._data, mean._data, var._data, weight32=master, **phase1)
        r1 = K.l2norm(xp, master if multi_precision else w)
        r2 = K.l2norm(xp, g)
        w[...] = K.lamb_phase2(xp, w, g, r1, r2, lr, weight32=master, **bounds)

    def _update_many(self, indices, weights, grads, states, multi_precision):
        """The list path: MXNet's aggregated multi-LAMB kernel, tensor by tensor."""
        plans = []
        for index, weight, grad in zip(indices, weights, grads):
            check_arrays(self, weight, grad)
            self._update_count(index)
            plans.append((self._index_update_count[index], self._get_lr(index),
                          self._get_wd(index)))
        for weight, grad, state, (t, lr, wd) in zip(weights, grads, states, plans):
            master = state[0]._data if multi_precision else None
            mean, var = state[1] if multi_precision else state
            weight._data[...] = K.multi_lamb(
                weight.context.xp, weight._data, grad._data, mean._data, var._data, master,
                lr, wd, t, self.beta1, self.beta2, self.epsilon, self.bias_correction,
                self.rescale_grad, clip_or_off(self.clip_gradient),
                clip_or_off(self.lower_bound), clip_or_off(self.upper_bound))

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        if not isinstance(index, (tuple, list)):
            self._update_one(index, weight, grad, state, multi_precision)
        elif self.aggregate_num <= 1:
            if len(index) != 1:
                raise ValueError('LAMB with aggregate_num %d got %d weights at once'
                                 % (self.aggregate_num, len(index)))
            self._update_one(index[0], weight[0], grad[0], state[0], multi_precision)
        else:
            self._update_many(index, weight, grad, state, multi_precision)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        first = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self.multi_precision and first.dtype == np.float16)
