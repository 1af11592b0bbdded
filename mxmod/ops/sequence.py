"""Variable-length sequence operators: SequenceMask, SequenceLast and SequenceReverse.

The data is laid out with time on ``axis`` (0: ``(T, N, ...)``, the default; 1: ``(N, T, ...)``).
With ``use_sequence_length`` a second argument ``sequence_length`` of shape ``(N,)`` gives the valid
length of each sequence; its values are truncated to integers as MXNet does."""
from ..base import MXNetError
from .base import Operator, Param, register, merge_shape

_COMMON = {'use_sequence_length': Param('bool', False), 'axis': Param('int', 0)}


class _SequenceOp(Operator):
    """Shared argument list, validation and inference of the three sequence operators."""
    params = dict(_COMMON)
    allowed_axes = (0, 1)
    backward_uses = ('inputs',)
    reads_batch = True      # MXNet's inference reads data's batch dim even when unknown

    def check_axis(self):
        """(checked when shapes are inferred or computed, as MXNet: a symbol may be made)"""
        if self.p.axis not in self.allowed_axes:
            raise MXNetError('%s: axis must be one of %s, got %d'
                             % (self.op_name, list(self.allowed_axes), self.p.axis))

    def list_arguments(self):
        if self.p.use_sequence_length:
            return ['data', 'sequence_length']
        return ['data']

    def batch_axis(self):
        """Axis of the batch dimension in ``data``."""
        return 1 - self.p.axis

    def out_shape_of(self, data_shape):
        """Output shape for a (possibly partial) data shape."""
        return data_shape

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: from data forwards only; MXNet reads the batch dim of data even when its
        # shape is unknown (SequenceReverse only for sequence_length), and fails
        self.check_axis()
        data = in_shapes[0]
        if data is None:
            if self.reads_batch or self.p.use_sequence_length:
                raise MXNetError('%s: the shape of data must be known' % self.op_name)
            return list(in_shapes), list(out_shapes)
        if len(data) < 2:
            raise MXNetError('%s: data must have at least 2 dimensions (time and batch), got %s'
                             % (self.op_name, data))
        shapes = [data]
        if self.p.use_sequence_length:
            shapes.append(merge_shape(self.op_name, 'sequence_length', in_shapes[1],
                                      (data[self.batch_axis()],)))
        return shapes, [self.out_shape_of(data)]

    def infer_type(self, in_types, out_types):
        dtype = in_types[0] or (out_types[0] if out_types else None)
        if dtype is None:
            return in_types, out_types
        types = [dtype]
        if self.p.use_sequence_length:
            types.append(in_types[1] or dtype)
        return types, [dtype]

    # ---- helpers -------------------------------------------------------------------------------
    def lengths(self, xp, inputs):
        """Integer lengths per batch element (``(N,)``), or None without sequence_length."""
        if not self.p.use_sequence_length:
            return None
        data, seq = inputs[0], inputs[1]
        lengths = seq.astype('int64')
        max_len = data.shape[self.p.axis]
        if lengths.shape != (data.shape[self.batch_axis()],):
            raise MXNetError('%s: sequence_length must have shape (%d,), got %s'
                             % (self.op_name, data.shape[self.batch_axis()], tuple(lengths.shape)))
        return xp.clip(lengths, 0, max_len)

    def time_major(self, xp, arr):
        """View of ``arr`` with time first and batch second."""
        return arr if self.p.axis == 0 else xp.swapaxes(arr, 0, 1)

    def seq_grad(self, xp, inputs):
        """Gradient list entry for sequence_length (zeros: the lengths are not differentiable)."""
        return [xp.zeros_like(inputs[1])] if self.p.use_sequence_length else []


@register
class SequenceMask(_SequenceOp):
    """Set the steps beyond each sequence's length to ``value``."""
    op_name = 'SequenceMask'
    params = dict(_COMMON, value=Param('float', 0.0))
    mirror_cheap = True

    def valid_mask(self, xp, inputs):
        """Boolean array broadcastable to data, True on the valid steps (None: all valid)."""
        lengths = self.lengths(xp, inputs)
        if lengths is None:
            return None
        data = inputs[0]
        steps = xp.arange(data.shape[self.p.axis])
        if self.p.axis == 0:
            mask = steps[:, None] < lengths[None, :]
        else:
            mask = lengths[:, None] > steps[None, :]
        return mask.reshape(mask.shape + (1,) * (data.ndim - 2))

    def forward(self, octx, inputs, aux):
        self.check_axis()
        xp = octx.xp
        data = inputs[0]
        mask = self.valid_mask(xp, inputs)
        if mask is None:
            return [data.copy()]
        return [xp.where(mask, data, xp.asarray(self.p.value, dtype=data.dtype))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        mask = self.valid_mask(xp, inputs)
        grad = out_grads[0] if mask is None else out_grads[0] * mask
        return [grad.astype(inputs[0].dtype, copy=False)] + self.seq_grad(xp, inputs)


@register
class SequenceLast(_SequenceOp):
    """Take the last valid step of every sequence: output shape is data's without ``axis``."""
    op_name = 'SequenceLast'

    def out_shape_of(self, data_shape):
        axis = self.p.axis
        return tuple(data_shape[:axis]) + tuple(data_shape[axis + 1:])

    def last_index(self, xp, inputs):
        """(time index, batch index) arrays selecting the last valid step of each sequence."""
        data = inputs[0]
        batch = data.shape[self.batch_axis()]
        lengths = self.lengths(xp, inputs)
        if lengths is None:
            steps = xp.full((batch,), data.shape[self.p.axis] - 1, dtype='int64')
        else:
            steps = xp.maximum(lengths - 1, 0)
        return steps, xp.arange(batch)

    def forward(self, octx, inputs, aux):
        self.check_axis()
        xp = octx.xp
        steps, batch = self.last_index(xp, inputs)
        return [self.time_major(xp, inputs[0])[steps, batch]]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        steps, batch = self.last_index(xp, inputs)
        grad = xp.zeros_like(inputs[0])
        self.time_major(xp, grad)[steps, batch] = out_grads[0]
        return [grad] + self.seq_grad(xp, inputs)


@register
class SequenceReverse(_SequenceOp):
    """Reverse each sequence within its valid length; padding steps stay where they are."""
    op_name = 'SequenceReverse'
    allowed_axes = (0,)
    mirror_cheap = True
    reads_batch = False

    def source_index(self, xp, inputs):
        """(time, batch) index arrays of shape (T, N): output[t, b] = data[src[t, b], b]."""
        data = inputs[0]
        steps = xp.arange(data.shape[0])[:, None]
        lengths = self.lengths(xp, inputs)
        if lengths is None:
            lengths = xp.full((data.shape[1],), data.shape[0], dtype='int64')
        lengths = lengths[None, :]
        src = xp.where(steps < lengths, lengths - 1 - steps, steps)
        return src, xp.arange(data.shape[1])[None, :]

    def forward(self, octx, inputs, aux):
        self.check_axis()
        src, batch = self.source_index(octx.xp, inputs)
        return [inputs[0][src, batch]]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        # the permutation is its own inverse, so the gradient is reversed the same way
        src, batch = self.source_index(octx.xp, inputs)
        return [out_grads[0][src, batch]] + self.seq_grad(octx.xp, inputs)
