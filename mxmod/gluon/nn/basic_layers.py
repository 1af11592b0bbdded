"""Basic layers of ``mx.gluon.nn``: the containers Sequential and HybridSequential, Dense,
Dropout, Embedding, Flatten, Lambda and HybridLambda (the normalization layers, which MXNet
defines here too, live in norm_layers.py and are re-exported)."""
import warnings

from ... import ndarray as nd
from ... import symbol as sym
from ..block import Block
from ..hybrid_block import HybridBlock
from ..utils import _indent
from .activations import Activation
from .norm_layers import BatchNorm, BatchNormReLU, InstanceNorm, LayerNorm, GroupNorm  # noqa: F401

__all__ = ['Sequential', 'HybridSequential', 'Dense', 'Dropout', 'Embedding', 'BatchNorm',
           'BatchNormReLU', 'InstanceNorm', 'LayerNorm', 'GroupNorm', 'Flatten', 'Lambda',
           'HybridLambda']


def _children_repr(block):
    lines = ['  (%s): %s' % (key, _indent(repr(child), 2))
             for key, child in block._children.items()]
    return '%s(\n%s\n)' % (type(block).__name__, '\n'.join(lines))


def _getitem(block, key):
    layers = list(block._children.values())[key]
    if not isinstance(layers, list):
        return layers
    net = type(block)(prefix=block._prefix)
    with net.name_scope():
        net.add(*layers)
    return net


class Sequential(Block):
    """Run the added blocks one after the other."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks):
        """Append blocks (registered as children '0', '1', ...)."""
        for block in blocks:
            self.register_child(block)

    def forward(self, x):  # pylint: disable=arguments-differ
        for block in self._children.values():
            x = block(x)
        return x

    def __repr__(self):
        return _children_repr(self)

    def __getitem__(self, key):
        return _getitem(self, key)

    def __len__(self):
        return len(self._children)

    def hybridize(self, active=True, **kwargs):
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn("All children of this Sequential layer '%s' are HybridBlocks. Consider "
                          "using HybridSequential for the best performance." % self.prefix,
                          stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(HybridBlock):
    """Run the added HybridBlocks one after the other (hybridizable as a whole)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks):
        """Append HybridBlocks (registered as children '0', '1', ...)."""
        for block in blocks:
            self.register_child(block)

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        for block in self._children.values():
            x = block(x)
        return x

    def __repr__(self):
        return _children_repr(self)

    def __getitem__(self, key):
        return _getitem(self, key)

    def __len__(self):
        return len(self._children)


class Dense(HybridBlock):
    """Fully connected layer: ``activation(dot(x, weight.T) + bias)``.

    Parameters
    ----------
    units : int
        Output size.
    activation : str, optional
        Applied to the output (an Activation child named after it).
    use_bias : bool, default True
    flatten : bool, default True
        Flatten all but the first input axis; False applies the layer to the last axis.
    dtype : str, default 'float32'
    weight_initializer, bias_initializer : Initializer or str
        bias defaults to 'zeros'.
    in_units : int, default 0
        Input size (0: inferred at the first call).
    """

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype='float32',
                 weight_initializer=None, bias_initializer='zeros', in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get('weight', shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + '_') \
                if activation is not None else None

    def hybrid_forward(self, F, x, weight, bias=None):  # pylint: disable=arguments-differ,invalid-name
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name='fwd')
        return self.act(out) if self.act is not None else out

    def __repr__(self):
        shape = self.weight.shape
        return '%s(%s -> %s, %s)' % (type(self).__name__, shape[1] if shape[1] else None,
                                     shape[0], self.act if self.act else 'linear')


class Dropout(HybridBlock):
    """Zero a fraction ``rate`` of the inputs in training mode (scaling the rest by
    ``1 / (1 - rate)``); the identity otherwise.

    Parameters
    ----------
    rate : float
    axes : tuple of int, default ()
        Axes along which one mask value is shared.
    """

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name='fwd', cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return '%s(p = %s, axes=%s)' % (type(self).__name__, self._rate, self._axes)


class Embedding(HybridBlock):
    """Look up rows of a (input_dim, output_dim) table for integer indices.

    Parameters
    ----------
    input_dim, output_dim : int
    dtype : str, default 'float32'
    weight_initializer : Initializer, optional
    sparse_grad : bool, default False
        Give the weight a row_sparse gradient.
    """

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim, 'dtype': dtype,
                        'sparse_grad': sparse_grad}
        self.weight = self.params.get('weight', shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True,
                                      grad_stype='row_sparse' if sparse_grad else 'default')

    def hybrid_forward(self, F, x, weight):  # pylint: disable=arguments-differ,invalid-name
        return F.Embedding(x, weight, name='fwd', **self._kwargs)

    def __repr__(self):
        return '{block_name}({input_dim} -> {output_dim}, {dtype})'.format(
            block_name=type(self).__name__, **self._kwargs)


class Flatten(HybridBlock):
    """Reshape (N, d1, d2, ...) to (N, d1 * d2 * ...)."""

    def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ,invalid-name
        return F.flatten(x)

    def __repr__(self):
        return type(self).__name__


def _function_name(function):
    return getattr(function, '__name__', type(function).__name__)


class Lambda(Block):
    """Wrap a function (or the name of an ``mx.nd`` function) as a Block."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(nd, function):
                raise AssertionError('Function name %s is not found in ndarray.' % function)
            self._func_impl = getattr(nd, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError('Unrecognized function in lambda: %s of type %s'
                             % (function, type(function)))

    def forward(self, *args):  # pylint: disable=arguments-differ
        return self._func_impl(*args)

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, _function_name(self._func_impl))


class HybridLambda(HybridBlock):
    """Wrap ``function(F, x, *args)`` (or the name of an operator of both mx.nd and mx.sym)
    as a HybridBlock."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not (hasattr(nd, function) and hasattr(sym, function)):
                raise AssertionError('Function name %s is not found in symbol/ndarray.'
                                     % function)
            table = {sym: getattr(sym, function), nd: getattr(nd, function)}
            self._func = lambda F, *args: table[F](*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = _function_name(function)
        else:
            raise ValueError('Unrecognized function in lambda: %s of type %s'
                             % (function, type(function)))

    def hybrid_forward(self, F, x, *args):  # pylint: disable=arguments-differ,invalid-name
        return self._func(F, x, *args)

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, self._func_name)
