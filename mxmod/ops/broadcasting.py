"""numpy broadcasting of shapes and its reverse for gradients, shared by the binary elementwise
operators (elemwise.py), the broadcast_* operators (shape_broadcast.py) and recorded
higher-order gradients (ndarray/grad_graph.py)."""
from ..base import MXNetError

__all__ = ['broadcast_shape', 'unbroadcast']


def broadcast_shape(op, a, b):
    """numpy broadcasting of two shapes with an MXNetError naming the operator.

    Partial shapes (0 = unknown dim) follow MXNet 1.x: equal shapes give themselves, a dim is
    unknown where either operand's is (even against a 1), and known dims must agree or be 1."""
    a, b = tuple(a), tuple(b)
    if a == b:
        return a
    n = max(len(a), len(b))
    wide_a = (1,) * (n - len(a)) + a
    wide_b = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(wide_a, wide_b):
        if not x or not y:
            out.append(0)
        elif x != y and x != 1 and y != 1:
            raise MXNetError('%s: operands could not be broadcast together with shapes %s %s'
                             % (op, a, b))
        else:
            out.append(y if x == 1 else x)
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
