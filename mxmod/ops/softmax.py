"""Softmax family: softmax, log_softmax, softmin (with temperature, dtype and length masking) and
the deprecated SoftmaxActivation (instance or channel mode)."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape, same_shape_infer

__all__ = ['Softmax', 'LogSoftmax', 'Softmin', 'SoftmaxActivation']


def _length_mask(xp, length, shape, axis):
    """Boolean array (broadcastable to ``shape``): True where the position along ``axis`` is
    below the row's length."""
    pos_shape = [1] * len(shape)
    pos_shape[axis] = shape[axis]
    pos = xp.arange(shape[axis]).reshape(pos_shape)
    return pos < xp.expand_dims(length.astype(np.int64), axis)


class _SoftmaxBase(Operator):
    """Shared parameters and maths; subclasses choose log output and negation."""
    params = {'axis': Param('int', -1), 'temperature': Param('float?', None),
              'dtype': Param('dtype?', None), 'use_length': Param('bool?', False)}
    log = False
    negate = False
    mirror_cheap = True
    backward_uses = ('outputs',)

    takes_length = False

    def setup(self):
        if self.p.use_length and not self.takes_length:
            raise MXNetError('%s: use_length=True is supported by softmax only (MXNet 1.9.1 gives '
                             '%s a single input)' % (self.op_name, self.op_name))
        if self.p.use_length or self.p.dtype is not None:
            self.backward_uses = ('inputs', 'outputs')

    def list_arguments(self):
        return ['data', 'length'] if self.p.use_length else ['data']

    def infer_shape(self, in_shapes, out_shapes):
        data = merge_shape(self.op_name, 'data', in_shapes[0], out_shapes[0])
        if not self.p.use_length:
            return [data], [data]
        length = in_shapes[1]
        if data is not None:
            axis = self.p.axis % len(data)
            rest = tuple(d for i, d in enumerate(data) if i != axis) or (1,)
            length = merge_shape(self.op_name, 'length', length, rest)
        return [data, length], [data]

    def infer_type(self, in_types, out_types):
        out = self.p.dtype or out_types[0] or in_types[0]
        ins = list(in_types)
        ins[0] = ins[0] or out
        return ins, [out]

    def _temp(self):
        return 1.0 if self.p.temperature is None else self.p.temperature

    def forward(self, octx, inputs, aux):
        xp, x = octx.xp, inputs[0]
        axis = self.p.axis % x.ndim
        z = -x if self.negate else x
        if self._temp() != 1.0:
            z = z / x.dtype.type(self._temp())
        mask = _length_mask(xp, inputs[1], x.shape, axis) if self.p.use_length else None
        if mask is not None:
            z = xp.where(mask, z, -xp.inf)
        z = z - z.max(axis=axis, keepdims=True)
        if self.log:
            out = z - xp.log(xp.exp(z).sum(axis=axis, keepdims=True))
        else:
            e = xp.exp(z)
            out = e / e.sum(axis=axis, keepdims=True)
        if mask is not None:
            out = xp.where(mask, out, 0)
        return [out.astype(self.p.dtype or x.dtype, copy=False)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        x = inputs[0] if inputs[0] is not None else outputs[0]
        axis = self.p.axis % x.ndim
        y, dy = outputs[0].astype(x.dtype, copy=False), out_grads[0].astype(x.dtype, copy=False)
        if self.p.use_length:
            dy = xp.where(_length_mask(xp, inputs[1], x.shape, axis), dy, 0)
        if self.log:
            dx = dy - xp.exp(y) * dy.sum(axis=axis, keepdims=True)
        else:
            dx = y * (dy - (dy * y).sum(axis=axis, keepdims=True))
        if self.negate:
            dx = -dx
        if self._temp() != 1.0:
            dx = dx / x.dtype.type(self._temp())
        grads = [dx]
        if self.p.use_length:
            grads.append(xp.zeros_like(inputs[1]))
        return grads


@register
class Softmax(_SoftmaxBase):
    """exp(x / T) normalised along ``axis``; with ``use_length`` a second input gives the number
    of valid positions along ``axis`` per row (the rest output 0)."""
    op_name = 'softmax'
    takes_length = True

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: the output from data (data learns nothing from it); the length from data
        data = in_shapes[0]
        ins = list(in_shapes)
        if self.p.use_length:
            if data is None:
                raise MXNetError('softmax: with use_length the shape of data must be known to '
                                 'give the shape of length')
            axis = self.p.axis if self.p.axis != -1 else len(data) - 1
            ins[1] = tuple(d for i, d in enumerate(data) if i != axis) or (1,)
        out = merge_shape(self.op_name, 'output', out_shapes[0], data)
        return ins, [out]


@register
class LogSoftmax(_SoftmaxBase):
    """log(softmax(x / T)) along ``axis``."""
    op_name = 'log_softmax'
    log = True


@register
class Softmin(_SoftmaxBase):
    """softmax(-x / T) along ``axis``."""
    op_name = 'softmin'
    negate = True


@register
class SoftmaxActivation(Operator):
    """Softmax over the last axis with the leading axes flattened (``mode='instance'``; one
    softmax per instance for 2-D data) or over axis 1 at every position (``mode='channel'``)."""
    op_name = 'SoftmaxActivation'
    params = {'mode': Param('str', 'instance', choices=('instance', 'channel'))}
    mirror_cheap = True
    backward_uses = ('outputs',)

    def infer_shape(self, in_shapes, out_shapes):
        return same_shape_infer(self, in_shapes, out_shapes)

    def _view(self, x):
        if self.p.mode == 'instance':
            return x.reshape(-1, x.shape[-1])
        return x.reshape(x.shape[0], x.shape[1], -1)

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        z = self._view(x)
        z = z - z.max(axis=1, keepdims=True)
        e = octx.xp.exp(z)
        return [(e / e.sum(axis=1, keepdims=True)).reshape(x.shape)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        # MXNet 1.9.1 reduces over axis 1 of (N, C, rest) in both modes; for instance mode on data
        # with more than 2 axes that is not the exact gradient of its forward, but it is MXNet's.
        shape = outputs[0].shape
        view = (shape[0], shape[1] if len(shape) > 1 else 1, -1)
        y = outputs[0].reshape(view)
        dy = out_grads[0].reshape(view)
        return [(y * (dy - (dy * y).sum(axis=1, keepdims=True))).reshape(shape)]
