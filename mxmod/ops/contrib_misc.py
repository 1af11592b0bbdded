"""Small contrib operators: index_copy, quadratic, round_ste / sign_ste, gradientmultiplier,
arange_like, boolean_mask, index_array, allclose and div_sqrt_dim (``mx.nd.contrib.*`` /
``mx.sym.contrib.*``), with MXNet's dtypes, shapes and gradients."""
import numpy as np

from ..base import MXNetError
from .base import mx_dim, Operator, Param, register, merge_shape
from .elemwise import Unary, _round_half_away, mx_sign
from .shape import norm_axis


@register
class IndexCopy(Operator):
    """``old_tensor`` with rows ``index_vector`` replaced by the rows of ``new_tensor``.
    Gradients: the head gradient with those rows zeroed (old), its rows at the index (new)."""
    op_name = '_contrib_index_copy'
    arguments = ('old_tensor', 'index_vector', 'new_tensor')
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: index_vector 1-D; old and new of one rank, compared as MXNet compares dims
        # (an unknown dim, -1 there, equals only an unknown dim); the output is old's shape
        old, index, new = in_shapes
        olds, news = [mx_dim(d) for d in old or ()], [mx_dim(d) for d in new or ()]
        if index is None or len(index) != 1 or (old is None) != (new is None) or (
                olds and (len(olds) != len(news) or olds[0] < news[0] or olds[1:] != news[1:])) \
                or mx_dim(index[0]) != (news[0] if news else -1):
            raise MXNetError('index_copy: index_vector %s must be 1-D with one entry per row of '
                             'new_tensor %s, which must match old_tensor %s beyond the first axis'
                             % (index, new, old))
        old = merge_shape(self.op_name, 'old_tensor', old, out_shapes[0])
        return [old, index, new], [old]

    def infer_type(self, in_types, out_types):
        dtype = in_types[0] or out_types[0]     # as MXNet: old_tensor <-> output only
        return [dtype, in_types[1], in_types[2]], [dtype]

    def forward(self, octx, inputs, aux):
        old, index, new = inputs
        out = old.copy()
        out[index.astype(np.int64)] = new
        return [out]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        dy = out_grads[0]
        rows = inputs[1].astype(np.int64)
        dold = dy.copy()
        dold[rows] = 0
        return [dold, xp.zeros(inputs[1].shape, inputs[1].dtype), dy[rows]]


@register
class Quadratic(Unary):
    """``a x^2 + b x + c``; gradient ``(2 a x + b) dy``."""
    op_name = '_contrib_quadratic'
    params = {'a': Param('float', 0.0), 'b': Param('float', 0.0), 'c': Param('float', 0.0)}
    backward_uses = ('inputs',)

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        a, b, c = (x.dtype.type(v) for v in (self.p.a, self.p.b, self.p.c))
        return [(a * x + b) * x + c]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        x, dy = inputs[0], out_grads[0]
        return [dy * (x.dtype.type(2 * self.p.a) * x + x.dtype.type(self.p.b))]


@register
class RoundSte(Unary):
    """``round`` (halves away from zero) forward, identity gradient: the straight-through
    estimator used in quantized training."""
    op_name = '_contrib_round_ste'
    backward_uses = ()
    mirror_cheap = True
    fn = staticmethod(lambda xp, x: _round_half_away(xp, x))
    grad = staticmethod(lambda xp, x, y, dy: dy)


@register
class SignSte(Unary):
    """``sign`` forward, identity gradient (straight-through estimator)."""
    op_name = '_contrib_sign_ste'
    backward_uses = ()
    mirror_cheap = True
    fn = staticmethod(lambda xp, x: mx_sign(xp, x))
    grad = staticmethod(lambda xp, x, y, dy: dy)


