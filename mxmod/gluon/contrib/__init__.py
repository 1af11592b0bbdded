"""``mx.gluon.contrib``: the part mxmod implements is ``contrib.nn`` (Concurrent,
HybridConcurrent, Identity, SparseEmbedding, PixelShuffle1D/2D/3D). Its rnn, cnn, data and
estimator packages raise an MXNetError that says so."""
from . import nn  # noqa: F401
from ...out_of_scope import out_of_scope_error as _out_of_scope_error

__all__ = ['nn']


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise _out_of_scope_error('mxmod.gluon.contrib', name, 'nn (%s)' % ', '.join(nn.__all__))
