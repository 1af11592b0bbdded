"""The arithmetic of MXNet's optimizer update operators, written once for an array module ``xp``.

Each kernel reproduces the expression order of src/operator/optimizer_op-inl.h so that float32
results round exactly as MXNet's do: operator parameters are C++ ``float`` fields (rounded to
float32 first) and then cast to the weight's dtype; mixed-precision kernels compute in float32.
A kernel returns the new weight and updates its state arrays in place."""
import functools

import numpy as np

from .sgd_blocked import mom_update_into

__all__ = ['scalar', 'clip', 'sgd', 'sgd_mom', 'multi_sgd', 'mp_sgd', 'mp_sgd_mom', 'nag_mom',
           'mp_nag_mom', 'adam', 'rmsprop', 'rmspropalex', 'ftrl', 'ftml', 'signsgd', 'signum',
           'lamb_phase1', 'lamb_phase2', 'mp_lamb_phase1', 'mp_lamb_phase2', 'multi_lamb',
           'sum_sq', 'l2norm']

F32 = np.dtype(np.float32)


def scalar(dtype, value):
    """An operator parameter as the kernel sees it: a C++ float cast to ``dtype``."""
    try:
        return _scalar_cached(dtype, value)
    except TypeError:       # an unhashable value (a 0-d array)
        return _scalar(dtype, value)


def _scalar(dtype, value):
    return np.dtype(dtype).type(np.float32(value))


# the same few (dtype, value) pairs recur on every update of every tensor
_scalar_cached = functools.lru_cache(maxsize=1024)(_scalar)


def scalars(dtype, *values):
    """:func:`scalar` of each value, as a tuple."""
    try:
        return _scalars_cached(dtype, values)
    except TypeError:
        return tuple(_scalar(dtype, v) for v in values)


@functools.lru_cache(maxsize=1024)
def _scalars_cached(dtype, values):
    return tuple(_scalar(dtype, v) for v in values)


def clip(xp, x, bound):
    """mshadow's clip: values beyond +-bound become +-bound."""
    return xp.clip(x, -bound, bound)


def _clipped(xp, x, bound):
    return clip(xp, x, bound) if bound >= 0 else x


def sgd(xp, weight, grad, lr, wd, rescale_grad, clip_gradient):
    """``sgd_update``: w = (1 - lr*wd)*w - lr*clip(rescale*g)."""
    t = weight.dtype
    lr, wd, rg, cg = (scalar(t, v) for v in (lr, wd, rescale_grad, clip_gradient))
    decay = t.type(1) - lr * wd
    if cg >= 0:
        return decay * weight - lr * clip(xp, rg * grad, cg)
    return decay * weight - (lr * rg) * grad


def _mom_step(xp, mom, weight, grad, momentum, lr, wd, rg, cg):
    """The momentum recurrence shared by sgd_mom_update and the multi-SGD kernels.

    With a momentum array of the weight's and gradient's dtype the new momentum is written into
    it, through one scratch array, by the same operations in the same order (so the same
    roundings) as the expression below; the result is then ``mom`` itself."""
    if mom is not None and _inplace_ok(mom, weight, grad):
        _mom_step_into(xp, mom, weight, grad, momentum, lr, wd, rg, cg)
        return mom
    if cg >= 0:
        step = lr * clip(xp, rg * grad, cg)
    else:
        step = (lr * rg) * grad
    if mom is None:
        return -((lr * wd) * weight) - step
    return momentum * mom - (lr * wd) * weight - step


def _inplace_ok(mom, weight, grad):
    return (mom.dtype == weight.dtype == grad.dtype and mom.shape == weight.shape == grad.shape
            and mom.flags.writeable and mom.flags.c_contiguous)


def _mom_step_into(xp, mom, weight, grad, momentum, lr, wd, rg, cg):
    """The new momentum written into ``mom``; returns the scratch array, free for reuse."""
    scratch = xp.multiply(weight, lr * wd)
    xp.multiply(mom, momentum, out=mom)
    xp.subtract(mom, scratch, out=mom)
    if cg >= 0:
        xp.multiply(grad, rg, out=scratch)
        xp.clip(scratch, -cg, cg, out=scratch)
        xp.multiply(scratch, lr, out=scratch)
    else:
        xp.multiply(grad, lr * rg, out=scratch)
    xp.subtract(mom, scratch, out=mom)
    return scratch


def sgd_mom(xp, weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient):
    """``sgd_mom_update``: mom = momentum*mom - lr*wd*w - lr*clip(rescale*g); w += mom."""
    t = weight.dtype
    args = [scalar(t, v) for v in (momentum, lr, wd, rescale_grad, clip_gradient)]
    step = _mom_step(xp, mom, weight, grad, *args)
    if step is not mom:
        mom[...] = step
    return weight + mom


