"""Activation's data gradient by one compiled pass (act_kernels) where y and dy share one dense
memory order; nn.Activation falls back to numpy otherwise."""
import numpy as np

from .layout import dense_order

__all__ = ['GRADS', 'grad']

GRADS = ('relu', 'tanh', 'sigmoid')
# below this many elements numpy's ufuncs are quicker than the compiled kernel's call (relu,
# one thread: 8 x 16 1.1 against 2.2 us, 32 x 64 1.7 against 2.4, 64 x 256 5.4 against 4.1)
SMALL = 4096


def _flat(a):
    """The memory of a dense array as a 1-D view (None if it is not dense)."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    perm = dense_order(a)
    return None if perm is None else a.transpose(perm).reshape(-1)


def grad(kind, y, dy):
    """dx of activation ``kind`` from its output y and dy, or None where y and dy are not
    float32/float64 arrays in one dense memory order, or are small (numpy is quicker there)."""
    if (y.size < SMALL or y.dtype != dy.dtype or y.dtype not in (np.float32, np.float64)
            or y.shape != dy.shape or y.strides != dy.strides):
        return None
    fy, fdy = _flat(y), _flat(dy)
    if fy is None or fdy is None:
        return None
    from . import act_kernels  # pylint: disable=import-outside-toplevel
    dx = np.empty_like(y)
    getattr(act_kernels, kind + '_grad')(fy, fdy, _flat(dx))
    return dx
