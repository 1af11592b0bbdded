"""Random sampling operators drawing from the device's stream (``octx.rng``, seeded by
``mx.random.seed``).

``_random_<distr>`` take scalar parameters and no inputs; ``_sample_<distr>`` take one array per
parameter and draw ``shape`` samples per element; ``_sample_multinomial``, ``_shuffle`` and
``_sample_unique_zipfian`` (which draw indices or orders) are in random_index.py.
Parameterisations follow MXNet: gamma(alpha=shape, beta=scale), exponential(lam=rate),
negative_binomial(k failures-to-successes, p success probability) and
generalized_negative_binomial(mu mean, alpha dispersion), the latter two as gamma-Poisson
mixtures."""

from ..base import MXNetError, DeferredOpError
from .base import OPS as OPS_BY_NAME, Operator, Param, register, merge_shape

_FLOATS = (None, 'float16', 'float32', 'float64')


# ---- samplers: (xp, rng, size, *parameters broadcastable to size) -> float64 array --------------
def _uniform(xp, rng, size, low, high):
    return low + (high - low) * rng.uniform(0.0, 1.0, size)


def _normal(xp, rng, size, loc, scale):
    return loc + scale * rng.standard_normal(size)


def _gamma(xp, rng, size, alpha, beta):
    return rng.gamma(xp.broadcast_to(xp.asarray(alpha, dtype='float64'), size), 1.0, size) * beta


def _exponential(xp, rng, size, lam):
    return rng.exponential(1.0, size) / lam


def _poisson(xp, rng, size, lam):
    lam = xp.broadcast_to(xp.asarray(lam, dtype='float64'), size)
    return rng.poisson(lam, size).astype('float64')


def _negative_binomial(xp, rng, size, k, p):
    k = xp.asarray(k, dtype='float64')
    p = xp.asarray(p, dtype='float64')
    rate = _gamma(xp, rng, size, k, (1 - p) / p)
    return _poisson(xp, rng, size, rate)


def _generalized_negative_binomial(xp, rng, size, mu, alpha):
    mu = xp.broadcast_to(xp.asarray(mu, dtype='float64'), size)
    alpha = xp.broadcast_to(xp.asarray(alpha, dtype='float64'), size)
    safe = xp.where(alpha > 0, alpha, 1.0)
    rate = xp.where(alpha > 0, _gamma(xp, rng, size, 1.0 / safe, safe * mu), mu)
    return _poisson(xp, rng, size, rate)


# ---- MXNet's checks of the scalar parameters, met when the sampler runs (so reported when the
# result is read): distribution -> [(param, other, relation, text)] -------------------------------
_GT, _GE = ('>', lambda a, b: a > b), ('>=', lambda a, b: a >= b)
_PARAM_CHECKS = {
    'uniform': [('high', 'low', _GE, 'low must be less or equal to high in uniform distribution')],
    'normal': [('scale', 0, _GT, 'scale parameter in gaussian has to be positive')],
    'gamma': [('alpha', 0, _GT, 'alpha parameter in gamma distribution has to be positive'),
              ('beta', 0, _GT, 'beta parameter in gamma distribution has to be positive')],
    'exponential': [('lam', 0, _GT,
                     'lambda parameter in exponential distribution has to be positive')],
    'poisson': [('lam', 0, _GE,
                 'lambda parameter in poisson distribution has to be non-negative')],
    'negative_binomial': [
        ('k', 0, _GE, 'k parameter in negative binomial distribution has to be non-negative'),
        ('p', 0, _GE, 'p parameter in negative binomial distribution has to be non-negative')],
    'generalized_negative_binomial': [
        ('mu', 0, _GE, 'mu parameter in generalized negative binomial distribution has to be '
                       'non-negative'),
        ('alpha', 0, _GE, 'alpha parameter in generalized negative binomial distribution has '
                          'to be non-negative')],
    'randint': [('high', 'low', _GE, 'low must be less or equal to high in uniform distribution')],
}


def _fmt(value):
    return ('%d' % value) if float(value) == int(value) else ('%g' % value)


def check_params(distr, p):
    """Raise MXNet's error (deferred to the read) when a parameter of ``distr`` is invalid."""
    for name, other, (sign, holds), text in _PARAM_CHECKS.get(distr, ()):
        value = getattr(p, name)
        bound = getattr(p, other) if isinstance(other, str) else other
        if not holds(value, bound):
            raise DeferredOpError('Check failed: param.%s %s %s (%s vs. %s) : %s'
                                  % (name, sign, 'param.' + other if isinstance(other, str)
                                     else other, _fmt(value), _fmt(bound), text))


