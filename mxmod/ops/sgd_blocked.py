"""The multi-SGD momentum update applied in place: by one compiled pass over memory
(``sgd_kernels``) where numba is enabled, else block by block, so that weight, gradient, momentum
and a scratch block stay in a core's L2 cache across the update's six numpy passes. The
operations and their order per element are those of ``optimizer_kernels._mom_step_into`` followed
by the weight update in both, so results are bit-identical to the unblocked kernel."""
import threading

import numpy as np

from . import jit

__all__ = ['mom_update_into', 'BLOCK']

# elements per block of the blocked momentum update: the weight, gradient, momentum and scratch
# blocks (4 x 128 KiB of float32) stay in a core's L2 cache across the update's six passes
BLOCK = 32768
_LOCAL = threading.local()
# arrays this large or larger (and of these dtypes) go to the compiled one-pass kernel when the
# compiled kernels are enabled; below it numpy's few calls cost less than the kernel's dispatch
_COMPILED_MIN = 4096
_COMPILED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _scratch(dtype, size):
    """A 1-D scratch array of at least ``size`` elements of ``dtype``, reused by the calling
    thread (each thread has its own)."""
    cache = getattr(_LOCAL, 'scratch', None)
    if cache is None:
        cache = _LOCAL.scratch = {}
    buf = cache.get(dtype)
    if buf is None or buf.size < size:
        buf = cache[dtype] = np.empty(max(size, 1024), dtype)
    return buf[:size]


def mom_update_into(mom, weight, grad, momentum, lr, wd, rg, cg):
    """numpy: the multi-SGD momentum step and ``weight += mom`` written in place, block by
    block (the operations and their order per element are those of :func:`_mom_step_into`
    followed by the weight update, so the results are bit-identical). All three arrays must be
    C-contiguous of one shape and dtype, ``weight`` writeable; the scalars of that dtype."""
    n = weight.size
    if n >= _COMPILED_MIN and weight.dtype in _COMPILED_DTYPES and \
            type(momentum) is weight.dtype.type and jit.enabled():
        _compiled(weight.reshape(-1), mom.reshape(-1), grad.reshape(-1), momentum, lr, wd, rg,
                  cg)
        return
    if n <= BLOCK:
        s = _scratch(weight.dtype, n).reshape(weight.shape)
        _block(weight, mom, grad, s, momentum, lr, wd, rg, cg)
        return
    w, m, g = weight.reshape(-1), mom.reshape(-1), grad.reshape(-1)
    _blocks(w, m, g, 0, n, momentum, lr, wd, rg, cg)


def _compiled(w, m, g, momentum, lr, wd, rg, cg):
    """The whole update by one compiled pass (sgd_kernels), same operations and order."""
    from . import sgd_kernels  # pylint: disable=import-outside-toplevel
    if cg >= 0:
        sgd_kernels.mom_update_clip(w, m, g, momentum, lr * wd, lr, rg, cg)
    else:
        sgd_kernels.mom_update(w, m, g, momentum, lr * wd, lr * rg)


def _blocks(w, m, g, begin, end, momentum, lr, wd, rg, cg):
    """The update of elements [begin, end) of the flat arrays, BLOCK elements at a time."""
    s = _scratch(w.dtype, BLOCK)
    for start in range(begin, end, BLOCK):
        stop = min(start + BLOCK, end)
        _block(w[start:stop], m[start:stop], g[start:stop], s[:stop - start], momentum, lr, wd,
               rg, cg)


def _block(w, m, g, s, momentum, lr, wd, rg, cg):
    """One block: the operations of _mom_step_into, then ``w += m``."""
    multiply, subtract = np.multiply, np.subtract
    multiply(w, lr * wd, out=s)
    multiply(m, momentum, out=m)
    subtract(m, s, out=m)
    if cg >= 0:
        multiply(g, rg, out=s)
        np.clip(s, -cg, cg, out=s)
        multiply(s, lr, out=s)
    else:
        multiply(g, lr * rg, out=s)
    subtract(m, s, out=m)
    np.add(w, m, out=w)
