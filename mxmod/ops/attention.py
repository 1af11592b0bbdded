"""contrib's interleaved multi-head attention products: interleaved_matmul_selfatt_qk /
selfatt_valatt (one (L, B, heads*3*D) tensor of interleaved query/key/value projections) and
encdec_qk / encdec_valatt (queries (Lq, B, heads*D) and interleaved keys/values
(Lk, B, heads*2*D)). Scores are (B*heads, Lq, Lk) with queries divided by sqrt(D); weighted
values come back as (Lq, B, heads*D)."""
import math

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape, mx_dim, from_mx_dims, rank_check


def split_heads(x, heads, parts, index):
    """The ``index``-th of ``parts`` interleaved projections of (L, B, heads*parts*D) as
    (B*heads, L, D)."""
    length, batch, width = x.shape
    if width % (heads * parts):
        raise MXNetError('interleaved_matmul: the last dim %d of shape %s is not heads=%d times '
                         '%d parts of one width' % (width, tuple(x.shape), heads, parts))
    dim = width // (heads * parts)
    part = x.reshape(length, batch, heads, parts, dim)[:, :, :, index, :]
    return part.transpose(1, 2, 0, 3).reshape(batch * heads, length, dim)


def join_heads(xp, grad, shape, heads, parts, index):
    """The adjoint of :func:`split_heads`: a zero (L, B, heads*parts*D) gradient with ``grad``
    (B*heads, L, D) in its slot."""
    length, batch, width = shape
    dim = width // (heads * parts)
    out = xp.zeros((length, batch, heads, parts, dim), dtype=grad.dtype)
    out[:, :, :, index, :] = grad.reshape(batch, heads, length, dim).transpose(2, 0, 1, 3)
    return out.reshape(shape)


def merge_heads(values, batch, heads):
    """(B*heads, L, D) -> (L, B, heads*D)."""
    _, length, dim = values.shape
    return values.reshape(batch, heads, length, dim).transpose(2, 0, 1, 3).reshape(
        length, batch, heads * dim)


def unmerge_heads(grad, heads):
    """The adjoint of :func:`merge_heads`: (L, B, heads*D) -> (B*heads, L, D)."""
    length, batch, width = grad.shape
    return grad.reshape(length, batch, heads, width // heads).transpose(1, 2, 0, 3).reshape(
        batch * heads, length, width // heads)


class _Interleaved(Operator):
    """Shared parameter."""
    params = {'heads': Param('int')}
    backward_uses = ('inputs',)


class _ScoresQK(_Interleaved):
    """Scores q.k^T / sqrt(D) of the projections (queries in part 0 of ``q_parts``, keys in part
    0 of ``k_parts``, from the same tensor when self-attention)."""
    q_parts = k_parts = 1

    def _qk(self, inputs):
        q_src, k_src = (inputs[0], inputs[0]) if len(inputs) == 1 else inputs
        q = split_heads(q_src, self.p.heads, self.q_parts, 0)
        k = split_heads(k_src, self.p.heads, self.k_parts, 1 if self.k_parts == 3 else 0)
        return q, k, q.dtype.type(1.0 / math.sqrt(q.shape[-1]))

    def forward(self, octx, inputs, aux):
        q, k, scale = self._qk(inputs)
        return [octx.xp.matmul(q * scale, k.transpose(0, 2, 1))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, dy = octx.xp, out_grads[0]
        q, k, scale = self._qk(inputs)
        dq = xp.matmul(dy, k) * scale
        dk = xp.matmul(dy.transpose(0, 2, 1), q) * scale
        heads = self.p.heads
        if len(inputs) == 1:
            return [join_heads(xp, dq, inputs[0].shape, heads, 3, 0) +
                    join_heads(xp, dk, inputs[0].shape, heads, 3, 1)]
        return [join_heads(xp, dq, inputs[0].shape, heads, 1, 0),
                join_heads(xp, dk, inputs[1].shape, heads, 2, 0)]


@register
class SelfAttQK(_ScoresQK):
    """interleaved_matmul_selfatt_qk(queries_keys_values, heads): (B*heads, L, L)."""
    op_name = '_contrib_interleaved_matmul_selfatt_qk'
    arguments = ('queries_keys_values',)
    q_parts = k_parts = 3

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet (its arithmetic on unknown dims included)
        qkv = in_shapes[0]
        rank_check(self.op_name, 'queries_keys_values', qkv, 3, '(seq_length, batch, 3*proj_dim)')
        q = [mx_dim(d) for d in qkv]
        out = from_mx_dims(self.op_name, (self.p.heads * q[1], q[0], q[0]))
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]


@register
class EncDecQK(_ScoresQK):
    """interleaved_matmul_encdec_qk(queries, keys_values, heads): (B*heads, Lq, Lk)."""
    op_name = '_contrib_interleaved_matmul_encdec_qk'
    arguments = ('queries', 'keys_values')
    q_parts, k_parts = 1, 2

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet (dims compared and computed as there: -1 where unknown)
        q_shape, kv_shape = in_shapes
        rank_check(self.op_name, 'queries', q_shape, 3, '(seq_length, batch, proj_dim)')
        rank_check(self.op_name, 'keys_values', kv_shape, 3, '(seq_length, batch, 2*proj_dim)')
        q, kv = [mx_dim(d) for d in q_shape], [mx_dim(d) for d in kv_shape]
        if q[2] * 2 != kv[2] or q[1] != kv[1]:
            raise MXNetError('%s: keys_values %s must have the batch of queries %s and twice its '
                             'projection width' % (self.op_name, tuple(kv_shape), tuple(q_shape)))
        out = from_mx_dims(self.op_name, (q[1] * self.p.heads, q[0], kv[0]))
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]


