"""Densities of the distributions the samplers draw from: ``_random_pdf_<distr>`` (alias
``random_pdf_<distr>``) for uniform, normal, gamma, exponential, poisson, negative_binomial,
generalized_negative_binomial and dirichlet, with gradients for the sample and the parameters.

Layout (as MXNet 1.9.1): the parameter arrays share one shape ``P``, the leftmost part of the
sample's shape; every sample ``sample[i, ...]`` (for a position ``i`` of ``P``) is scored under the
distribution at ``i``, and the output has the sample's shape. For the Dirichlet the parameter is a
vector: ``alpha`` is ``P + (k,)``, the sample ``P + (..., k)``, the output drops the last axis (a
single 1-D sample gives shape ``(1,)``). ``is_log`` gives the log-density.

Parameterisations: uniform(low, high) (no support check: 1/(high-low) everywhere), normal(mu,
sigma), gamma(alpha shape, beta rate), exponential(lam rate), poisson(lam),
negative_binomial(k, p) with p the success probability of the pmf
``C(x+k-1, x) p^k (1-p)^x``, generalized_negative_binomial(mu, alpha) = negative_binomial(1/alpha,
1/(1 + mu alpha)). Discrete samples get a zero gradient. Values are computed in float64 and
returned in the inputs' dtype."""
import math

import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from . import specfun

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


# ---- log-densities and their partial derivatives -----------------------------------------------
# each entry: (log-density(xp, x, *params), gradient(xp, x, *params) -> (d/dx or None, d/dparam...))
def _uniform_lpdf(xp, x, low, high):
    return xp.broadcast_to(-xp.log(high - low), x.shape)


def _uniform_grad(xp, x, low, high):
    width = xp.broadcast_to(high - low, x.shape)
    return xp.zeros(x.shape), 1.0 / width, -1.0 / width


def _normal_lpdf(xp, x, mu, sigma):
    return -0.5 * ((x - mu) / sigma) ** 2 - xp.log(sigma) - _LOG_SQRT_2PI


def _normal_grad(xp, x, mu, sigma):
    var = sigma * sigma
    diff = x - mu
    return -diff / var, diff / var, (diff * diff - var) / (var * sigma)


def _gamma_lpdf(xp, x, alpha, beta):
    return (alpha * xp.log(beta) + (alpha - 1) * xp.log(x) - beta * x
            - specfun.gammaln(xp, alpha))


def _gamma_grad(xp, x, alpha, beta):
    return ((alpha - 1) / x - beta, xp.log(beta) + xp.log(x) - specfun.digamma(xp, alpha),
            alpha / beta - x)


def _exponential_lpdf(xp, x, lam):
    return xp.log(lam) - lam * x


def _exponential_grad(xp, x, lam):
    return xp.broadcast_to(-lam, x.shape), 1.0 / lam - x


def _poisson_lpdf(xp, x, lam):
    return x * xp.log(lam) - specfun.gammaln(xp, x + 1) - lam


def _poisson_grad(xp, x, lam):
    return None, x / lam - 1


def _nb_lpdf(xp, x, k, p):
    return (specfun.gammaln(xp, x + k) - specfun.gammaln(xp, x + 1) - specfun.gammaln(xp, k)
            + k * xp.log(p) + x * xp.log1p(-p))


def _nb_grad(xp, x, k, p):
    return (None, specfun.digamma(xp, x + k) - specfun.digamma(xp, k) + xp.log(p),
            k / p - x / (1 - p))


def _gnb_lpdf(xp, x, mu, alpha):
    return _nb_lpdf(xp, x, 1.0 / alpha, 1.0 / (mu * alpha + 1.0))


def _gnb_grad(xp, x, mu, alpha):
    den = mu * alpha + 1.0
    _, d_k, d_p = _nb_grad(xp, x, 1.0 / alpha, 1.0 / den)
    # chain rule through k = 1/alpha, p = 1/(mu alpha + 1)
    return None, -d_p * alpha / (den * den), -d_k / (alpha * alpha) - d_p * mu / (den * den)


def _dirichlet_lpdf(xp, x, alpha):
    # x: (..., k), alpha broadcastable to it; reduces the last axis
    total = alpha.sum(axis=-1)
    return (((alpha - 1) * xp.log(x)).sum(axis=-1) + specfun.gammaln(xp, total)
            - specfun.gammaln(xp, alpha).sum(axis=-1))


def _dirichlet_grad(xp, x, alpha):
    total = alpha.sum(axis=-1, keepdims=True)
    return ((alpha - 1) / x,
            xp.log(x) + specfun.digamma(xp, total) - specfun.digamma(xp, alpha))


_DISTRIBUTIONS = [
    # name, parameter names, log-density, gradient, discrete
    ('uniform', ('low', 'high'), _uniform_lpdf, _uniform_grad, False),
    ('normal', ('mu', 'sigma'), _normal_lpdf, _normal_grad, False),
    ('gamma', ('alpha', 'beta'), _gamma_lpdf, _gamma_grad, False),
    ('exponential', ('lam',), _exponential_lpdf, _exponential_grad, False),
    ('poisson', ('lam',), _poisson_lpdf, _poisson_grad, True),
    ('negative_binomial', ('k', 'p'), _nb_lpdf, _nb_grad, True),
    ('generalized_negative_binomial', ('mu', 'alpha'), _gnb_lpdf, _gnb_grad, True),
]


