"""``mx.optimizer.contrib``: GroupAdaGrad (one adaptive rate per row of a 2-D weight)."""
from ..ndarray.ndarray import zeros
from .base import Optimizer, register
from .sgd import check_arrays

__all__ = ['GroupAdaGrad']


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one history value per row: ``h += mean(g^2, axis=1)``,
    ``w -= lr * g / sqrt(h + eps)``. Weight decay is not supported.

    Parameters
    ----------
    eps : float, optional
        Added to the history before the square root.
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, eps=1e-5, **kwargs):
        super(GroupAdaGrad, self).__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        if len(weight.shape) != 2:
            raise ValueError('GroupAdaGrad needs 2-D weights, got shape %s' % (weight.shape,))
        return zeros((weight.shape[0], 1), weight.context)

    def update(self, index, weight, grad, state):
        check_arrays(self, weight, grad)
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if wd != 0:
            raise ValueError('Weight decay is not supported for GroupAdaGrad (wd=%s for index %r)'
                             % (wd, index))
        xp = weight.context.xp
        g = grad._data * float(self.rescale_grad)
        if self.clip_gradient is not None:
            g = xp.clip(g, -float(self.clip_gradient), float(self.clip_gradient))
        history = state._data
        history += xp.mean(g * g, axis=1, keepdims=True)
        weight._data -= lr * g / xp.sqrt(history + self.float_stable_eps)
