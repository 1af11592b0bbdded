"""``mx.nd.random``: imperative sampling with MXNet's signatures.

Scalar distribution parameters call the ``_random_<distr>`` operators on ``ctx``; NDArray parameters
call ``_sample_<distr>``, drawing ``shape`` samples per element on the parameters' device."""
from ..base import numeric_types
from ..context import as_context
from .ndarray import NDArray
from .register import invoke

try:
    from ..base import _Null
except ImportError:  # mxmod.base has no _Null sentinel (yet)
    class _NullType(object):
        """Placeholder for an argument that was not given."""

        def __repr__(self):
            return '_Null'

    _Null = _NullType()

__all__ = ['uniform', 'normal', 'randn', 'poisson', 'exponential', 'gamma', 'multinomial',
           'negative_binomial', 'generalized_negative_binomial', 'shuffle', 'randint']


def _given(value):
    return value is not _Null and value is not None


def _random_helper(random_op, sample_op, names, params, shape, dtype, ctx, out, kwargs):
    """Dispatch to the scalar (``random_op``) or per-element (``sample_op``) sampler."""
    kwargs = dict(kwargs)
    if _given(dtype):
        kwargs['dtype'] = dtype
    elif out is not None and random_op != '_random_randint':
        kwargs['dtype'] = out.dtype
    if isinstance(params[0], NDArray):
        if sample_op is None or not all(isinstance(v, NDArray) for v in params):
            raise TypeError('%s: distribution parameters must all be numbers%s, got %s'
                            % (random_op, '' if sample_op is None else ' or all NDArrays',
                               [type(v).__name__ for v in params]))
        if _given(shape):
            kwargs['shape'] = shape
        return invoke(sample_op, list(params), dict(kwargs, out=out))
    if isinstance(params[0], numeric_types):
        if not all(isinstance(v, numeric_types) for v in params):
            raise TypeError('%s: distribution parameters must all have the same type, got %s'
                            % (random_op, [type(v).__name__ for v in params]))
        if not _given(shape):
            shape = out.shape if out is not None else (1,)
        kwargs.update(zip(names, params))
        kwargs.update(shape=shape, ctx=as_context(ctx), out=out)
        return invoke(random_op, [], kwargs)
    raise ValueError('Distribution parameters must be either NDArray or numbers, but got %s.'
                     % type(params[0]))