# ---- _random_*: scalar parameters, no inputs ----------------------------------------------------
class _RandomOp(Operator):
    """Base of the input-less samplers: output ``shape`` of dtype ``dtype`` (default float32)."""
    arguments = ()
    backward_uses = ()
    dist_params = ()          # (name, Param) of the distribution
    sampler = None
    dtype_choices = _FLOATS
    default_dtype = 'float32'

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.dist_params:
            cls.params = dict(cls.dist_params, shape=Param('shape', ()), ctx=Param('str?', ''),
                              dtype=Param('dtype?', None, choices=cls.dtype_choices))

    def setup(self):
        self.out_shape = self.p.shape or None    # () means "infer from the consumer"
        self.out_dtype = self.p.dtype or self.default_dtype

    def infer_shape(self, in_shapes, out_shapes):
        out = merge_shape(self.op_name, 'output', self.p.shape or None, out_shapes[0])
        if out is not None and all(out):
            self.out_shape = out
        return [], [out]

    def infer_type(self, in_types, out_types):
        got = out_types[0]
        if got is not None and self.p.dtype is not None and got != self.p.dtype:
            raise MXNetError('%s: output dtype %s does not match the requested dtype %s'
                             % (self.op_name, got, self.p.dtype))
        if got is not None and got not in self.dtype_choices:
            raise MXNetError('%s: output dtype must be one of %s, got %s'
                             % (self.op_name, [c for c in self.dtype_choices if c], got))
        self.out_dtype = got or self.out_dtype
        return [], [self.out_dtype]

    def values(self):
        """The distribution parameters in declaration order."""
        return [getattr(self.p, name) for name, _ in self.dist_params]

    def forward(self, octx, inputs, aux):
        if not self.out_shape:
            raise MXNetError('%s: the output shape is unknown; pass shape=(...)' % self.op_name)
        check_params(self.op_name[len('_random_'):], self.p)
        draw = type(self).sampler(octx.xp, octx.rng, self.out_shape, *self.values())
        return [draw.astype(self.out_dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return []


def _random_op(name, aliases, sampler, **dist):
    cls = type(name, (_RandomOp,), {'op_name': name, 'aliases': aliases,
                                     'sampler': staticmethod(sampler),
                                     'dist_params': tuple(dist.items()),
                                     '__doc__': 'Samples of %s with scalar parameters %s.'
                                                % (name[8:], sorted(dist))})
    return register(cls)


_random_op('_random_uniform', ('uniform', 'random_uniform'), _uniform,
           low=Param('float', 0.0), high=Param('float', 1.0))
_random_op('_random_normal', ('normal', 'random_normal'), _normal,
           loc=Param('float', 0.0), scale=Param('float', 1.0))
_random_op('_random_gamma', ('random_gamma',), _gamma,
           alpha=Param('float', 1.0), beta=Param('float', 1.0))
_random_op('_random_exponential', ('random_exponential',), _exponential, lam=Param('float', 1.0))
_random_op('_random_poisson', ('random_poisson',), _poisson, lam=Param('float', 1.0))
_random_op('_random_negative_binomial', ('random_negative_binomial',), _negative_binomial,
           k=Param('int', 1), p=Param('float', 1.0))
_random_op('_random_generalized_negative_binomial', ('random_generalized_negative_binomial',),
           _generalized_negative_binomial, mu=Param('float', 1.0), alpha=Param('float', 1.0))



# ---- _random_*_like: samples shaped and typed like the input ------------------------------------
class _RandomLikeOp(Operator):
    """Base of the samplers whose output takes the shape and dtype of ``data``."""
    backward_uses = ()
    dist_params = ()
    sampler = None

    def forward(self, octx, inputs, aux):
        data = inputs[0]
        check_params(self.op_name[len('_random_'):-len('_like')], self.p)
        values = [getattr(self.p, name) for name, _ in self.dist_params]
        draw = type(self).sampler(octx.xp, octx.rng, tuple(data.shape), *values)
        return [draw.astype(data.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [octx.xp.zeros_like(out_grads[0])]


def _random_like_op(distr, sampler, base):
    """Register ``_random_<distr>_like`` with the distribution parameters of ``base``."""
    name = '_random_%s_like' % distr
    cls = type(name, (_RandomLikeOp,), {
        'op_name': name, 'aliases': (), 'sampler': staticmethod(sampler),
        'dist_params': base.dist_params, 'params': dict(base.dist_params),
        '__doc__': 'Samples of %s with the shape and dtype of the input.' % distr})
    return register(cls)


for _distr, _sampler in [('uniform', _uniform), ('normal', _normal), ('gamma', _gamma),
                         ('exponential', _exponential), ('poisson', _poisson),
                         ('negative_binomial', _negative_binomial),
                         ('generalized_negative_binomial', _generalized_negative_binomial)]:
    _random_like_op(_distr, _sampler, OPS_BY_NAME['_random_' + _distr])

@register
class RandInt(_RandomOp):
    """Integers drawn uniformly from [low, high) (int32 by default)."""
    op_name = '_random_randint'
    aliases = ('random_randint',)
    dist_params = (('low', Param('int')), ('high', Param('int')))
    dtype_choices = (None, 'int32', 'int64')
    default_dtype = 'int32'

    def forward(self, octx, inputs, aux):
        if not self.out_shape:
            raise MXNetError('%s: the output shape is unknown; pass shape=(...)' % self.op_name)
        check_params('randint', self.p)
        if self.p.high == self.p.low:
            raise DeferredOpError('_random_randint: the range [low, high) = [%d, %d) is empty'
                                  % (self.p.low, self.p.high))
        draw = octx.rng.randint(self.p.low, self.p.high, self.out_shape, dtype='int64')
        return [draw.astype(self.out_dtype)]


# ---- _sample_*: one array per parameter, ``shape`` samples per element --------------------------
class _SampleOp(Operator):
    """Base of the per-element samplers: output shape is ``param.shape + shape``."""
    params = {'shape': Param('shape', ()), 'dtype': Param('dtype?', None, choices=_FLOATS)}
    backward_uses = ()
    sampler = None

    def setup(self):
        self.out_dtype = self.p.dtype or 'float32'

    def _check_shape(self):
        # (checked when shapes are inferred, as MXNet: a symbol may be made)
        if any(d <= 0 for d in self.p.shape or ()):
            raise MXNetError('%s: shape entries must be positive, got %s'
                             % (self.op_name, self.p.shape))

    def infer_shape(self, in_shapes, out_shapes):
        self._check_shape()
        extra = tuple(self.p.shape or ())
        shape = None
        out = out_shapes[0]
        if out is not None and len(out) > len(extra):
            shape = tuple(out[:len(out) - len(extra)])
        for name, s in zip(self.list_arguments(), in_shapes):
            shape = merge_shape(self.op_name, name, shape, s)
        if shape is None:
            return list(in_shapes), [out]
        out = merge_shape(self.op_name, 'output', out, shape + extra)
        return [shape] * len(in_shapes), [out]

    def infer_type(self, in_types, out_types):
        known = [t for t in in_types if t is not None]
        if not known:       # as MXNet: nothing until a parameter's dtype is known
            return list(in_types), list(out_types)
        got = out_types[0]
        if got is not None and self.p.dtype is not None and got != self.p.dtype:
            raise MXNetError('%s: output dtype %s does not match the requested dtype %s'
                             % (self.op_name, got, self.p.dtype))
        self.out_dtype = got or self.out_dtype
        ins = [known[0]] * len(in_types) if known else list(in_types)
        return ins, [self.out_dtype]

    def forward(self, octx, inputs, aux):
        self._check_shape()
        xp = octx.xp
        extra = tuple(self.p.shape or ())
        size = tuple(inputs[0].shape) + extra
        values = [x.astype('float64').reshape(x.shape + (1,) * len(extra)) for x in inputs]
        draw = type(self).sampler(xp, octx.rng, size, *values)
        return [draw.astype(self.out_dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [None] * len(inputs)


def _sample_op(distr, sampler, arguments):
    name = '_sample_' + distr
    cls = type(name, (_SampleOp,), {'op_name': name, 'aliases': ('sample_' + distr,),
                                     'arguments': arguments, 'sampler': staticmethod(sampler),
                                     '__doc__': 'Samples of %s per element of %s.'
                                                % (distr, ', '.join(arguments))})
    return register(cls)


_sample_op('uniform', _uniform, ('low', 'high'))
_sample_op('normal', _normal, ('mu', 'sigma'))
_sample_op('gamma', _gamma, ('alpha', 'beta'))
_sample_op('exponential', _exponential, ('lam',))
_sample_op('poisson', _poisson, ('lam',))
_sample_op('negative_binomial', _negative_binomial, ('k', 'p'))
_sample_op('generalized_negative_binomial', _generalized_negative_binomial, ('mu', 'alpha'))
