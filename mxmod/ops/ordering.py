"""Ordering operators: topk, sort and argsort (stable order; ties keep index order)."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from .reduce import _INDEX_DTYPES, _norm_axis


# ---- topk / sort / argsort --------------------------------------------------------------------
def _stable_order(xp, x, ascending):
    """Stable sorting permutation along the last axis; descending order keeps ties in index order."""
    if ascending:
        return xp.argsort(x, axis=-1, kind='stable')
    key = -x if x.dtype.kind in 'fi' else -x.astype(np.int64)
    return xp.argsort(key, axis=-1, kind='stable')


def _scatter_last(xp, shape, idx, vals, dtype):
    """Array of ``shape`` (sorting axis last) with ``vals`` placed at ``idx`` along the last axis."""
    lead = int(np.prod(shape[:-1], dtype=np.int64))
    n = shape[-1]
    flat = (xp.arange(lead).reshape(-1, 1) * n + idx.reshape(lead, -1).astype(np.int64)).reshape(-1)
    out = xp.zeros(lead * n, dtype=dtype)
    out[flat] = vals.reshape(-1)
    return out.reshape(shape)


class _Ordering(Operator):
    """Shared machinery: view the input with the sorting axis last (None: flattened)."""
    backward_uses = ('outputs',)
    ret_typ, is_ascend, k = 'indices', True, 0

    def _axis(self, ndim):
        return None if self.p.axis is None else _norm_axis(self.op_name, self.p.axis, ndim)

    def _k(self, n):
        k = self.k if self.k > 0 else n
        if k > n:
            raise MXNetError('%s: k must be at most the %d elements along the axis, got k=%d'
                             % (self.op_name, n, k))
        return k

    def _target_shape(self, shape):
        shape = tuple(shape)
        if self.ret_typ == 'mask':
            return shape
        axis = self._axis(len(shape))
        n = int(np.prod(shape, dtype=np.int64)) if axis is None else shape[axis]
        k = self._k(n) if n else max(self.k, 0)
        return (k,) if axis is None else shape[:axis] + (k,) + shape[axis + 1:]

    def _zero_grad(self, octx):
        shape, dtype = octx.saved['in_meta']
        return octx.xp.zeros(shape, dtype=dtype)

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None or 0 in data:   # MXNet sizes the sort from the whole shape, or fails
            raise MXNetError('%s: the shape of data must be fully known, got %s'
                             % (self.op_name, 'an unknown shape' if data is None
                                else tuple(data)))
        target = self._target_shape(data)
        return in_shapes, [merge_shape(self.op_name, name, s, target)
                           for name, s in zip(self.list_outputs(), out_shapes)]

    def _moved(self, xp, x):
        axis = self._axis(x.ndim)
        return (x.reshape(-1), 0) if axis is None else (xp.moveaxis(x, axis, -1), axis)

    def _select(self, xp, x):
        """(values, indices) of the first k in order, both with the sorting axis last."""
        xt, _ = self._moved(xp, x)
        idx = _stable_order(xp, xt, self.is_ascend)[..., :self._k(xt.shape[-1])]
        return xp.take_along_axis(xt, idx, axis=-1), idx

    def _restore(self, xp, x, arr):
        axis = self._axis(x.ndim)
        return arr if axis is None else xp.moveaxis(arr, -1, axis)

    def _scatter_grad(self, octx, dy, idx):
        xp = octx.xp
        shape = octx.saved['in_meta'][0]
        axis = None if self.p.axis is None else _norm_axis(self.op_name, self.p.axis, len(shape))
        if axis is None:
            return _scatter_last(xp, (int(np.prod(shape)),), idx, dy, dy.dtype).reshape(shape)
        moved = tuple(d for i, d in enumerate(shape) if i != axis) + (shape[axis],)
        grad = _scatter_last(xp, moved, xp.moveaxis(idx, axis, -1), xp.moveaxis(dy, axis, -1),
                             dy.dtype)
        return xp.moveaxis(grad, -1, axis)


@register
class TopK(_Ordering):
    """The k largest (or smallest) elements along ``axis``: their values, indices, both, or a 0/1
    mask; ties keep index order. Values receive the gradient; indices and masks do not."""
    op_name = 'topk'
    params = {'axis': Param('int?', -1), 'k': Param('int', 1),
              'ret_typ': Param('str', 'indices', ('value', 'indices', 'mask', 'both')),
              'is_ascend': Param('bool', False), 'dtype': Param('dtype', 'float32', _INDEX_DTYPES)}

    def setup(self):
        self.ret_typ, self.is_ascend, self.k = self.p.ret_typ, self.p.is_ascend, self.p.k

    def list_outputs(self):
        return ['output'] if self.ret_typ in ('indices', 'mask') else ['output0', 'output1']

    def num_visible_outputs(self):
        return 2 if self.ret_typ == 'both' else 1

    def infer_type(self, in_types, out_types):
        if self.ret_typ == 'indices':
            return in_types, [self.p.dtype]
        dtype = in_types[0] or out_types[0]
        second = {'value': 'int32', 'both': self.p.dtype}.get(self.ret_typ)
        return [dtype], [dtype] + ([second] if second else [])

    def forward(self, octx, inputs, aux):
        xp, x = octx.xp, inputs[0]
        octx.saved['in_meta'] = (tuple(x.shape), x.dtype)
        vals, idx = self._select(xp, x)
        if self.ret_typ == 'mask':
            xt, _ = self._moved(xp, x)
            mask = _scatter_last(xp, xt.shape, idx, xp.ones(idx.shape, x.dtype), x.dtype)
            return [self._restore(xp, x, mask).reshape(x.shape)]
        idx_out = self._restore(xp, x, idx)
        if self.ret_typ == 'indices':
            return [idx_out.astype(self.p.dtype)]
        second = idx_out.astype(self.p.dtype if self.ret_typ == 'both' else np.int32)
        return [self._restore(xp, x, vals), second]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        if self.ret_typ in ('indices', 'mask'):
            return [self._zero_grad(octx)]
        return [self._scatter_grad(octx, out_grads[0], outputs[1])]


@register
class Sort(_Ordering):
    """Sorted values along ``axis`` (None: flattened); the gradient is routed back through the
    permutation."""
    op_name = 'sort'
    params = {'axis': Param('int?', -1), 'is_ascend': Param('bool', True)}
    outputs = ('output0', 'output1')
    ret_typ = 'value'

    def setup(self):
        self.is_ascend = self.p.is_ascend

    def num_visible_outputs(self):
        return 1

    def infer_type(self, in_types, out_types):
        dtype = in_types[0] or out_types[0]
        return [dtype], [dtype, 'int32']

    def forward(self, octx, inputs, aux):
        xp, x = octx.xp, inputs[0]
        octx.saved['in_meta'] = (tuple(x.shape), x.dtype)
        vals, idx = self._select(xp, x)
        return [self._restore(xp, x, vals), self._restore(xp, x, idx).astype(np.int32)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [self._scatter_grad(octx, out_grads[0], outputs[1])]


@register
class ArgSort(_Ordering):
    """Indices that sort the input along ``axis`` (None: flattened), as ``dtype``; ties keep index
    order. The gradient is zero."""
    op_name = 'argsort'
    params = {'axis': Param('int?', -1), 'is_ascend': Param('bool', True),
              'dtype': Param('dtype', 'float32', _INDEX_DTYPES)}
    backward_uses = ()

    def setup(self):
        self.is_ascend = self.p.is_ascend

    def infer_type(self, in_types, out_types):
        return in_types, [self.p.dtype]

    def forward(self, octx, inputs, aux):
        xp, x = octx.xp, inputs[0]
        octx.saved['in_meta'] = (tuple(x.shape), x.dtype)
        _, idx = self._select(xp, x)
        return [self._restore(xp, x, idx).astype(self.p.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [self._zero_grad(octx)]
