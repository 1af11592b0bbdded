"""``mx.init`` / ``mx.initializer``: parameter initializers, InitDesc and the registry."""
from .base import InitDesc, Initializer, register, alias, create, Load, Mixed  # noqa: F401
from .inits import (Zero, One, Constant, Uniform, Normal, Orthogonal, Xavier,  # noqa: F401
                    MSRAPrelu, Bilinear, LSTMBias)
from .fused_rnn import FusedRNN  # noqa: F401