class _PdfOp(Operator):
    """Base of the density operators: inputs ``sample`` then the parameter arrays."""
    params = {'is_log': Param('bool', False)}
    backward_uses = ('inputs', 'outputs')
    lpdf = None
    grad = None
    vector = False           # the Dirichlet: parameters and samples are vectors (last axis)

    # ---- shapes -------------------------------------------------------------------------------
    def _param_shape(self, sample, pshape):
        """Check the parameter shape against the sample's and return the expected one."""
        if len(pshape) > len(sample):
            raise MXNetError('%s: dimension of input samples (%d) must be at least dimension of '
                             'distribution parameters (%d)'
                             % (self.op_name, len(sample), len(pshape)))
        want = tuple(sample[:len(pshape)])
        if self.vector:
            want = want[:-1] + (sample[-1],)
        return want

    def _out_shape(self, sample):
        if not self.vector:
            return tuple(sample)
        return (1,) if len(sample) == 1 else tuple(sample[:-1])

    def infer_shape(self, in_shapes, out_shapes):
        if any(s is None for s in in_shapes):
            return in_shapes, out_shapes
        names = self.list_arguments()
        shapes = list(in_shapes)
        for i in range(2, len(shapes)):
            shapes[i] = merge_shape(self.op_name, names[i], shapes[i], shapes[i - 1])
        want = self._param_shape(shapes[0], shapes[1])
        for i in range(1, len(shapes)):
            shapes[i] = merge_shape(self.op_name, names[i], shapes[i], want)
        out = merge_shape(self.op_name, 'output', out_shapes[0], self._out_shape(shapes[0]))
        return shapes, [out]

    def _check(self, inputs):
        sample = tuple(inputs[0].shape)
        names = self.list_arguments()
        want = self._param_shape(sample, tuple(inputs[1].shape))
        for name, arr in zip(names[1:], inputs[1:]):
            if tuple(arr.shape) != want:
                raise MXNetError('%s: %s must have shape %s (the leading part of the sample shape '
                                 '%s), got %s' % (self.op_name, name, want, sample,
                                                  tuple(arr.shape)))

    # ---- layout: (distributions, samples per distribution[, k]) in float64 --------------------
    def _views(self, xp, inputs):
        sample = xp.asarray(inputs[0], dtype=np.float64)
        pars = [xp.asarray(p, dtype=np.float64) for p in inputs[1:]]
        if self.vector:
            k = sample.shape[-1]
            n = pars[0].size // k if k else 0
            return (sample.reshape(n, -1, k),
                    [p.reshape(n, 1, k) for p in pars])
        n = pars[0].size
        return sample.reshape(n, -1), [p.reshape(n, 1) for p in pars]

    def forward(self, octx, inputs, aux):
        self._check(inputs)
        xp = octx.xp
        sample, pars = self._views(xp, inputs)
        with np.errstate(all='ignore'):
            out = self.lpdf(xp, sample, *pars)
            if not self.p.is_log:
                out = xp.exp(out)
        shape = self._out_shape(tuple(inputs[0].shape))
        return [xp.asarray(out, dtype=inputs[0].dtype).reshape(shape)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        sample, pars = self._views(xp, inputs)
        head = xp.asarray(out_grads[0], dtype=np.float64).reshape(
            sample.shape[:-1] if self.vector else sample.shape)
        if not self.p.is_log:
            head = head * xp.asarray(outputs[0], dtype=np.float64).reshape(head.shape)
        if self.vector:
            head = head[..., None]
        with np.errstate(all='ignore'):
            parts = self.grad(xp, sample, *pars)
        d_sample, d_pars = parts[0], parts[1:]
        dtype = inputs[0].dtype
        if d_sample is None:
            g_sample = xp.zeros(inputs[0].shape, dtype=dtype)
        else:
            g_sample = xp.asarray(head * d_sample, dtype=dtype).reshape(inputs[0].shape)
        grads = [g_sample]
        for d, p in zip(d_pars, inputs[1:]):
            total = (head * d).sum(axis=1)
            grads.append(xp.asarray(total, dtype=p.dtype).reshape(p.shape))
        return grads


def _pdf_op(distr, names, lpdf, grad, vector=False):
    name = '_random_pdf_' + distr
    cls = type(name, (_PdfOp,), {
        'op_name': name, 'aliases': ('random_pdf_' + distr,),
        'arguments': ('sample',) + tuple(names),
        'lpdf': staticmethod(lpdf), 'grad': staticmethod(grad), 'vector': vector,
        '__doc__': 'Density (is_log: log-density) of %s distributions with parameters %s at '
                   '``sample``.' % (distr, ', '.join(names))})
    return register(cls)


for _distr, _names, _lpdf, _grad, _discrete in _DISTRIBUTIONS:
    _pdf_op(_distr, _names, _lpdf, _grad)
_pdf_op('dirichlet', ('alpha',), _dirichlet_lpdf, _dirichlet_grad, vector=True)
