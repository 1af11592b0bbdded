"""numba kernel of the multi-SGD momentum update in one pass over memory (imported only when
numba is present and the compiled kernels are enabled, see ``ops.jit``): per element, the same
operations in the same order as ``sgd_blocked._block`` (so the same roundings), reading weight,
gradient and momentum once and writing weight and momentum once, instead of six passes over a
block held in cache."""
from numba import njit

__all__ = ['mom_update', 'mom_update_clip']

_OPTS = dict(cache=True, boundscheck=False, nogil=True)


@njit(**_OPTS)
def mom_update(w, m, g, momentum, lrwd, lrrg):
    """m = m*momentum - w*lrwd - g*lrrg; w += m (flat arrays of one dtype, scalars of it)."""
    for i in range(w.size):
        wi = w[i]
        mi = m[i] * momentum - wi * lrwd
        mi = mi - g[i] * lrrg
        m[i] = mi
        w[i] = wi + mi


@njit(**_OPTS)
def mom_update_clip(w, m, g, momentum, lrwd, lr, rg, cg):
    """As :func:`mom_update` with the gradient term lr*clip(g*rg, -cg, cg) (a NaN stays NaN)."""
    low = -cg
    for i in range(w.size):
        wi = w[i]
        mi = m[i] * momentum - wi * lrwd
        s = g[i] * rg
        if s < low:
            s = low
        elif s > cg:
            s = cg
        mi = mi - s * lr
        m[i] = mi
        w[i] = wi + mi
