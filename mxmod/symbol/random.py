"""``mx.sym.random``: sampling symbols with MXNet's signatures.

Number parameters create the ``_random_<distr>`` operators (shape given, or inferred when
``shape=()``); Symbol parameters create ``_sample_<distr>``, drawing ``shape`` samples per element."""
from ..base import _Null, numeric_types
from .register import create
from .symbol import Symbol

__all__ = ['uniform', 'normal', 'randn', 'poisson', 'exponential', 'gamma', 'multinomial',
           'negative_binomial', 'generalized_negative_binomial', 'shuffle', 'randint',
           'uniform_like', 'normal_like', 'gamma_like', 'exponential_like', 'poisson_like',
           'negative_binomial_like', 'generalized_negative_binomial_like']


def _given(value):
    return value is not _Null and value is not None


def _helper(random_op, sample_op, names, params, shape, dtype, kwargs):
    kwargs = dict(kwargs)
    if _given(dtype):
        kwargs['dtype'] = dtype
    if _given(shape):
        kwargs['shape'] = shape
    if isinstance(params[0], Symbol):
        if sample_op is None or not all(isinstance(v, Symbol) for v in params):
            raise TypeError('%s: distribution parameters must all be numbers%s'
                            % (random_op, '' if sample_op is None else ' or all Symbols'))
        return create(sample_op, sample_op, tuple(params), kwargs)
    if all(isinstance(v, numeric_types) for v in params):
        kwargs.update(zip(names, params))
        return create(random_op, random_op, (), kwargs)
    raise ValueError('Distribution parameters must be either Symbol or numbers, got %s'
                     % [type(v).__name__ for v in params])


def uniform(low=0, high=1, shape=_Null, dtype=_Null, **kwargs):
    """Uniform samples on [low, high) (numbers or Symbols)."""
    return _helper('_random_uniform', '_sample_uniform', ('low', 'high'), [low, high], shape, dtype, kwargs)


def normal(loc=0, scale=1, shape=_Null, dtype=_Null, **kwargs):
    """Normal samples of mean ``loc`` and deviation ``scale``."""
    return _helper('_random_normal', '_sample_normal', ('loc', 'scale'), [loc, scale], shape, dtype, kwargs)


def randn(*shape, **kwargs):
    """Normal samples of shape ``shape`` (``loc``, ``scale``, ``dtype`` as keywords)."""
    loc, scale = kwargs.pop('loc', 0), kwargs.pop('scale', 1)
    dtype = kwargs.pop('dtype', _Null)
    return _helper('_random_normal', '_sample_normal', ('loc', 'scale'), [loc, scale],
                   shape or _Null, dtype, kwargs)


def poisson(lam=1, shape=_Null, dtype=_Null, **kwargs):
    """Poisson samples of rate ``lam``."""
    return _helper('_random_poisson', '_sample_poisson', ('lam',), [lam], shape, dtype, kwargs)


def exponential(scale=1, shape=_Null, dtype=_Null, **kwargs):
    """Exponential samples of scale ``scale``."""
    lam = 1.0 / scale
    return _helper('_random_exponential', '_sample_exponential', ('lam',), [lam], shape, dtype, kwargs)


def gamma(alpha=1, beta=1, shape=_Null, dtype=_Null, **kwargs):
    """Gamma samples of shape ``alpha`` and scale ``beta``."""
    return _helper('_random_gamma', '_sample_gamma', ('alpha', 'beta'), [alpha, beta], shape, dtype, kwargs)


def negative_binomial(k=1, p=1, shape=_Null, dtype=_Null, **kwargs):
    """Negative binomial samples (failures before ``k`` successes of probability ``p``)."""
    return _helper('_random_negative_binomial', '_sample_negative_binomial', ('k', 'p'), [k, p],
                   shape, dtype, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=_Null, dtype=_Null, **kwargs):
    """Generalized negative binomial samples of mean ``mu`` and dispersion ``alpha``."""
    return _helper('_random_generalized_negative_binomial', '_sample_generalized_negative_binomial',
                   ('mu', 'alpha'), [mu, alpha], shape, dtype, kwargs)


def multinomial(data, shape=_Null, get_prob=False, dtype='int32', **kwargs):
    """Category indices drawn from the distributions in the last axis of ``data``."""
    params = dict(kwargs, get_prob=get_prob, dtype=dtype)
    if _given(shape):
        params['shape'] = shape
    return create('_sample_multinomial', '_sample_multinomial', (data,), params)


def shuffle(data, **kwargs):
    """``data`` with its first axis randomly permuted."""
    return create('_shuffle', '_shuffle', (data,), dict(kwargs))


def randint(low, high, shape=_Null, dtype=_Null, **kwargs):
    """Integers drawn uniformly from [low, high)."""
    return _helper('_random_randint', None, ('low', 'high'), [low, high], shape, dtype, kwargs)


def _like_function(distr):
    op_name = '_random_%s_like' % distr

    def fn(data=None, *args, **kwargs):
        from ..ndarray.random import like_arguments  # pylint: disable=import-outside-toplevel
        kwargs = like_arguments(op_name, args, kwargs, ('name', 'attr', 'out'))
        return create(op_name, op_name, (data,), kwargs)
    fn.__name__ = distr + '_like'
    fn.__doc__ = ('Symbol drawing %s samples with the shape and dtype of ``data``; the '
                  'distribution parameters follow ``data`` (positionally or as keywords).' % distr)
    return fn


uniform_like = _like_function('uniform')
normal_like = _like_function('normal')
gamma_like = _like_function('gamma')
exponential_like = _like_function('exponential')
poisson_like = _like_function('poisson')
negative_binomial_like = _like_function('negative_binomial')
generalized_negative_binomial_like = _like_function('generalized_negative_binomial')
