"""contrib.quantize and contrib.dequantize: float32 <-> uint8 (affine over [min, max]) or
int8 (zero-centred over +-max(|min|, |max|)) with MXNet's rounding; zero gradients, as MXNet."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape


class _Quantization(Operator):
    """data, min_range (1,), max_range (1,); zero gradients."""
    arguments = ('data', 'min_range', 'max_range')
    backward_uses = ()

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: the output from data, and data's first dim from the output
        data, out = in_shapes[0], merge_shape(self.op_name, 'output', out_shapes[0], in_shapes[0])
        if out is not None:
            if data is None:        # MXNet writes into the unknown shape, and fails
                raise MXNetError('%s: the shape of data must be known' % self.op_name)
            data = merge_shape(self.op_name, 'data', data, (out[0],) + (0,) * (len(data) - 1))
        return [data, (1,), (1,)], [out] + [(1,)] * (len(out_shapes) - 1)

    def forward(self, octx, inputs, aux):
        octx.saved['meta'] = [(tuple(x.shape), x.dtype) for x in inputs]
        f32 = np.float32
        lo, hi = (x.reshape(-1)[:1].astype(f32) for x in inputs[1:])
        return self.compute(octx.xp, inputs[0], lo, hi)

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [octx.xp.zeros(s, d) for s, d in octx.saved['meta']]


@register
class Quantize(_Quantization):
    """Quantize float32 ``data`` to ``out_type``; outputs the data and its (min, max) range."""
    op_name = '_contrib_quantize'
    outputs = ('output', 'min_output', 'max_output')
    params = {'out_type': Param('str', 'uint8', ('int8', 'uint8'))}

    def infer_type(self, in_types, out_types):
        return ['float32'] * 3, [self.p.out_type, 'float32', 'float32']

    def compute(self, xp, data, lo, hi):
        x = data.astype(np.float32)
        if self.p.out_type == 'uint8':
            scale = np.float64(255) / (hi - lo).astype(np.float64)
            out = ((x - lo) * scale + 0.5).astype(np.uint8)
            return [out, lo, hi]
        real = xp.maximum(xp.abs(lo), xp.abs(hi))
        scale = np.float32(127) / real
        out = (xp.sign(x) * xp.minimum(xp.abs(x) * scale + np.float32(0.5), np.float32(127)))
        return [out.astype(np.int8), -real, real]


@register
class Dequantize(_Quantization):
    """Dequantize uint8/int8 ``data`` over its (min, max) range to float32."""
    op_name = '_contrib_dequantize'
    params = {'out_type': Param('str', 'float32', ('float32',))}

    def infer_type(self, in_types, out_types):
        if in_types[0] is not None and in_types[0] not in ('uint8', 'int8'):   # as MXNet
            raise MXNetError('_contrib_dequantize: the input data type must be uint8 or int8, '
                             'got %s' % in_types[0])
        return [in_types[0], 'float32', 'float32'], ['float32']

    def compute(self, xp, data, lo, hi):
        f32 = np.float32
        if data.dtype == np.uint8:
            scale = (hi - lo) / f32(255)
            return [(data.astype(f32) * scale + lo).astype(f32)]
        real = xp.maximum(xp.abs(lo), xp.abs(hi))
        return [(data.astype(f32) * (real / f32(127))).astype(f32)]
