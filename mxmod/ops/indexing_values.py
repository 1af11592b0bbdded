"""Operators that pick values by position or by condition: one_hot, where (elementwise or by
row with a 1-D condition) and clip. Integer-valued index or condition inputs get no gradient."""

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from .indexing import as_index
from .shape import is_known


_ONE_HOT_TYPES = ('float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8')


@register
class OneHot(Operator):
    """One-hot encoding: out[..., j] = on_value where j == indices[...] else off_value."""
    op_name = 'one_hot'
    arguments = ('indices',)
    params = {'depth': Param('int'), 'on_value': Param('float', 1.0),
              'off_value': Param('float', 0.0), 'dtype': Param('dtype', 'float32')}
    backward_uses = ()

    def setup(self):
        if self.p.dtype not in _ONE_HOT_TYPES:
            raise MXNetError('one_hot: invalid dtype %r; expected one of %s'
                             % (self.p.dtype, list(_ONE_HOT_TYPES)))
        if self.p.depth < 0:
            raise MXNetError('one_hot: depth must be non-negative, got %d' % self.p.depth)

    def infer_shape(self, in_shapes, out_shapes):
        if not is_known(in_shapes[0]):
            return in_shapes, out_shapes
        out = tuple(in_shapes[0]) + (self.p.depth,)
        return in_shapes, [merge_shape('one_hot', 'output', out_shapes[0], out)]

    def infer_type(self, in_types, out_types):
        return list(in_types), [self.p.dtype]

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        idx = as_index(xp, inputs[0])
        hit = idx[..., None] == xp.arange(self.p.depth)
        on = xp.asarray(self.p.on_value).astype(self.p.dtype)
        off = xp.asarray(self.p.off_value).astype(self.p.dtype)
        return [xp.where(hit, on, off)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [None]


@register
class Where(Operator):
    """Elementwise choice: x where condition is non-zero, else y (condition may be 1-D)."""
    op_name = 'where'
    arguments = ('condition', 'x', 'y')
    mirror_cheap = True
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        cond, x, y = in_shapes
        if not is_known(cond):
            return in_shapes, out_shapes
        shape = merge_shape('where', 'x', x, y)
        shape = merge_shape('where', 'output', shape, out_shapes[0])
        if shape is None:
            if len(cond) == 1:      # MXNet reads dim 0 of the unknown shape of x, and fails
                raise MXNetError('where: with a 1-D condition the shape of x or y must be known')
            return in_shapes, out_shapes
        # as MXNet: x, y and the output share one shape; the condition is checked against it
        # but does not fill it in
        if len(cond) == len(shape):
            merge_shape('where', 'condition', shape, cond)
        elif len(cond) == 1 and not shape[0]:
            raise MXNetError('where: a 1-D condition %s needs the first dim of x %s known'
                             % (tuple(cond), tuple(shape)))
        else:
            self._check_condition(cond, shape)
        return [cond, shape, shape], [shape]

    @staticmethod
    def _check_condition(cond, shape):
        """condition: the shape of x, or 1-D of length x.shape[0]."""
        same = len(cond) == len(shape) and all(not a or not b or a == b for a, b in zip(cond, shape))
        if not same and (len(cond) != 1 or (shape[0] and cond[0] != shape[0])):
            raise MXNetError('where: condition of shape %s must have the shape of x %s or be '
                             '1-D of length x.shape[0]' % (tuple(cond), tuple(shape)))

    def infer_type(self, in_types, out_types):
        cond, x, y = in_types
        dtype = x or y or out_types[0]
        return [cond, dtype, dtype], [dtype]

    @staticmethod
    def _mask(xp, cond, ndim):
        mask = cond != 0
        if mask.ndim == 1 and ndim > 1:
            mask = mask.reshape((-1,) + (1,) * (ndim - 1))
        return mask

    def forward(self, octx, inputs, aux):
        cond, x, y = inputs
        if x.shape != y.shape:
            raise MXNetError('where: x of shape %s and y of shape %s must have the same shape'
                             % (tuple(x.shape), tuple(y.shape)))
        self._check_condition(tuple(cond.shape), tuple(x.shape))
        return [octx.xp.where(self._mask(octx.xp, cond, x.ndim), x, y)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        dy = out_grads[0]
        mask = self._mask(xp, inputs[0], dy.ndim)
        zero = xp.zeros((), dtype=dy.dtype)
        return [None, xp.where(mask, dy, zero), xp.where(mask, zero, dy)]


@register
class Clip(Operator):
    """Limit values to [a_min, a_max]; the gradient passes except where x < a_min or x > a_max
    (so it passes at NaN, as in MXNet)."""
    op_name = 'clip'
    params = {'a_min': Param('float'), 'a_max': Param('float')}
    mirror_cheap = True
    backward_uses = ('inputs',)

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        lo, hi = x.dtype.type(self.p.a_min), x.dtype.type(self.p.a_max)
        return [octx.xp.minimum(octx.xp.maximum(x, lo), hi)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        x, dy = inputs[0], out_grads[0]
        outside = (x < self.p.a_min) | (x > self.p.a_max)
        return [octx.xp.where(outside, dy.dtype.type(0), dy)]