def multi_sgd(xp, weight, grad, mom, weight32, lr, wd, momentum, rescale_grad, clip_gradient,
              into_weight=False):
    """One tensor of the ``multi_*sgd*_update`` kernels (mom and weight32 may be None).

    The multi kernels fold weight decay into the momentum step even without momentum, which
    rounds differently from ``sgd_update``; MXNet's SGD optimizer always takes this path for
    dense arrays. ``into_weight``: the caller stores the result into ``weight``, which may then
    be written directly (the result is ``weight`` itself)."""
    t = F32 if weight32 is not None else weight.dtype
    w = weight32 if weight32 is not None else weight
    g = grad.astype(t, copy=False)
    args = scalars(t, momentum, lr, wd, rescale_grad, clip_gradient)
    if xp is np and into_weight and weight32 is None and mom is not None and \
            _inplace_ok(mom, w, g) and w.flags.writeable and w.flags.c_contiguous and \
            g.flags.c_contiguous:
        mom_update_into(mom, w, g, *args)
        return w
    if mom is not None and _inplace_ok(mom, w, g):
        scratch = _mom_step_into(xp, mom, w, g, *args)
        direct = into_weight and weight32 is None and w.flags.writeable
        new = xp.add(w, mom, out=w if direct else scratch)
    else:
        step = _mom_step(xp, mom, w, g, *args)
        if mom is not None:
            mom[...] = step
        new = w + step
    if weight32 is not None:
        weight32[...] = new
        return new.astype(weight.dtype)
    return new


def mp_sgd(xp, weight, grad, weight32, lr, wd, rescale_grad, clip_gradient):
    """``mp_sgd_update``: the sgd_update formula on the float32 master copy."""
    new = sgd(xp, weight32, grad.astype(F32), lr, wd, rescale_grad, clip_gradient)
    weight32[...] = new
    return new.astype(weight.dtype)


def mp_sgd_mom(xp, weight, grad, mom, weight32, lr, momentum, wd, rescale_grad, clip_gradient):
    """``mp_sgd_mom_update``: the sgd_mom_update formula on the float32 master copy."""
    new = sgd_mom(xp, weight32, grad.astype(F32), mom, lr, momentum, wd, rescale_grad,
                  clip_gradient)
    weight32[...] = new
    return new.astype(weight.dtype)


def nag_mom(xp, weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient,
            in_place=False):
    """``nag_mom_update`` (Nesterov momentum, MXNet's sign convention).

    MXNet's kernel writes the new weight before it updates the momentum, whose weight-decay term
    reads the weight again: with ``out=weight`` (``in_place``, what the NAG optimizer does) that
    term sees the new weight."""
    t = weight.dtype
    lr, momentum, wd, rg, cg = (scalar(t, v) for v in (lr, momentum, wd, rescale_grad,
                                                        clip_gradient))
    g = clip(xp, rg * grad, cg) if cg >= 0 else rg * grad
    mom[...] = momentum * mom
    out = weight - mom + (momentum + t.type(1)) * (mom - lr * (g + wd * weight))
    mom[...] = mom - lr * (g + wd * (out if in_place else weight))
    return out


def mp_nag_mom(xp, weight, grad, mom, weight32, lr, momentum, wd, rescale_grad, clip_gradient):
    """``mp_nag_mom_update``: nag_mom_update on the float32 master copy (whose kernel always
    uses the updated master weight in the momentum's weight-decay term)."""
    new = nag_mom(xp, weight32, grad.astype(F32), mom, lr, momentum, wd, rescale_grad,
                  clip_gradient, in_place=True)
    weight32[...] = new
    return new.astype(weight.dtype)


def adam(xp, weight, grad, mean, var, lr, beta1, beta2, epsilon, wd, rescale_grad,
         clip_gradient):
    """``adam_update`` (bias correction is folded into ``lr`` by the caller)."""
    t = weight.dtype
    lr, b1, b2, eps, wd, rg, cg = (scalar(t, v) for v in (lr, beta1, beta2, epsilon, wd,
                                                           rescale_grad, clip_gradient))
    one = t.type(1)
    g = _clipped(xp, grad * rg + weight * wd, cg)
    mean[...] = b1 * mean + (one - b1) * g
    var[...] = b2 * var + (one - b2) * g * g
    return weight - lr * mean / (xp.sqrt(var) + eps)


