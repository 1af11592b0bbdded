"""Activation layers of ``mx.gluon.nn``: Activation, LeakyReLU, PReLU, ELU, SELU, Swish, GELU."""
from ... import initializer
from ..hybrid_block import HybridBlock

__all__ = ['Activation', 'LeakyReLU', 'PReLU', 'ELU', 'SELU', 'Swish', 'GELU']


class Activation(HybridBlock):
    """Apply the activation ``activation`` ('relu', 'sigmoid', 'tanh', 'softrelu',
    'softsign'); the block's name is derived from it (e.g. 'relu0_')."""

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return F.Activation(x, act_type=self._act_type, name='fwd')

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, self._act_type)


class LeakyReLU(HybridBlock):
    """``x`` for x >= 0, ``alpha * x`` below.

    Parameters
    ----------
    alpha : float
        Slope for negative inputs (>= 0).
    """

    def __init__(self, alpha, **kwargs):
        if alpha < 0:
            raise AssertionError('Slope coefficient for LeakyReLU must be no less than 0.')
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return F.LeakyReLU(x, act_type='leaky', slope=self._alpha, name='fwd')

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, self._alpha)


class PReLU(HybridBlock):
    """Leaky ReLU with a learned slope per channel (Parameter 'alpha').

    Parameters
    ----------
    alpha_initializer : Initializer, default Constant(0.25)
    in_channels : int, default 1
        Number of slopes (1: one shared slope).
    """

    def __init__(self, alpha_initializer=initializer.Constant(0.25), in_channels=1, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get('alpha', shape=(in_channels,), init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):  # pylint: disable=arguments-differ,invalid-name
        return F.LeakyReLU(x, gamma=alpha, act_type='prelu', name='fwd')


class ELU(HybridBlock):
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` below."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return F.LeakyReLU(x, act_type='elu', slope=self._alpha)


class SELU(HybridBlock):
    """Scaled exponential linear unit."""

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return F.LeakyReLU(x, act_type='selu', name='fwd')


class GELU(HybridBlock):
    """Gaussian error linear unit (erf form)."""

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return F.LeakyReLU(x, act_type='gelu', name='fwd')


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)``."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return x * F.sigmoid(self._beta * x, name='fwd')
