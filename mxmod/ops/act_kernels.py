"""numba kernels of Activation's backward in one pass over memory (imported only when numba is
present): ``dx = dy * f'(y)`` from the output y, on flat float32/float64 arrays (nn.Activation
passes the memory of y, dy and dx as 1-D views when the three share one memory order)."""
from numba import njit

__all__ = ['relu_grad', 'tanh_grad', 'sigmoid_grad']

_OPTS = dict(cache=True, boundscheck=False, nogil=True)


@njit(**_OPTS)
def relu_grad(y, dy, dx):
    """dx = dy * (y > 0), NaN where y is NaN (as MXNet's own relu gradient; a NaN in dy stays
    NaN, as in the product)."""
    one = y.dtype.type(1)
    zero = y.dtype.type(0)
    for i in range(y.size):
        v = y[i]
        dx[i] = dy[i] * (one if v > zero else (v if v != v else zero))


@njit(**_OPTS)
def tanh_grad(y, dy, dx):
    """dx = dy * (1 - y * y)."""
    one = y.dtype.type(1)
    for i in range(y.size):
        dx[i] = dy[i] * (one - y[i] * y[i])


@njit(**_OPTS)
def sigmoid_grad(y, dy, dx):
    """dx = dy * y * (1 - y)."""
    one = y.dtype.type(1)
    for i in range(y.size):
        dx[i] = dy[i] * y[i] * (one - y[i])
