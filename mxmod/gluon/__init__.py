"""``mx.gluon``, the part mxmod implements: the recurrent cells of ``mx.gluon.rnn`` (with their
Parameter and ParameterDict) for building symbolic graphs. Every other part of Gluon (nn, loss,
Trainer, data, model_zoo, imperative NDArray use) raises an MXNetError that says so."""
from . import parameter  # noqa: F401
from .parameter import Parameter, ParameterDict  # noqa: F401
from . import rnn  # noqa: F401
from ..out_of_scope import out_of_scope_error as _out_of_scope_error

__all__ = ['Parameter', 'ParameterDict', 'rnn']


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise _out_of_scope_error('mxmod.gluon', name, 'Parameter, ParameterDict and, in mx.gluon.rnn, '
                              + rnn.COVERED)