def uniform(low=0, high=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw samples from a uniform distribution on [low, high).

    Parameters
    ----------
    low, high : float or NDArray
        Bounds; NDArrays draw ``shape`` samples for each of their elements.
    shape : int or tuple of ints, optional
        Sample shape (default 1 for scalar bounds).
    dtype : {'float16', 'float32', 'float64'}, optional
        Default float32.
    ctx : Context, optional
        Device for scalar bounds (default: the current context).
    out : NDArray, optional
        Store the result here.

    Returns
    -------
    NDArray
    """
    return _random_helper('_random_uniform', '_sample_uniform', ('low', 'high'), [low, high],
                          shape, dtype, ctx, out, kwargs)


def normal(loc=0, scale=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw samples from a normal distribution with mean ``loc`` and deviation ``scale``.

    Parameters are as for :func:`uniform`.
    """
    return _random_helper('_random_normal', '_sample_normal', ('loc', 'scale'), [loc, scale],
                          shape, dtype, ctx, out, kwargs)


def randn(*shape, **kwargs):
    """Draw normal samples of shape ``shape`` (``loc`` and ``scale``, numbers or NDArrays, and
    ``dtype``, ``ctx``, ``out`` may be given as keywords).

    Returns
    -------
    NDArray
    """
    loc = kwargs.pop('loc', 0)
    scale = kwargs.pop('scale', 1)
    dtype = kwargs.pop('dtype', _Null)
    ctx = kwargs.pop('ctx', None)
    out = kwargs.pop('out', None)
    for value in (loc, scale):
        if not isinstance(value, numeric_types + (NDArray,)):
            raise TypeError('randn: loc and scale must be numbers or NDArrays, got %s'
                            % type(value).__name__)
    return _random_helper('_random_normal', '_sample_normal', ('loc', 'scale'), [loc, scale],
                          shape or _Null, dtype, ctx, out, kwargs)


def poisson(lam=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw samples from a Poisson distribution of rate ``lam`` (returned as floats).

    Parameters are as for :func:`uniform`.
    """
    return _random_helper('_random_poisson', '_sample_poisson', ('lam',), [lam], shape, dtype,
                          ctx, out, kwargs)


def exponential(scale=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw samples from an exponential distribution of scale ``scale`` (rate 1/scale).

    Parameters are as for :func:`uniform`.
    """
    return _random_helper('_random_exponential', '_sample_exponential', ('lam',), [1.0 / scale],
                          shape, dtype, ctx, out, kwargs)


def gamma(alpha=1, beta=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw samples from a gamma distribution of shape ``alpha`` and scale ``beta``.

    Parameters are as for :func:`uniform`.
    """
    return _random_helper('_random_gamma', '_sample_gamma', ('alpha', 'beta'), [alpha, beta],
                          shape, dtype, ctx, out, kwargs)


def negative_binomial(k=1, p=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw the number of failures before ``k`` successes of probability ``p`` (as floats).

    Parameters are as for :func:`uniform`.
    """
    return _random_helper('_random_negative_binomial', '_sample_negative_binomial', ('k', 'p'),
                          [k, p], shape, dtype, ctx, out, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=_Null, dtype=_Null, ctx=None, out=None,
                                  **kwargs):
    """Draw from a negative binomial of mean ``mu`` and dispersion ``alpha`` (as floats).

    Parameters are as for :func:`uniform`.
    """
    return _random_helper('_random_generalized_negative_binomial',
                          '_sample_generalized_negative_binomial', ('mu', 'alpha'), [mu, alpha],
                          shape, dtype, ctx, out, kwargs)


def multinomial(data, shape=_Null, get_prob=False, out=None, dtype='int32', **kwargs):
    """Draw category indices from the distributions in the last axis of ``data``.

    Parameters
    ----------
    data : NDArray
        Probabilities, shape ``(k,)`` or ``(n1, ..., k)``; each row sums to 1.
    shape : int or tuple of ints, optional
        Samples per distribution.
    get_prob : bool, default False
        Also return the log-probability of each draw.
    out : NDArray, optional
    dtype : str, default 'int32'

    Returns
    -------
    NDArray or list of NDArray
    """
    params = dict(kwargs, get_prob=get_prob, dtype=dtype, out=out)
    if _given(shape):
        params['shape'] = shape
    return invoke('_sample_multinomial', [data], params)


def shuffle(data, **kwargs):
    """Return ``data`` with its first axis randomly permuted.

    Parameters
    ----------
    data : NDArray

    Returns
    -------
    NDArray
    """
    return invoke('_shuffle', [data], dict(kwargs))


def randint(low, high, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Draw integers uniformly from [low, high).

    Parameters
    ----------
    low, high : int
    shape : int or tuple of ints, optional
    dtype : {'int32', 'int64'}, optional
        Default int32.
    ctx : Context, optional
    out : NDArray, optional

    Returns
    -------
    NDArray
    """
    return _random_helper('_random_randint', None, ('low', 'high'), [low, high], shape, dtype,
                          ctx, out, kwargs)


def like_arguments(op_name, args, kwargs, extra):
    """Keyword arguments of a ``*_like`` sampler called as MXNet's generated function:
    ``(data, <distribution parameters in order>, *extra)`` positionally or by name."""
    from ..ops.base import OPS  # pylint: disable=import-outside-toplevel
    names = [n for n, _ in OPS[op_name].dist_params] + list(extra)
    if len(args) > len(names):
        raise TypeError('%s takes at most %d positional arguments after data (%s), got %d'
                        % (op_name, len(names), ', '.join(names), len(args)))
    kwargs = dict(kwargs)
    for key, value in zip(names, args):
        if key in kwargs:
            raise TypeError('%s got multiple values for argument %r' % (op_name, key))
        kwargs[key] = value
    return kwargs


def _like_function(distr):
    op_name = '_random_%s_like' % distr

    def fn(data=None, *args, **kwargs):
        kwargs = like_arguments(op_name, args, kwargs, ('out', 'name'))
        kwargs.pop('name', None)
        return invoke(op_name, [data], kwargs)
    fn.__name__ = distr + '_like'
    fn.__doc__ = ('Draw %s samples with the shape and dtype of ``data``; the distribution '
                  'parameters follow ``data`` (positionally or as keywords), as in MXNet.' % distr)
    return fn


uniform_like = _like_function('uniform')
normal_like = _like_function('normal')
gamma_like = _like_function('gamma')
exponential_like = _like_function('exponential')
poisson_like = _like_function('poisson')
negative_binomial_like = _like_function('negative_binomial')
generalized_negative_binomial_like = _like_function('generalized_negative_binomial')