@register
class GradientMultiplier(Operator):
    """Identity forward; the backward multiplies the head gradient by ``scalar`` (a gradient
    reversal layer with a negative scalar). Sparse inputs keep their storage type."""
    op_name = '_contrib_gradientmultiplier'
    fn = None
    mirror_cheap = True
    params = {'scalar': Param('float', 1.0), 'is_int': Param('bool', True)}
    backward_uses = ()

    def forward(self, octx, inputs, aux):
        return [inputs[0].copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        dy = out_grads[0]
        return [(dy * dy.dtype.type(self.p.scalar)).astype(dy.dtype, copy=False)]


@register
class ArangeLike(Operator):
    """``start + step * (i // repeat)`` over the elements of ``data`` (its shape; or, with
    ``axis``, over that axis only), in data's dtype. No gradient flows."""
    op_name = '_contrib_arange_like'
    params = {'start': Param('float', 0.0), 'step': Param('float', 1.0), 'repeat': Param('int', 1),
              'ctx': Param('str', ''), 'axis': Param('int?', None)}
    backward_uses = ()
    propagates_grad = False

    def _shape(self, shape):
        if self.p.axis is None:
            return tuple(shape)
        return (shape[norm_axis(self.op_name, self.p.axis, len(shape))],)

    def infer_shape(self, in_shapes, out_shapes):
        if in_shapes[0] is None:
            if self.p.axis is not None:     # MXNet checks axis against the unknown rank
                raise MXNetError('arange_like: cannot handle axis %d of data of an unknown shape'
                                 % self.p.axis)
            return in_shapes, out_shapes
        return in_shapes, [merge_shape(self.op_name, 'output', self._shape(in_shapes[0]),
                                       out_shapes[0])]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        octx.saved['in_meta'] = (tuple(x.shape), x.dtype)
        shape = self._shape(x.shape)
        count = int(np.prod(shape))
        steps = np.floor(np.arange(count) / self.p.repeat)
        values = self.p.start + self.p.step * steps
        return [octx.xp.asarray(values.reshape(shape)).astype(x.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape, dtype = octx.saved['in_meta']
        return [octx.xp.zeros(shape, dtype=dtype)]


@register
class BooleanMask(Operator):
    """The rows (``axis`` 0) of ``data`` where ``index`` is non-zero; the output length depends
    on the values, so it is known only when the operator runs. The gradient scatters back."""
    op_name = '_contrib_boolean_mask'
    arguments = ('data', 'index')
    params = {'axis': Param('int', 0)}
    backward_uses = ('inputs',)

    def setup(self):
        if self.p.axis != 0:
            raise MXNetError('boolean_mask: only axis=0 is supported (as in MXNet), got %d'
                             % self.p.axis)

    def infer_type(self, in_types, out_types):
        dtype = in_types[0] or out_types[0]     # as MXNet: data <-> output; index keeps its own
        return [dtype, in_types[1]], [dtype]

    def infer_shape(self, in_shapes, out_shapes):
        # MXNet registers no shape inference for boolean_mask (its output's shape is dynamic)
        return list(in_shapes), list(out_shapes)

    def forward(self, octx, inputs, aux):
        data, index = inputs
        return [data[octx.xp.nonzero(index)[0]]]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        data, index = inputs
        grad = xp.zeros_like(data)
        grad[xp.nonzero(index)[0]] = out_grads[0]
        return [grad, xp.zeros_like(index)]


@register
class IndexArray(Operator):
    """For every element of ``data``, its coordinates (along ``axes``, default all): int64 of
    shape data.shape + (len(axes),)."""
    op_name = '_contrib_index_array'
    params = {'axes': Param('shape?', None)}
    backward_uses = ()
    propagates_grad = False

    def _axes(self, ndim):
        if self.p.axes is None:
            return tuple(range(ndim))
        return tuple(norm_axis(self.op_name, a, ndim) for a in self.p.axes)

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:
            return in_shapes, out_shapes
        out = tuple(data) + (len(self._axes(len(data))),)
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def infer_type(self, in_types, out_types):
        return in_types, ['int64']

    def forward(self, octx, inputs, aux):
        xp, x = octx.xp, inputs[0]
        octx.saved['in_meta'] = (tuple(x.shape), x.dtype)
        axes = self._axes(x.ndim)
        if not axes:            # a 0-d input has no axes: an empty (0,) index array
            return [xp.zeros(x.shape + (0,), dtype=np.int64)]
        grids = xp.indices(x.shape, dtype=np.int64)
        return [xp.stack([grids[a] for a in axes], axis=-1)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape, dtype = octx.saved['in_meta']
        return [octx.xp.zeros(shape, dtype=dtype)]


@register
class AllClose(Operator):
    """1 (uint8, shape ()) when ``|a - b| <= atol + rtol * |b|`` everywhere (NaNs equal with
    ``equal_nan``), else 0."""
    op_name = '_contrib_allclose'
    arguments = ('a', 'b')
    params = {'rtol': Param('float', 1e-5), 'atol': Param('float', 1e-8),
              'equal_nan': Param('bool', True)}
    differentiable = False
    backward_uses = ()

    def infer_shape(self, in_shapes, out_shapes):
        return list(in_shapes), [()]     # as MXNet: the inputs are neither inferred nor checked

    def infer_type(self, in_types, out_types):
        return in_types, ['uint8']

    def forward(self, octx, inputs, aux):
        a, b = inputs
        close = octx.xp.isclose(a, b, rtol=self.p.rtol, atol=self.p.atol,
                                equal_nan=self.p.equal_nan).all()
        return [octx.xp.asarray(close, dtype=np.uint8)]


@register
class DivSqrtDim(Unary):
    """``data / sqrt(data.shape[-1])``."""
    op_name = '_contrib_div_sqrt_dim'
    backward_uses = ()

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        return [x / x.dtype.type(np.sqrt(x.shape[-1]))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        dy = out_grads[0]
        return [dy / dy.dtype.type(np.sqrt(dy.shape[-1]))]
