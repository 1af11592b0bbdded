"""float32 training BatchNorm through the compiled kernels of :mod:`bn_kernels`, with the
interface of bn_math's ``train_forward`` / ``train_backward``. Results keep the memory order of
the data (channels-last data gives channels-last outputs and gradients)."""
import numpy as np

from . import kpool
from .bn_math import channel_matrix
from .layout import out_like

__all__ = ['applies', 'train_forward', 'train_backward']


def _kernels():
    from . import bn_kernels  # pylint: disable=import-outside-toplevel
    return bn_kernels


def applies(xp, x, gamma):
    """Whether the kernels compute this BatchNorm (float32 data and parameters on numpy)."""
    return xp is np and x.dtype == np.float32 and gamma.dtype == np.float32 and x.ndim >= 2


def _like(mat, x, axis):
    """A new array of ``mat``'s shape and memory, viewed in ``x``'s shape."""
    out = np.empty(mat.shape, dtype=mat.dtype)
    if mat.ndim == 2:
        moved = np.moveaxis(x, axis, -1).shape
        return out, np.moveaxis(out.reshape(moved), -1, axis)
    return out, out.reshape(x.shape)


def _into(out, mat, x, axis):
    """``out`` (the executor's buffer for the output, or None) viewed in the memory order of
    ``mat`` = channel_matrix(x), as (matrix view, array of x's shape); a new array where the
    buffer cannot take that order."""
    if out is not None and out.shape == x.shape and out.dtype == mat.dtype:
        view = out_like(out, x)
        if mat.ndim == 2:
            moved = np.moveaxis(view, axis, -1)
            if moved.flags.c_contiguous:
                return moved.reshape(mat.shape), view
        elif view.flags.c_contiguous:
            return view.reshape(mat.shape), view
    return _like(mat, x, axis)


def _match(mat, a, axis):
    """``a`` (x's shape) in the memory layout of ``mat`` = channel_matrix(x)."""
    if mat.ndim == 2:
        return np.ascontiguousarray(np.moveaxis(a, axis, -1)).reshape(mat.shape)
    return np.ascontiguousarray(a).reshape(mat.shape)


