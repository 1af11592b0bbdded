"""Operators of mixed-precision training: amp_cast, amp_multicast, all_finite and
multi_all_finite.

As in MXNet, the AMP casts convert only between the low-precision float types and float32
(inputs of any other dtype pass through unchanged), and their gradients are cast back to each
input's dtype. The finiteness checks write a float32 (1,) flag: 1 when every element of every
input is finite; with ``init_output=False`` an existing flag (the ``out=`` array of an imperative
call) is only ever lowered to 0, so one flag can collect several calls."""
import numpy as np

from .base import Operator, Param, register

_AMP_TYPES = ('float16', 'float32', 'bfloat16')
_CAST_CHOICES = ('bfloat16', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8')


class _AmpCastBase(Operator):
    """Casts whose gradient is the head gradient cast back to each input's dtype."""
    backward_uses = ()
    mirror_cheap = True

    def forward(self, octx, inputs, aux):
        octx.saved['in_dtypes'] = [x.dtype for x in inputs]
        targets = self.targets([x.dtype.name for x in inputs])
        return [x if x.dtype == t else x.astype(t) for x, t in zip(inputs, targets)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [None if g is None else g.astype(t, copy=False)
                for g, t in zip(out_grads, octx.saved['in_dtypes'])]

    def infer_type(self, in_types, out_types):
        if any(t is None for t in in_types):
            return in_types, out_types
        return in_types, self.targets(in_types)


@register
class AmpCast(_AmpCastBase):
    """Cast a float16/float32 input to ``dtype``; other dtypes are returned unchanged."""
    op_name = 'amp_cast'
    params = {'dtype': Param('dtype', choices=_CAST_CHOICES)}

    def targets(self, dtypes):
        return [self.p.dtype if dtypes[0] in _AMP_TYPES else dtypes[0]]


@register
class AmpMultiCast(_AmpCastBase):
    """Cast ``num_outputs`` inputs to their widest float type (float32 when any is float32), or
    with ``cast_narrow`` to the narrowest (float16 when any is float16); inputs of other dtypes
    are returned unchanged."""
    op_name = 'amp_multicast'
    params = {'num_outputs': Param('int'), 'cast_narrow': Param('bool', False)}

    def list_arguments(self):
        return ['data_%d' % i for i in range(self.p.num_outputs)]

    def list_outputs(self):
        return ['output%d' % i for i in range(self.p.num_outputs)]

    def targets(self, dtypes):
        if self.p.cast_narrow:
            target = 'float16' if 'float16' in dtypes else 'float32'
        else:
            target = 'float32' if 'float32' in dtypes else dtypes[0]
        return [target if t in _AMP_TYPES else t for t in dtypes]

    def infer_shape(self, in_shapes, out_shapes):
        shapes = [i if i is not None else o for i, o in zip(in_shapes, out_shapes)]
        return shapes, list(shapes)

    def infer_type(self, in_types, out_types):
        # as MXNet: the outputs of the known inputs, cast to the widest (narrowest) type seen
        # among the inputs and outputs so far
        seen = [t for t in list(in_types) + list(out_types) if t is not None]
        if self.p.cast_narrow:
            target = next((t for t in ('float16', 'bfloat16') if t in seen), 'float32')
        else:
            target = 'float32' if 'float32' in seen else in_types[0]
        outs = [(target if t in _AMP_TYPES else t) if t is not None else o
                for t, o in zip(in_types, out_types)]
        return list(in_types), outs


class _Finite(Operator):
    """1.0 (float32, shape (1,)) when every element of every input is finite, else 0.0."""
    params = {'init_output': Param('bool', True)}
    differentiable = False
    backward_uses = ()
    accumulates_into_out = True   # an imperative ``out=`` array is read when init_output=False

    def infer_shape(self, in_shapes, out_shapes):
        return in_shapes, [(1,)]

    def infer_type(self, in_types, out_types):
        return in_types, ['float32']

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        finite = True
        for x in inputs:
            finite = xp.logical_and(finite, xp.isfinite(x.astype(np.float32, copy=False)).all())
        flag = xp.asarray(finite, dtype=np.float32).reshape(1)
        previous = octx.out[0] if octx.out else None
        if not self.p.init_output and previous is not None:
            flag = xp.minimum(flag, (previous.reshape(1) != 0).astype(np.float32))
        return [flag]


@register
class AllFinite(_Finite):
    """all_finite(data): whether every element of ``data`` is finite."""
    op_name = 'all_finite'


@register
class MultiAllFinite(_Finite):
    """multi_all_finite(*arrays, num_arrays): whether every element of every array is finite."""
    op_name = 'multi_all_finite'
    params = {'num_arrays': Param('int', 1), 'init_output': Param('bool', True)}

    def list_arguments(self):
        return ['array_%d' % i for i in range(self.p.num_arrays)]
