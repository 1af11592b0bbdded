"""``mxnet.optimizer.optimizer``: every optimizer, the Updater and the registry in one namespace
(MXNet keeps them in this one module; mxmod splits them by family and re-exports them here)."""
from .base import Optimizer, register, create
from .sgd import SGD, ccSGD, NAG, Signum, SGLD, DCASGD
from .adaptive import Adam, Adamax, Nadam, AdaGrad, RMSProp, AdaDelta, Ftrl, FTML, LAMB, Test
from .updater import Updater, get_updater

__all__ = ['AdaDelta', 'AdaGrad', 'Adam', 'Adamax', 'DCASGD', 'FTML', 'Ftrl', 'NAG', 'Nadam',
           'Optimizer', 'RMSProp', 'SGD', 'SGLD', 'Signum', 'LAMB', 'Test', 'Updater', 'ccSGD',
           'create', 'get_updater', 'register']
