"""``mx.init`` / ``mx.initializer``: parameter initializers, InitDesc and the registry."""
from .base import InitDesc, Initializer, register, alias, create, Load, Mixed
from .inits import (Zero, One, Constant, Uniform, Normal, Orthogonal, Xavier,
                    MSRAPrelu, Bilinear, LSTMBias)
from .fused_rnn import FusedRNN

__all__ = ['InitDesc', 'Initializer', 'register', 'alias', 'create', 'Load', 'Mixed', 'Zero',
           'One', 'Constant', 'Uniform', 'Normal', 'Orthogonal', 'Xavier', 'MSRAPrelu',
           'Bilinear', 'LSTMBias', 'FusedRNN']