def rmsprop(xp, weight, grad, n, lr, gamma1, epsilon, wd, rescale_grad, clip_gradient,
            clip_weights):
    """``rmsprop_update`` (Tieleman & Hinton)."""
    t = weight.dtype
    lr, g1, eps, wd, rg, cg, cw = (scalar(t, v) for v in (lr, gamma1, epsilon, wd, rescale_grad,
                                                           clip_gradient, clip_weights))
    g = _clipped(xp, rg * grad + wd * weight, cg)
    n[...] = (t.type(1) - g1) * (g * g) + g1 * n
    return _clipped(xp, weight - lr * (g / xp.sqrt(n + eps)), cw)


def rmspropalex(xp, weight, grad, n, g_avg, delta, lr, gamma1, gamma2, epsilon, wd, rescale_grad,
                clip_gradient, clip_weights):
    """``rmspropalex_update`` (Graves' centered RMSProp)."""
    t = weight.dtype
    lr, g1, g2, eps, wd, rg, cg, cw = (scalar(t, v) for v in (
        lr, gamma1, gamma2, epsilon, wd, rescale_grad, clip_gradient, clip_weights))
    one = t.type(1)
    g = _clipped(xp, rg * grad + wd * weight, cg)
    n[...] = (one - g1) * g * g + g1 * n
    g_avg[...] = (one - g1) * g + g1 * g_avg
    delta[...] = g2 * delta - lr * g / xp.sqrt(n - g_avg * g_avg + eps)
    return _clipped(xp, weight + delta, cw)


def ftrl(xp, weight, grad, z, n, lr, lamda1, beta, wd, rescale_grad, clip_gradient):
    """``ftrl_update`` (inputs weight, grad, z, n)."""
    t = weight.dtype
    lr, l1, beta, wd, rg, cg = (scalar(t, v) for v in (lr, lamda1, beta, wd, rescale_grad,
                                                        clip_gradient))
    g = _clipped(xp, grad * rg, cg)
    z[...] += g - (xp.sqrt(n + g * g) - xp.sqrt(n)) * weight / lr
    n[...] += g * g
    return ((xp.sign(z) * l1 - z) / ((beta + xp.sqrt(n)) / lr + wd)
            * (xp.abs(z) > l1).astype(t))


def ftml(xp, weight, grad, d, v, z, lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_grad):
    """``ftml_update`` (inputs weight, grad, d, v, z; ``t`` is the update count)."""
    dt = weight.dtype
    lr, b1, b2, wd, rg, cg = (scalar(dt, x) for x in (lr, beta1, beta2, wd, rescale_grad,
                                                       clip_grad))
    eps, tt, one = dt.type(epsilon), dt.type(t), dt.type(1)
    g = _clipped(xp, rg * grad + wd * weight, cg)
    v[...] = b2 * v + (one - b2) * (g * g)
    d_t = (one - b1 ** tt) / lr * (xp.sqrt(v / (one - b2 ** tt)) + eps)
    z[...] = b1 * z + (one - b1) * g - (d_t - b1 * d) * weight
    d[...] = d_t
    return -z / d_t


def signsgd(xp, weight, grad, lr, wd, rescale_grad, clip_gradient):
    """``signsgd_update``: w = (1 - lr*wd)*w - lr*sign(g) (clipping has no effect)."""
    t = weight.dtype
    lr, wd = scalar(t, lr), scalar(t, wd)
    return (t.type(1) - lr * wd) * weight - lr * xp.sign(grad)


def signum(xp, weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient, wd_lh):
    """``signum_update``: sign of a momentum of the (rescaled, clipped) gradient."""
    t = weight.dtype
    lr, mo, wd, rg, cg, lh = (scalar(t, v) for v in (lr, momentum, wd, rescale_grad,
                                                      clip_gradient, wd_lh))
    one = t.type(1)
    if cg >= 0:
        g = (one - mo) * clip(xp, rg * grad, cg)
    else:
        g = (one - mo) * rg * grad
    mom[...] = mo * mom - (one - mo) * wd * weight - g
    return (one - lr * lh) * weight + lr * xp.sign(mom)


def _bias_corrected(xp, mean, var, b1, b2, t, eps, dtype):
    """mean_hat / (sqrt(var_hat) + eps) with MXNet's mixed double/float corrections."""
    beta1_t = dtype.type(float(b1) ** int(t))
    beta2_t = dtype.type(float(b2) ** int(t))
    mean_hat = (mean.astype(np.float64) / (1.0 - float(beta1_t))).astype(dtype)
    var_hat = var / (dtype.type(1) - beta2_t)
    return mean_hat / (xp.sqrt(var_hat) + eps)


