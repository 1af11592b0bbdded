"""Diagonals and n-d gather/scatter: diag, gather_nd and scatter_nd (MXNet 1.9.1 names,
defaults and shape inference; part of ``indexing``)."""
import numpy as np

from ..base import MXNetError, MXNetIndexError
from .base import Operator, Param, register, merge_shape
from .shape import ShapeOnly, is_known, norm_axis, prod, save_shape, saved_shape
from .indexing import as_index, scatter_rows, typed_like_first


# ---- diagonals and n-d gather/scatter ---------------------------------------------------------
@register
class Diag(ShapeOnly):
    """1-D input: a square matrix with it on diagonal ``k``; n-D: the diagonal ``k`` of the plane
    (axis1, axis2), appended as the last axis."""
    op_name = 'diag'
    params = {'k': Param('int', 0), 'axis1': Param('int', 0), 'axis2': Param('int', 1)}

    def _plane(self, ndim):
        a = norm_axis('diag', self.p.axis1, ndim, 'axis1')
        b = norm_axis('diag', self.p.axis2, ndim, 'axis2')
        if a == b:
            raise MXNetError('diag: axis1 and axis2 cannot refer to the same axis %d' % a)
        return a, b

    def _out(self, shape):
        k = self.p.k
        if not shape:
            raise MXNetError('diag: the input must have at least one dimension')
        if len(shape) == 1:
            return (shape[0] + abs(k),) * 2
        a, b = self._plane(len(shape))
        length = min(shape[a] + min(k, 0), shape[b] - max(k, 0))
        if length <= 0:
            raise MXNetError('diag: diagonal %d does not exist for shape %s' % (k, tuple(shape)))
        return tuple(d for i, d in enumerate(shape) if i not in (a, b)) + (length,)

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:
            return in_shapes, out_shapes
        if not is_known(data):
            # MXNet computes the output with the unknown dims (-1) and fails when the result is
            # not fully known; a 1-D input off the main diagonal gives it dims it reports as 0
            if len(data) != 1 or self.p.k == 0:
                raise MXNetError('diag: the diagonal of a partially known shape %s is unknown'
                                 % (tuple(data),))
            return in_shapes, [merge_shape('diag', 'output', out_shapes[0], (0, 0))]
        return in_shapes, [merge_shape('diag', 'output', out_shapes[0], self._out(data))]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        save_shape(octx, x)
        self._out(x.shape)
        if x.ndim == 1:
            return [octx.xp.diag(x, self.p.k)]
        a, b = self._plane(x.ndim)
        return [octx.xp.diagonal(x, self.p.k, a, b).copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        shape = saved_shape(octx, inputs)[0]
        dy = out_grads[0]
        if len(shape) == 1:
            return [xp.diagonal(dy, self.p.k).copy()]
        a, b = self._plane(len(shape))
        grad = xp.zeros(shape, dtype=dy.dtype)
        plane = xp.moveaxis(grad, (a, b), (-2, -1))
        steps = xp.arange(dy.shape[-1])
        plane[..., steps + max(-self.p.k, 0), steps + max(self.p.k, 0)] = dy
        return [grad]


def _nd_rows(op, xp, indices, dims):
    """Row numbers in the (prod(dims), rest) view of the positions in ``indices`` (m, ...)."""
    idx = as_index(xp, indices).reshape(indices.shape[0], -1)
    rows = xp.zeros(idx.shape[1], dtype=np.int64)
    for j, d in enumerate(dims):
        bad = (idx[j] < -d) | (idx[j] >= d)
        if bool(bad.any()):
            value = int(idx[j][bad].reshape(-1)[0])
            raise MXNetIndexError('%s: index %d is out of bounds for axis %d with size %d'
                                  % (op, value, j, d))
        rows = rows * d + xp.mod(idx[j], d)
    return rows


@register
class GatherND(Operator):
    """out[y...] = data[indices[0, y...], ..., indices[m-1, y...]] (trailing axes kept)."""
    op_name = 'gather_nd'
    arguments = ('data', 'indices')
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        data, idx = in_shapes
        if not is_known(data) or not is_known(idx):     # MXNet waits for both whole shapes
            return in_shapes, out_shapes
        if len(idx) < 2 or idx[0] > len(data):
            raise MXNetError('gather_nd: indices of shape %s do not fit data of shape %s (need '
                             'ndim >= 2 and shape[0] <= data ndim)' % (tuple(idx), tuple(data)))
        out = tuple(idx[1:]) + tuple(data[idx[0]:])
        return in_shapes, [merge_shape('gather_nd', 'output', out_shapes[0], out)]

    def infer_type(self, in_types, out_types):
        return typed_like_first(in_types, out_types)

    def forward(self, octx, inputs, aux):
        data, idx = inputs
        m = idx.shape[0]
        rows = _nd_rows('gather_nd', octx.xp, idx, data.shape[:m])
        flat = data.reshape((prod(data.shape[:m]),) + data.shape[m:])
        return [flat[rows].reshape(idx.shape[1:] + data.shape[m:])]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        data, idx = inputs
        m = idx.shape[0]
        rows = _nd_rows('gather_nd', octx.xp, idx, data.shape[:m])
        values = out_grads[0].reshape(rows.size, prod(data.shape[m:]))
        grad = scatter_rows(octx.xp, prod(data.shape[:m]), rows, values)
        return [grad.reshape(data.shape), None]


@register
class ScatterND(Operator):
    """The inverse of gather_nd: an array of ``shape`` holding ``data`` at ``indices``, zeros
    elsewhere (of duplicate positions one value is kept)."""
    op_name = 'scatter_nd'
    arguments = ('data', 'indices')
    params = {'shape': Param('shape')}
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        out = merge_shape('scatter_nd', 'output', out_shapes[0], self.p.shape)
        data, idx = in_shapes
        if not is_known(data) or not is_known(idx):
            return in_shapes, [out]
        m = idx[0]
        if len(idx) < 2 or m > len(out) or \
                tuple(data) != tuple(idx[1:]) + tuple(out[m:]):
            raise MXNetError('scatter_nd: invalid combination of data %s, indices %s and shape %s'
                             % (tuple(data), tuple(idx), tuple(out)))
        return in_shapes, [out]

    def infer_type(self, in_types, out_types):
        return typed_like_first(in_types, out_types)

    def forward(self, octx, inputs, aux):
        data, idx = inputs
        shape, m = self.p.shape, idx.shape[0]
        rows = _nd_rows('scatter_nd', octx.xp, idx, shape[:m])
        out = octx.xp.zeros((prod(shape[:m]), prod(shape[m:])), dtype=data.dtype)
        out[rows] = data.reshape(rows.size, -1)
        return [out.reshape(shape)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        data, idx = inputs
        shape, m = self.p.shape, idx.shape[0]
        rows = _nd_rows('scatter_nd', octx.xp, idx, shape[:m])
        flat = out_grads[0].reshape(prod(shape[:m]), -1)
        return [flat[rows].reshape(data.shape), None]
