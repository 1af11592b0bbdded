"""``mxnet.optimizer.optimizer``: every optimizer, the Updater and the registry in one namespace
(MXNet keeps them in this one module; mxmod splits them by family and re-exports them here)."""
from .base import Optimizer, register, create
from .sgd import SGD, ccSGD, NAG, Signum, SGLD, DCASGD
from .adaptive import Adam, Adamax, Nadam, AdaGrad, RMSProp, AdaDelta, Ftrl, FTML, Test
from .lamb import LAMB
from .large_batch import LARS, LBSGD
from .updater import Updater, get_updater

__all__ = ['AdaDelta', 'AdaGrad', 'Adam', 'Adamax', 'DCASGD', 'FTML', 'Ftrl', 'LARS', 'LBSGD',
           'NAG', 'NDabs', 'Nadam',
           'Optimizer', 'RMSProp', 'SGD', 'SGLD', 'Signum', 'LAMB', 'Test', 'Updater', 'ccSGD',
           'create', 'get_updater', 'register']


def NDabs(data, **kwargs):  # pylint: disable=invalid-name
    """Elementwise absolute value (MXNet exports ``mx.nd.abs`` under this name here)."""
    from .. import ndarray  # pylint: disable=import-outside-toplevel
    return ndarray.abs(data, **kwargs)
