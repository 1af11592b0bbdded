"""The concrete initializers: constants, random distributions, Xavier/MSRA, orthogonal,
bilinear and LSTM forget-gate biases.

Random values come from the per-device stream of ``mx.random`` (``mxmod.rng``), so
``mx.random.seed`` makes them reproducible."""
import json

import numpy as np

from .. import rng
from ..argcheck import real_number, ArgumentValueError
from ..ndarray import NDArray
from .base import Initializer, register, alias, assign, bilinear_kernel

__all__ = ['Zero', 'One', 'Constant', 'Uniform', 'Normal', 'Orthogonal', 'Xavier', 'MSRAPrelu',
           'Bilinear', 'LSTMBias']


# host draws are made this many values at a time: a large table never needs its float64 draw
# in memory at once (the values are the same as one draw of the whole table)
_DRAW_BLOCK = 1 << 22


def _fill(arr, method, a, b):
    """Fill ``arr`` with ``stream.<method>(a, b)`` draws from its device's stream."""
    stream = rng.generator(arr.context)
    draw = getattr(stream, method)
    if not isinstance(stream, np.random.RandomState) or arr.size <= _DRAW_BLOCK:
        assign(arr, draw(a, b, size=arr.shape))
        return
    host = np.empty(arr.shape, dtype=arr.dtype)
    flat = host.reshape(-1)
    for start in range(0, flat.size, _DRAW_BLOCK):
        stop = min(start + _DRAW_BLOCK, flat.size)
        flat[start:stop] = draw(a, b, size=stop - start)
    assign(arr, host)


def _fill_uniform(arr, low, high):
    """Fill ``arr`` with U(low, high) draws from its device's stream."""
    _fill(arr, 'uniform', low, high)


def _fill_normal(arr, loc, scale):
    """Fill ``arr`` with N(loc, scale^2) draws from its device's stream."""
    _fill(arr, 'normal', loc, scale)


@register
@alias('zeros')
class Zero(Initializer):
    """Initialize weights to 0."""

    def __init__(self):
        super(Zero, self).__init__()

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias('ones')
class One(Initializer):
    """Initialize weights to 1."""

    def __init__(self):
        super(One, self).__init__()

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Initialize weights to a value.

    Parameters
    ----------
    value : float, NDArray or numpy.ndarray
        A scalar, or an array broadcastable to the parameter's shape.
    """

    def __init__(self, value):
        super(Constant, self).__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value

    def dumps(self):
        """JSON ``["constant", {"value": ...}]``; array values are written as nested lists."""
        value = self._kwargs['value']
        if not np.isscalar(value):
            self._kwargs['value'] = (value.asnumpy() if isinstance(value, NDArray)
                                     else np.asarray(value)).tolist()
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Initialize weights from U(-scale, scale).

    Parameters
    ----------
    scale : float, default 0.07
    """

    def __init__(self, scale=0.07):
        super(Uniform, self).__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _fill_uniform(arr, -self.scale, self.scale)


@register
class Normal(Initializer):
    """Initialize weights from N(0, sigma^2).

    Parameters
    ----------
    sigma : float, default 0.01
        Standard deviation.
    """

    def __init__(self, sigma=0.01):
        super(Normal, self).__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _fill_normal(arr, 0, self.sigma)


@register
class Orthogonal(Initializer):
    """Initialize weights as a scaled (semi-)orthogonal matrix (Saxe et al., 2013).

    The weight is viewed as ``(shape[0], prod(shape[1:]))``; a random matrix of that shape is
    replaced by the orthonormal factor of its SVD that has the same shape.

    Parameters
    ----------
    scale : float, default 1.414
    rand_type : {'uniform', 'normal'}, default 'uniform'
        Distribution of the random matrix (U(-1, 1) or N(0, 1)).
    """

    def __init__(self, scale=1.414, rand_type='uniform'):
        super(Orthogonal, self).__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, name, arr):
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        stream = rng.generator(arr.context)
        if self.rand_type == 'uniform':
            tmp = stream.uniform(-1.0, 1.0, size=(nout, nin))
        elif self.rand_type == 'normal':
            tmp = stream.normal(0.0, 1.0, size=(nout, nin))
        else:
            raise ValueError("Orthogonal: rand_type must be 'uniform' or 'normal', got %r "
                             "(initializing %s)" % (self.rand_type, name))
        xp = arr.context.xp
        u, _, v = xp.linalg.svd(tmp, full_matrices=False)  # pylint: disable=invalid-name
        res = u if u.shape == tmp.shape else v
        assign(arr, self.scale * res.reshape(arr.shape))