class _WeightedValues(_Interleaved):
    """attention (B*heads, Lq, Lk) applied to the values (part ``v_index`` of ``parts``)."""
    arguments = ('values', 'attention')
    parts = v_index = 1

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet (dims compared and computed as there: -1 where unknown; C division)
        src_shape, att_shape = in_shapes
        rank_check(self.op_name, self.arguments[0], src_shape, 3)
        rank_check(self.op_name, 'attention', att_shape, 3)
        src, att = [mx_dim(d) for d in src_shape], [mx_dim(d) for d in att_shape]
        if self.parts == 3:
            bad = src[0] != att[1] or src[0] != att[2] or math.fmod(src[2], 3)
        else:
            bad = src[0] != att[2] or src[1] * self.p.heads != att[0]
        if bad:
            raise MXNetError('%s: attention %s does not fit %s %s (heads=%d)'
                             % (self.op_name, tuple(att_shape), self.arguments[0],
                                tuple(src_shape), self.p.heads))
        out = from_mx_dims(self.op_name, (att[1], src[1], int(src[2] / self.parts)))
        return in_shapes, [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def forward(self, octx, inputs, aux):
        src, att = inputs
        v = split_heads(src, self.p.heads, self.parts, self.v_index)
        return [merge_heads(octx.xp.matmul(att, v), src.shape[1], self.p.heads)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        src, att = inputs
        v = split_heads(src, self.p.heads, self.parts, self.v_index)
        dy = unmerge_heads(out_grads[0], self.p.heads)
        dv = xp.matmul(att.transpose(0, 2, 1), dy)
        datt = xp.matmul(dy, v.transpose(0, 2, 1))
        return [join_heads(xp, dv, src.shape, self.p.heads, self.parts, self.v_index), datt]


@register
class SelfAttValAtt(_WeightedValues):
    """interleaved_matmul_selfatt_valatt(queries_keys_values, attention, heads)."""
    op_name = '_contrib_interleaved_matmul_selfatt_valatt'
    arguments = ('queries_keys_values', 'attention')
    parts, v_index = 3, 2


@register
class EncDecValAtt(_WeightedValues):
    """interleaved_matmul_encdec_valatt(keys_values, attention, heads)."""
    op_name = '_contrib_interleaved_matmul_encdec_valatt'
    arguments = ('keys_values', 'attention')
    parts, v_index = 2, 1
