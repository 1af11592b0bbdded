"""``mx.gluon.contrib.nn``: containers that run their children side by side and concatenate
(Concurrent, HybridConcurrent), Identity, SparseEmbedding and the pixel-shuffle upsamplers.
MXNet's SyncBatchNorm (batch statistics shared across devices) is outside mxmod's scope."""
from ... import ndarray as nd
from ..block import Block
from ..hybrid_block import HybridBlock
from ..nn import Sequential, HybridSequential
from ...out_of_scope import out_of_scope_error as _out_of_scope_error

__all__ = ['Concurrent', 'HybridConcurrent', 'Identity', 'SparseEmbedding', 'PixelShuffle1D',
           'PixelShuffle2D', 'PixelShuffle3D']


class Concurrent(Sequential):
    """Feed the input to every child and concatenate their outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):  # pylint: disable=arguments-differ
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """Hybridizable Concurrent."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Return the input unchanged (e.g. as a branch of a HybridConcurrent)."""

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return x


class SparseEmbedding(Block):
    """Embedding whose weight is stored row_sparse and whose gradient is row_sparse; only the
    rows of the batch's indices are pulled (needs a Trainer)."""

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim, 'dtype': dtype,
                        'sparse_grad': True}
        self.weight = self.params.get('weight', shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype='row_sparse', stype='row_sparse')

    def forward(self, x):  # pylint: disable=arguments-differ
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, name='fwd', **self._kwargs)

    def __repr__(self):
        return '{block_name}({input_dim} -> {output_dim}, {dtype})'.format(
            block_name=type(self).__name__, **self._kwargs)


def _factors(factor, count):
    try:
        return (int(factor),) * count
    except TypeError:
        factors = tuple(int(f) for f in factor)
        if len(factors) != count:
            raise AssertionError('wrong length %d' % len(factors)) from None
        return factors


class PixelShuffle1D(HybridBlock):
    """(N, f*C, W) -> (N, C, W*f)."""

    def __init__(self, factor):
        super().__init__()
        self._factor = int(factor)

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))
        x = F.transpose(x, (0, 1, 3, 2))
        return F.reshape(x, (0, 0, -3))

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, self._factor)


class PixelShuffle2D(HybridBlock):
    """(N, f1*f2*C, H, W) -> (N, C, H*f1, W*f2)."""

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 2)

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))
        return F.reshape(x, (0, 0, -3, -3))

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, self._factors)


class PixelShuffle3D(HybridBlock):
    """(N, f1*f2*f3*C, D, H, W) -> (N, C, D*f1, H*f2, W*f3)."""

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 3)

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))
        x = F.swapaxes(x, 2, 3)
        x = F.reshape(x, (0, 0, 0, -4, f1, f2 * f3, 0, 0))
        x = F.reshape(x, (0, 0, -3, 0, 0, 0))
        x = F.swapaxes(x, 3, 4)
        x = F.reshape(x, (0, 0, 0, 0, -4, f2, f3, 0))
        x = F.reshape(x, (0, 0, 0, -3, 0, 0))
        x = F.swapaxes(x, 4, 5)
        return F.reshape(x, (0, 0, 0, 0, -3))

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, self._factors)


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise _out_of_scope_error('mxmod.gluon.contrib.nn', name, ', '.join(__all__))