def _blocks(mat):
    """Boundaries of the pieces threads take (kpool), or None for one thread: blocks of
    bn_par_kernels.BLOCK rows of a channels-last (M, 16k) matrix, images of an (N, C, L) one."""
    if mat.ndim == 2 and mat.shape[1] % 16:
        return None
    from . import bn_par_kernels  # pylint: disable=import-outside-toplevel
    if mat.ndim == 2:       # 16-lane kernels
        units, work = -(-mat.shape[0] // bn_par_kernels.BLOCK), 4 * mat.size
    else:                   # scalar loops: several times the time per element
        units, work = mat.shape[0], 16 * mat.size
    pieces = kpool.split(units, work)
    return None if pieces == 1 else kpool.bounds(units, pieces)


def _rows_run(fn, cuts, args, sliced):
    """fn(*args) on threads, one piece per range of ``cuts``, each with its rows (of a matrix)
    or images (of an (N, C, L) array) of the arguments at the positions ``sliced``."""
    from .bn_par_kernels import BLOCK  # pylint: disable=import-outside-toplevel
    unit = BLOCK if args[0].ndim == 2 else 1
    pieces = []
    for b0, b1 in zip(cuts[:-1], cuts[1:]):
        pieces.append(tuple(a[b0 * unit:b1 * unit] if i in sliced else a
                            for i, a in enumerate(args)))
    kpool.run(fn, pieces)


def _sums_run(fn, cuts, head, width):
    """fn(*head, b0, b1, parts) on threads; parts (blocks, width) float32 for a matrix,
    (N, C, blocks of L, 2) float64 for an (N, C, L) array."""
    mat = head[0]
    if mat.ndim == 2:
        parts = np.empty((cuts[-1], width), np.float32)
    else:
        from .bn_par_kernels import BLOCK  # pylint: disable=import-outside-toplevel
        parts = np.empty(mat.shape[:2] + (-(-mat.shape[2] // BLOCK), 2))
    kpool.run(fn, [head + (b0, b1, parts) for b0, b1 in zip(cuts[:-1], cuts[1:])])
    return parts


def _relu_kernels():
    from . import bn_relu_kernels  # pylint: disable=import-outside-toplevel
    return bn_relu_kernels


def train_forward(x, gamma, beta, eps, axis, out=None, relu=False):
    """(output, mean, 1/sqrt(var + eps)) with the batch's statistics; the output is written into
    ``out`` when given (and of a usable memory order); ``relu``: the output is relu'd (a fused
    relu after it, see executor/fusion.py)."""
    k = _kernels()
    mat = channel_matrix(np, x, axis)
    chans = x.shape[axis]
    mean, m2 = np.empty(chans), np.empty(chans)
    cuts = _blocks(mat)
    if cuts is not None:
        from . import bn_par_kernels as par  # pylint: disable=import-outside-toplevel
        if mat.ndim == 2:
            par.stats_merge(_sums_run(par.stats_parts, cuts, (mat,), 3 * chans), mat.shape[0],
                            mean, m2)
        else:
            par.stats_merge_first(_sums_run(par.stats_parts_first, cuts, (mat,), 0),
                                  mat.shape[2], mean, m2)
    else:
        (k.stats_last if mat.ndim == 2 else k.stats_first)(mat, mean, m2)
    count = x.size // chans
    invstd = (1 / np.sqrt(m2 / count + eps)).astype(np.float32)
    mean32 = mean.astype(np.float32)
    out_mat, out = _into(out, mat, x, axis)
    scale = gamma * invstd          # float32, as the fused backward recomputes it
    kernels = _relu_kernels() if relu else k
    if cuts is not None:
        _rows_run(kernels.apply_last if mat.ndim == 2 else kernels.apply_first, cuts,
                  (mat, mean32, scale, beta, out_mat), (0, 4))
    else:
        (kernels.apply_last if mat.ndim == 2 else kernels.apply_first)(mat, mean32, scale, beta,
                                                                       out_mat)
    return out, mean32, invstd


def train_backward(x, dy, gamma, mean, invstd, axis, fix_gamma, beta=None, need_dx=True):
    """(dx, dgamma, dbeta) of training BatchNorm; with ``beta`` given, of BatchNorm followed by
    relu (dy is the gradient of the relu'd output; the mask is recomputed from x); dx None
    without ``need_dx`` (a BatchNorm on the data, say)."""
    k = _kernels()
    mat = channel_matrix(np, x, axis)
    dmat = _match(mat, dy, axis)
    chans = x.shape[axis]
    count = x.size // chans
    sdy, sdyx = np.empty(chans), np.empty(chans)
    cuts = _blocks(mat)
    if beta is not None:
        rk = _relu_kernels()
        fwd_scale = gamma * invstd
    if cuts is not None:
        from . import bn_par_kernels as par  # pylint: disable=import-outside-toplevel
        last = mat.ndim == 2
        if beta is not None:
            parts = _sums_run(par.relu_grad_parts if last else par.relu_grad_parts_first, cuts,
                              (mat, dmat, mean, fwd_scale, beta), 2 * chans)
        else:
            parts = _sums_run(par.grad_parts if last else par.grad_parts_first, cuts,
                              (mat, dmat, mean), 2 * chans)
        (par.sums_merge if last else par.sums_merge_first)(parts, sdy, sdyx)
    elif beta is not None:
        (rk.grad_sums_last if mat.ndim == 2 else rk.grad_sums_first)(mat, dmat, mean, fwd_scale,
                                                                     beta, sdy, sdyx)
    else:
        (k.grad_sums_last if mat.ndim == 2 else k.grad_sums_first)(mat, dmat, mean, sdy, sdyx)
    inv = invstd.astype(np.float64)
    dgamma = sdyx * inv
    scale = gamma.astype(np.float64) * inv
    # dx = scale * (dy - sum(dy)/count - xhat * dgamma/count), xhat = (x - mean) * inv
    k_x = (-scale * dgamma * inv / count).astype(np.float32)
    k_0 = (-scale * sdy / count).astype(np.float32)
    dgamma = np.zeros_like(gamma) if fix_gamma else dgamma.astype(gamma.dtype)
    if not need_dx:
        return None, dgamma, sdy.astype(gamma.dtype)
    dx_mat, dx = _like(mat, x, axis)
    if beta is not None:
        args = (mat, dmat, mean, fwd_scale, beta, scale.astype(np.float32), k_x, k_0, dx_mat)
        fn = rk.grad_dx_last if mat.ndim == 2 else rk.grad_dx_first
    else:
        args = (mat, dmat, mean, scale.astype(np.float32), k_x, k_0, dx_mat)
        fn = k.grad_dx_last if mat.ndim == 2 else k.grad_dx_first
    if cuts is not None:
        _rows_run(fn, cuts, args, (0, 1, len(args) - 1))
    else:
        fn(*args)
    return dx, dgamma, sdy.astype(gamma.dtype)
