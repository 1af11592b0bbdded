"""Source operators (_zeros, _ones, _full, _arange), add_n and the cross-device copy."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape, forward_shape_infer


class Fill(Operator):
    """An output of a given shape filled with a constant; unknown dims (0, or -1 as numpy shape
    semantics write them) are inferred from the consumers."""
    arguments = ()
    params = {'shape': Param('shape', ()), 'ctx': Param('str', ''), 'dtype': Param('dtype', 'float32')}
    backward_uses = ()
    fill_value = 0.0

    def _value(self):
        return self.fill_value

    def infer_shape(self, in_shapes, out_shapes):
        from ..util import is_np_shape  # pylint: disable=import-outside-toplevel
        if not self.p.shape and not is_np_shape():
            return in_shapes, out_shapes    # () is an unknown shape in MXNet's legacy shapes
        shape = tuple(max(d, 0) for d in (self.p.shape or ()))
        return in_shapes, [merge_shape(self.op_name, 'output', shape, out_shapes[0])]

    def infer_type(self, in_types, out_types):
        return in_types, [self.p.dtype or 'float32']

    def forward(self, octx, inputs, aux):
        shape = octx.out_shapes[0] if octx.out_shapes else self.p.shape
        if any(d == 0 for d in shape):
            raise MXNetError('%s: output shape %s is not fully known' % (self.op_name, shape))
        return [octx.xp.full(shape, self._value(), dtype=self.p.dtype or 'float32')]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return []


@register
class Zeros(Fill):
    """Zeros of ``shape``."""
    op_name = '_zeros'
    aliases = ('zeros',)


@register
class Ones(Fill):
    """Ones of ``shape``."""
    op_name = '_ones'
    aliases = ('ones',)
    fill_value = 1.0


@register
class Full(Fill):
    """``value`` everywhere in ``shape``."""
    op_name = '_full'
    aliases = ('full',)
    params = dict(Fill.params, value=Param('float', 0.0))

    def _value(self):
        return self.p.value


@register
class Arange(Operator):
    """Evenly spaced values ``start, start+step, ... < stop``, each repeated ``repeat`` times."""
    op_name = '_arange'
    aliases = ('arange',)
    arguments = ()
    backward_uses = ()
    params = {'start': Param('float', 0.0), 'stop': Param('float?', None), 'step': Param('float', 1.0),
              'repeat': Param('int', 1), 'infer_range': Param('bool', False), 'ctx': Param('str', ''),
              'dtype': Param('dtype', 'float32')}

    def _length(self):
        """Number of distinct values (MXNet: ceil((stop - start) / step) in double), or None when
        ``infer_range`` leaves it to the consumers."""
        if self.p.stop is None and self.p.infer_range:
            return None
        start, stop = (0.0, self.p.start) if self.p.stop is None else (self.p.start, self.p.stop)
        if self.p.step == 0:
            raise MXNetError('_arange: step cannot be 0')
        return max(int(np.ceil((stop - start) / self.p.step)), 0)

    def _values(self, count, xp=np):
        """``count`` values ``DType(start) + i * DType(step)`` in the output dtype (integer
        dtypes wrap as in C), each repeated ``repeat`` times."""
        dtype = np.dtype(self.p.dtype or 'float32')
        start = 0.0 if self.p.stop is None and not self.p.infer_range else self.p.start
        if dtype.kind in 'biu':
            first = np.array(start).astype(dtype).astype(np.int64)
            step = np.array(self.p.step).astype(dtype).astype(np.int64)
            vals = (first + np.arange(count, dtype=np.int64) * step).astype(dtype)
        else:
            vals = dtype.type(start) + np.arange(count).astype(dtype) * dtype.type(self.p.step)
        if self.p.repeat != 1:
            vals = np.repeat(vals, self.p.repeat)
        return xp.asarray(vals.astype(dtype, copy=False))

    def infer_shape(self, in_shapes, out_shapes):
        count = self._length()
        if count is None:       # as MXNet: the consumers give the length (and the rank)
            return in_shapes, out_shapes
        return in_shapes, [(count * self.p.repeat,)]

    def infer_type(self, in_types, out_types):
        return in_types, [self.p.dtype or 'float32']

    def forward(self, octx, inputs, aux):
        count = self._length()
        if count is None:
            known = octx.out_shapes[0] if octx.out_shapes else None
            if not known or not known[0]:
                raise MXNetError('_arange(infer_range=True): the length could not be inferred '
                                 'from the consumers of this output')
            count = known[0] // self.p.repeat
        return [self._values(count, octx.xp)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return []


@register
class AddN(Operator):
    """Sum of ``num_args`` arrays of one shape."""
    op_name = 'add_n'
    aliases = ('ElementWiseSum', '_sum')
    params = {'num_args': Param('int')}
    mirror_cheap = True
    backward_uses = ()

    def list_arguments(self):
        return ['arg%d' % i for i in range(self.p.num_args)]

    def forward(self, octx, inputs, aux):
        out = inputs[0].copy()
        for x in inputs[1:]:
            out += x
        return [out]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [out_grads[0]] * self.p.num_args


@register
class CrossDeviceCopy(Operator):
    """Identity that moves its input to the node's device (inserted between ctx_groups)."""
    op_name = '_CrossDeviceCopy'
    aliases = ('_copyto',)
    backward_uses = ()

    def infer_shape(self, in_shapes, out_shapes):
        return forward_shape_infer(self, in_shapes, out_shapes)   # as MXNet: forwards only

    def forward(self, octx, inputs, aux):
        return [octx.xp.array(inputs[0], copy=True)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [out_grads[0]]


@register
class IdentityAttrLikeRhs(Operator):
    """Returns ``lhs``; its shape is tied to ``rhs`` (lets shape inference flow backwards)."""
    op_name = '_identity_with_attr_like_rhs'
    arguments = ('lhs', 'rhs')
    backward_uses = ()

    def forward(self, octx, inputs, aux):
        return [inputs[0].copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [out_grads[0], None]


@register
class BatchTake(Operator):
    """``out[i] = a[i, indices[i]]`` for a 2-D ``a`` (deprecated in MXNet; no gradient)."""
    op_name = 'batch_take'
    arguments = ('a', 'indices')
    differentiable = False

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: the output is indices' shape; a must be fully known (>= 2 dims) and its
        # size over its last dim that of the output
        a, idx = in_shapes
        out = merge_shape(self.op_name, 'output', out_shapes[0], idx)
        if a is None or len(a) < 2 or 0 in a or out is None or 0 in out or (
                int(np.prod(a)) // a[-1] != int(np.prod(out))):
            raise MXNetError('batch_take: a %s must be known with at least 2 dims and indices %s '
                             'known with one index per row of a' % (a, idx))
        return [a, idx], [out]

    def infer_type(self, in_types, out_types):
        return [in_types[0], in_types[1] or 'int32'], [in_types[0]]

    def forward(self, octx, inputs, aux):
        a, idx = inputs
        xp = octx.xp
        cols = xp.clip(idx.astype('int64'), 0, a.shape[1] - 1)
        return [a[xp.arange(a.shape[0]), cols]]