def lamb_phase1(xp, weight, grad, mean, var, beta1, beta2, epsilon, t, bias_correction, wd,
                rescale_grad, clip_gradient, weight32=None):
    """``lamb_update_phase1``: the Adam-like direction g plus weight decay (returns g)."""
    dt = F32 if weight32 is not None else weight.dtype
    w = weight32 if weight32 is not None else weight
    b1, b2, eps, wd, rg, cg = (scalar(dt, v) for v in (beta1, beta2, epsilon, wd, rescale_grad,
                                                        clip_gradient))
    one = dt.type(1)
    g = _clipped(xp, grad.astype(dt, copy=False) * rg, cg)
    mean[...] = b1 * mean + (one - b1) * g
    var[...] = b2 * var + (one - b2) * g * g
    if bias_correction:
        return _bias_corrected(xp, mean, var, b1, b2, t, eps, dt) + wd * w
    return mean / (xp.sqrt(var) + eps) + wd * w


def lamb_phase2(xp, weight, g, r1, r2, lr, lower_bound, upper_bound, weight32=None):
    """``lamb_update_phase2``: w -= lr * (r1/r2) * g with r1 bounded (r1, r2 of shape (1,))."""
    dt = F32 if weight32 is not None else weight.dtype
    w = weight32 if weight32 is not None else weight
    lr, lb, ub = (scalar(dt, v) for v in (lr, lower_bound, upper_bound))
    r1 = dt.type(float(r1.reshape(-1)[0]))
    r2 = dt.type(float(r2.reshape(-1)[0]))
    if lb >= 0:
        r1 = max(r1, lb)
    if ub >= 0:
        r1 = min(r1, ub)
    if r1 != 0 and r2 != 0:
        lr = lr * r1 / r2
    new = w - lr * g
    return new.astype(weight.dtype) if weight32 is not None else new


def mp_lamb_phase1(xp, weight, grad, mean, var, weight32, **params):
    """``mp_lamb_update_phase1``: phase 1 on the float32 master copy (returns float32 g)."""
    return lamb_phase1(xp, weight, grad, mean, var, weight32=weight32, **params)


def mp_lamb_phase2(xp, weight, g, r1, r2, weight32, **params):
    """``mp_lamb_update_phase2``: phase 2 from the float32 master copy (returns weight dtype)."""
    return lamb_phase2(xp, weight, g, r1, r2, weight32=weight32, **params)


def multi_lamb(xp, weight, grad, mean, var, weight32, lr, wd, t, beta1, beta2, epsilon,
               bias_correction, rescale_grad, clip_gradient, lower_bound, upper_bound):
    """One tensor of ``_multi_lamb_update`` / ``_multi_mp_lamb_update`` (what MXNet's LAMB runs
    when the Updater hands it a list): the direction is kept in a float32 buffer, r1 is the norm
    of the weight as given (float16 for mixed precision), and the master copy is updated."""
    mp = np.dtype(np.float64) if weight.dtype == np.float64 else F32
    w = weight32 if weight32 is not None else weight.astype(mp)
    b1, b2, eps, lr, wd, rg, cg = (scalar(mp, v) for v in (beta1, beta2, epsilon, lr, wd,
                                                           rescale_grad, clip_gradient))
    one = mp.type(1)
    g = _clipped(xp, grad.astype(mp) * rg, cg)
    mean[...] = b1 * mean + (one - b1) * g
    var[...] = b2 * var + (one - b2) * g * g
    if bias_correction:
        steps = mp.type(t)
        direction = ((mean / (one - b1 ** steps)) / (xp.sqrt(var / (one - b2 ** steps)) + eps)
                     + wd * w)
    else:
        direction = mean / (xp.sqrt(var) + eps) + wd * w
    direction = direction.astype(F32)
    r1, r2 = _sum_sq_root(xp, weight), _sum_sq_root(xp, direction)
    if lower_bound >= 0:
        r1 = max(r1, np.float32(lower_bound))
    if upper_bound >= 0:
        r1 = min(r1, np.float32(upper_bound))
    ratio = mp.type(1) if r1 == 0 or r2 == 0 else mp.type(r1 / r2)
    new = w - (lr * ratio) * direction
    if weight32 is not None:
        weight32[...] = new
    return new.astype(weight.dtype)


def sum_sq(xp, x):
    """The sum of squares as ``multi_sum_sq`` computes it on CPU: squares in the array's dtype,
    added one by one to a float32 accumulator (returns a numpy float32)."""
    squares = (x * x).reshape(-1).astype(F32)
    if squares.size == 0:
        return np.float32(0)
    return np.float32(float(xp.cumsum(squares, dtype=F32)[-1]))


def _sum_sq_root(xp, x):
    return np.sqrt(sum_sq(xp, x))


def l2norm(xp, x):
    """The L2 norm of an array as a shape-(1,) array of its dtype (``NDArray.norm()``)."""
    acc = x.astype(np.float64) if x.dtype == np.float16 else x
    return xp.sqrt(xp.sum(acc * acc)).astype(x.dtype).reshape(1)
