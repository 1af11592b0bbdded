"""Shape helpers of the operators' inference (MXNet 1.x's partial shapes: a tuple with 0 for an
unknown dim, None for an unknown shape), exported by ops/base.py too."""
from ..base import MXNetError

__all__ = ['unknown', 'merge_shape', 'same_shape_infer', 'forward_shape_infer', 'mx_dim',
           'from_mx_dims', 'rank_check']


def unknown(shape):
    """True when a shape is not (fully) known: None, empty-ndim-unknown, or containing 0."""
    return shape is None or any(d == 0 for d in shape)


def merge_shape(op, what, a, b):
    """Combine two partial shapes of one value (0 = unknown dim); raise when they disagree."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise MXNetError('%s: shape mismatch for %s: %s vs %s' % (op, what, a, b))
    out = []
    for x, y in zip(a, b):
        if x and y and x != y:
            raise MXNetError('%s: shape inconsistent for %s: provided %s, inferred %s'
                             % (op, what, a, b))
        out.append(x or y)
    return tuple(out)


def same_shape_infer(op, in_shapes, out_shapes):
    """Inference for ops whose inputs and outputs all share one shape."""
    shape = None
    names = op.list_arguments() + op.list_outputs()
    for name, s in zip(names, list(in_shapes) + list(out_shapes)):
        shape = merge_shape(op.describe(), name, s, shape)
    return [shape] * len(in_shapes), [shape] * len(out_shapes)


def forward_shape_infer(op, in_shapes, out_shapes):
    """Inference of ops whose outputs all take the first input's shape and that infer nothing
    backwards (MXNet's ``out_shape->clear(); out_shape->push_back(dshape)``): Dropout, MakeLoss,
    the output layers..."""
    data = in_shapes[0]
    if data is None:
        return list(in_shapes), list(out_shapes)
    return list(in_shapes), [data] * len(out_shapes)


def mx_dim(d):
    """A partial dim as MXNet's inference sees it: -1 where unknown (0 here). For reproducing
    MXNet's comparisons and arithmetic on unknown dims."""
    return d if d else -1


def from_mx_dims(op, dims):
    """A shape computed with MXNet's -1 for unknown dims back to this module's form (0 unknown);
    a dim below -1 (MXNet's arithmetic on an unknown one) fails as MXNet fails."""
    out = []
    for d in dims:
        d = int(d)
        if d < -1:
            raise MXNetError('%s: a dim computed from an unknown one is %d (MXNet fails here); '
                             'give the missing shapes' % (op, d))
        out.append(0 if d == -1 else d)
    return tuple(out)


def rank_check(op, name, shape, ndim, layout=''):
    """``shape`` must be known and of ``ndim`` dims (MXNet's CHECK_EQ(shape.ndim(), ndim), which
    fails on an unknown shape too)."""
    if shape is None or len(shape) != ndim:
        raise MXNetError('%s: %s must be %d-D%s, got %s'
                         % (op, name, ndim, ' ' + layout if layout else '',
                            'an unknown shape' if shape is None else 'shape %s' % (tuple(shape),)))
