"""``mx.gluon.nn``: Gluon's neural-network layers (containers, dense, normalization,
activation, convolution, pooling and padding layers), imperative and hybridizable."""
from .activations import *  # noqa: F401,F403
from .basic_layers import *  # noqa: F401,F403
from .conv_layers import *  # noqa: F401,F403
from ..block import Block  # noqa: F401
from ..hybrid_block import HybridBlock  # noqa: F401
from ..symbol_block import SymbolBlock  # noqa: F401
