"""numpy broadcasting of shapes and its reverse for gradients, shared by the binary elementwise
operators (elemwise.py), the broadcast_* operators (shape_broadcast.py) and recorded
higher-order gradients (ndarray/grad_graph.py)."""
from ..base import MXNetError

__all__ = ['broadcast_shape', 'unbroadcast']


def broadcast_shape(op, a, b):
    """numpy broadcasting of two shapes with an MXNetError naming the operator."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise MXNetError('%s: operands could not be broadcast together with shapes %s %s'
                             % (op, a, b))
        out.append(max(x, y) if x and y else 0)
    return tuple(out)


def unbroadcast(grad, shape):
    """Sum a broadcast gradient back to ``shape`` (numpy/cupy arrays, or NDArrays: the sums
    are then recorded by autograd)."""
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra:
        grad = grad.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and grad.shape[i] != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad.reshape(shape)
