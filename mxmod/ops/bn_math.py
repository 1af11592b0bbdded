"""BatchNorm's training arithmetic (array module ``xp``) for any memory order of the data (channels-first, or
channels-last as convolutions hand it on), with few passes over memory.

Per-channel sums run as matrix-vector products over blocks of at most ``BLOCK`` values (float32
inside a block, float64 across blocks): one streaming pass each, about ten times faster than a
float64 reduction over a strided axis and as accurate as MXNet's vectorised sums. Elementwise work
broadcasts (1, C, 1, ...) coefficients over the data in its own memory order."""
import numpy as np

BLOCK = 1024


def channel_matrix(xp, a, axis):
    """A view of ``a`` as (M, C) (channels-last memory) or (N, C, L) (channels-first memory);
    a contiguous copy in the latter form when its memory is in neither order."""
    last = xp.moveaxis(a, axis, -1)
    if last.flags.c_contiguous:
        return last.reshape(-1, a.shape[axis])
    if not a.flags.c_contiguous:
        a = xp.ascontiguousarray(a)
    lead = 1
    for d in a.shape[:axis]:
        lead *= d
    return a.reshape(lead, a.shape[axis], -1)


def channel_sum(xp, a, axis):
    """Per-channel sums of ``a`` over every axis but ``axis``, as float64."""
    mat = channel_matrix(xp, a, axis)
    if mat.ndim == 3:
        ones = xp.ones(mat.shape[2], dtype=mat.dtype)
        return xp.matmul(mat, ones).sum(axis=0, dtype=np.float64)
    rows, chans = mat.shape
    blocks = rows // BLOCK
    total = xp.zeros(chans, dtype=np.float64)
    if blocks:
        head = mat[:blocks * BLOCK].reshape(blocks, BLOCK, chans)
        total += xp.matmul(xp.ones(BLOCK, dtype=mat.dtype), head).sum(axis=0, dtype=np.float64)
    if rows > blocks * BLOCK:
        total += xp.matmul(xp.ones(rows - blocks * BLOCK, dtype=mat.dtype), mat[blocks * BLOCK:])
    return total


def batch_stats(xp, x, axis):
    """(mean, biased variance, x - mean) over every axis but ``axis``; statistics in x's dtype."""
    count = x.size // x.shape[axis]
    shape = [1] * x.ndim
    shape[axis] = -1
    mean = (channel_sum(xp, x, axis) / count).astype(x.dtype)
    centered = x - mean.reshape(shape)
    var = (channel_sum(xp, centered * centered, axis) / count).astype(x.dtype)
    return mean, var, centered


def train_forward(xp, x, gamma, beta, eps, axis):
    """Training BatchNorm: (output, mean, 1/sqrt(var + eps))."""
    shape = [1] * x.ndim
    shape[axis] = -1
    mean, var, out = batch_stats(xp, x, axis)
    invstd = 1 / xp.sqrt(var + x.dtype.type(eps))
    out *= (gamma * invstd).reshape(shape)
    out += beta.reshape(shape)
    return out, mean, invstd


def train_backward(xp, x, dy, gamma, mean, invstd, axis, fix_gamma):
    """Gradients (dx, dgamma, dbeta) of training BatchNorm (batch statistics)."""
    shape = [1] * x.ndim
    shape[axis] = -1
    count = x.size // x.shape[axis]
    xhat = x - mean.reshape(shape)
    xhat *= invstd.reshape(shape)
    dbeta = channel_sum(xp, dy, axis)
    dgamma = channel_sum(xp, dy * xhat, axis)
    scale = (gamma * invstd).astype(np.float64)
    # dx = scale * (dy - dbeta/count - xhat * dgamma/count), one coefficient per channel
    xhat *= (-scale * dgamma / count).astype(x.dtype).reshape(shape)
    xhat += dy * scale.astype(x.dtype).reshape(shape)
    xhat -= (scale * dbeta / count).astype(x.dtype).reshape(shape)
    dgamma = xp.zeros_like(gamma) if fix_gamma else dgamma.astype(gamma.dtype)
    return xhat, dgamma, dbeta.astype(gamma.dtype)
