"""``mx.gluon``: Parameters and ParameterDicts, Blocks (imperative, hybridizable and made from
Symbols), the layers of ``gluon.nn``, the losses of ``gluon.loss``, ``Trainer``, the helpers of
``gluon.utils``, the recurrent cells of ``gluon.rnn`` (for Symbols), ``gluon.contrib.nn`` and
the ResNets of ``gluon.model_zoo.vision``. ``gluon.data`` (and the rest of ``gluon.contrib``
and ``gluon.model_zoo``) are outside mxmod's scope and raise an MXNetError that says so."""
from . import parameter  # noqa: F401
from .parameter import Parameter, Constant, DeferredInitializationError  # noqa: F401
from .parameter_dict import ParameterDict  # noqa: F401
from .block import Block  # noqa: F401
from .hybrid_block import HybridBlock  # noqa: F401
from .symbol_block import SymbolBlock  # noqa: F401
from . import nn  # noqa: F401
from . import loss  # noqa: F401
from . import utils  # noqa: F401
from .trainer import Trainer  # noqa: F401
from . import rnn  # noqa: F401
from . import contrib  # noqa: F401
from . import model_zoo  # noqa: F401
from ..out_of_scope import out_of_scope_error as _out_of_scope_error

__all__ = ['Parameter', 'Constant', 'DeferredInitializationError', 'ParameterDict', 'Block',
           'HybridBlock', 'SymbolBlock', 'nn', 'loss', 'utils', 'Trainer', 'rnn', 'contrib', 'model_zoo']

COVERED = ('Parameter, Constant, ParameterDict, Block, HybridBlock, SymbolBlock, nn, loss, '
           'Trainer, utils, contrib.nn, the ResNets of model_zoo.vision and the recurrent cells '
           'of rnn (on Symbols)')


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise _out_of_scope_error('mxmod.gluon', name, COVERED)
