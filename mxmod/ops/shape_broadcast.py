"""Broadcasting operators: broadcast_to, broadcast_axis (broadcast_axes) and broadcast_like
(MXNet 1.9.1 names, defaults and shape inference; part of ``indexing``)."""
from ..base import MXNetError
from .base import Param, register, merge_shape
from .broadcasting import unbroadcast
from .shape import ShapeOnly, is_known, norm_axis, save_shape, saved_shape
from .indexing import typed_like_first


# ---- broadcasting -----------------------------------------------------------------
class _Broadcast(ShapeOnly):
    """Base of the broadcast_* operators: the gradient sums over the broadcast axes."""

    def forward(self, octx, inputs, aux):
        save_shape(octx, *inputs)
        target = self._out(*[x.shape for x in inputs])
        return [octx.xp.broadcast_to(inputs[0], target).copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape = saved_shape(octx, inputs)[0]
        grads = [unbroadcast(out_grads[0], shape)]
        return grads + [None] * (len(self.list_arguments()) - 1)


def _check_broadcast(op, src, target, partial=False):
    """Each dim of ``src`` must equal ``target``'s or be 1. With ``partial`` (inference), an
    unknown source dim against a known target fails as in MXNet (it is not known to be 1)."""
    for s, t in zip(src, target):
        if t and s != t and s != 1 and (s or partial):
            raise MXNetError('%s: cannot broadcast shape %s to %s' % (op, tuple(src), tuple(target)))


@register
class BroadcastTo(_Broadcast):
    """Broadcast to ``shape``; a 0 in ``shape`` keeps the input's dimension."""
    op_name = 'broadcast_to'
    params = {'shape': Param('shape', ())}

    def _out(self, data, partial=False):
        if len(data) != len(self.p.shape):
            raise MXNetError('broadcast_to: input of shape %s cannot be broadcast to %s'
                             % (tuple(data), self.p.shape))
        out = tuple(t if t else d for d, t in zip(data, self.p.shape))
        _check_broadcast('broadcast_to', data, self.p.shape, partial)
        return out

    def infer_shape(self, in_shapes, out_shapes):
        if in_shapes[0] is None:
            return in_shapes, out_shapes
        return in_shapes, [merge_shape('broadcast_to', 'output', out_shapes[0],
                                       self._out(in_shapes[0], partial=True))]


@register
class BroadcastAxis(BroadcastTo):
    """Broadcast the size-1 axes ``axis`` to the sizes ``size``."""
    op_name = 'broadcast_axis'
    aliases = ('broadcast_axes',)
    params = {'axis': Param('shape', ()), 'size': Param('shape', ())}

    def setup(self):
        if len(self.p.axis) != len(self.p.size):
            raise MXNetError('broadcast_axis: axis %s and size %s must have the same length'
                             % (self.p.axis, self.p.size))

    def _out(self, data, partial=False):
        out = list(data)
        for a, s in zip(self.p.axis, self.p.size):
            a = norm_axis('broadcast_axis', a, len(data))
            if data[a] != 1:
                raise MXNetError('broadcast_axis: axis %d of shape %s must have size 1'
                                 % (a, tuple(data)))
            out[a] = s
        return tuple(out)

    def infer_shape(self, in_shapes, out_shapes):
        if not is_known(in_shapes[0]):
            return in_shapes, out_shapes
        return super().infer_shape(in_shapes, out_shapes)


@register
class BroadcastLike(_Broadcast):
    """Broadcast ``lhs`` to the shape of ``rhs`` (or only ``lhs_axes`` to ``rhs_axes``)."""
    op_name = 'broadcast_like'
    arguments = ('lhs', 'rhs')
    params = {'lhs_axes': Param('shape?', None), 'rhs_axes': Param('shape?', None)}

    def _out(self, lhs, rhs, partial=False):
        if self.p.lhs_axes is None or self.p.rhs_axes is None:
            if len(lhs) != len(rhs):
                raise MXNetError('broadcast_like: shape %s cannot be broadcast to %s'
                                 % (tuple(lhs), tuple(rhs)))
            out = tuple(r if r else d for d, r in zip(lhs, rhs))
            _check_broadcast('broadcast_like', lhs, rhs, partial)
            return out
        if len(self.p.lhs_axes) != len(self.p.rhs_axes) or not self.p.lhs_axes:
            raise MXNetError('broadcast_like: lhs_axes %s and rhs_axes %s must be non-empty and '
                             'of one length' % (self.p.lhs_axes, self.p.rhs_axes))
        out = list(lhs)
        for a, b in zip(self.p.lhs_axes, self.p.rhs_axes):
            a = norm_axis('broadcast_like', a, len(lhs), 'lhs_axes')
            b = norm_axis('broadcast_like', b, len(rhs), 'rhs_axes')
            if lhs[a] != 1:
                raise MXNetError('broadcast_like: axis %d of lhs %s must have size 1'
                                 % (a, tuple(lhs)))
            out[a] = rhs[b]
        return tuple(out)

    def infer_shape(self, in_shapes, out_shapes):
        lhs, rhs = in_shapes
        if lhs is None or rhs is None:
            return in_shapes, out_shapes
        return in_shapes, [merge_shape('broadcast_like', 'output', out_shapes[0],
                                       self._out(lhs, rhs, partial=True))]

    def infer_type(self, in_types, out_types):
        return typed_like_first(in_types, out_types, wait=True)