@register
class Xavier(Initializer):
    """Xavier/Glorot initialization: variance scaled by the fan of the weight.

    With ``fan_in = shape[1] * prod(shape[2:])`` and ``fan_out = shape[0] * prod(shape[2:])``,
    ``factor`` is their mean ('avg'), ``fan_in`` ('in') or ``fan_out`` ('out'), and
    ``scale = sqrt(magnitude / factor)``: values are drawn from U(-scale, scale) ('uniform')
    or N(0, scale^2) ('gaussian').

    Parameters
    ----------
    rnd_type : {'uniform', 'gaussian'}, default 'uniform'
    factor_type : {'avg', 'in', 'out'}, default 'avg'
    magnitude : float, default 3
    """

    def __init__(self, rnd_type='uniform', factor_type='avg', magnitude=3):
        if rnd_type not in ('uniform', 'gaussian') or factor_type not in ('avg', 'in', 'out'):
            raise ArgumentValueError("Xavier: rnd_type must be 'uniform' or 'gaussian' and "
                                     "factor_type 'avg', 'in' or 'out'; got %r, %r"
                                     % (rnd_type, factor_type))
        magnitude = real_number(magnitude, 'Xavier: magnitude', minimum=0)
        super(Xavier, self).__init__(rnd_type=rnd_type, factor_type=factor_type,
                                     magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _scale(self, name, shape):
        if len(shape) < 2:
            raise ValueError('Xavier initializer cannot be applied to vector {0} (shape {1}). '
                             'It requires at least 2D.'.format(name, tuple(shape)))
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factors = {'avg': (fan_in + fan_out) / 2.0, 'in': fan_in, 'out': fan_out}
        if self.factor_type not in factors:
            raise ValueError("Xavier: factor_type must be 'avg', 'in' or 'out', got %r"
                             % (self.factor_type,))
        return np.sqrt(self.magnitude / factors[self.factor_type])

    def _init_weight(self, name, arr):
        scale = self._scale(name, arr.shape)
        if self.rnd_type == 'uniform':
            _fill_uniform(arr, -scale, scale)
        elif self.rnd_type == 'gaussian':
            _fill_normal(arr, 0, scale)
        else:
            raise ValueError("Xavier: rnd_type must be 'uniform' or 'gaussian', got %r"
                             % (self.rnd_type,))


@register
class MSRAPrelu(Xavier):
    """He/MSRA initialization for (P)ReLU networks: Xavier 'gaussian' with
    ``magnitude = 2 / (1 + slope^2)``.

    Parameters
    ----------
    factor_type : {'avg', 'in', 'out'}, default 'avg'
    slope : float, default 0.25
        Initial slope of the PReLU units.
    """

    def __init__(self, factor_type='avg', slope=0.25):
        magnitude = 2. / (1 + slope ** 2)
        super(MSRAPrelu, self).__init__('gaussian', factor_type, magnitude)
        self._kwargs = {'factor_type': factor_type, 'slope': slope}


@register
class Bilinear(Initializer):
    """Initialize a 4-D deconvolution weight with a bilinear-upsampling kernel."""

    def __init__(self):
        super(Bilinear, self).__init__()

    def _init_weight(self, _, arr):
        arr[:] = bilinear_kernel(arr.shape)


@register
class LSTMBias(Initializer):
    """Zero LSTM biases except the forget gate's (second quarter), set to ``forget_bias``.

    Parameters
    ----------
    forget_bias : float, default 1.0
    """

    def __init__(self, forget_bias=1.0):
        super(LSTMBias, self).__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden:2 * num_hidden] = self.forget_bias
