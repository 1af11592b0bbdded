"""Memory order of operator outputs: an elementwise operator given a preallocated output (the
executor's shared buffers are C-ordered) views that memory in the order of its input's memory, so
that channels-last data handed on by convolutions stays channels-last and is written and read in
long runs rather than transposed at every step."""

__all__ = ['dense_order', 'out_like']


def dense_order(a):
    """The permutation listing the axes of ``a`` from largest to smallest stride when ``a`` is a
    dense array in that order but not C-ordered; None otherwise."""
    if a.ndim < 2 or a.flags.c_contiguous:
        return None
    perm = sorted(range(a.ndim), key=lambda i: -a.strides[i])
    return perm if a.transpose(perm).flags.c_contiguous else None


def out_like(out, x):
    """``out`` (a C-ordered buffer of x's shape) viewed with the memory order of ``x``; ``out``
    itself when x is C-ordered, not dense, or the shapes differ."""
    if out is None or x.flags.c_contiguous:
        return out
    perm = dense_order(x)
    if perm is None or out.shape != x.shape or not out.flags.c_contiguous:
        return out
    inverse = [0] * len(perm)
    for i, axis in enumerate(perm):
        inverse[axis] = i
    return out.reshape([x.shape[i] for i in perm]).transpose(inverse)
