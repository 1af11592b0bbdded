"""Embedding: rows of a weight table looked up at integer-valued indices."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from .indexing import scatter_rows

__all__ = ['Embedding']


@register
class Embedding(Operator):
    """Look up rows of ``weight`` (input_dim, output_dim) at the (float) indices in ``data``."""
    op_name = 'Embedding'
    params = {'input_dim': Param('int', lower=1), 'output_dim': Param('int', lower=1),
              'dtype': Param('dtype', 'float32'), 'sparse_grad': Param('bool', False)}
    arguments = ('data', 'weight')
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: nothing until data's rank is known, then forwards only
        data = in_shapes[0]
        if data is None:
            return list(in_shapes), list(out_shapes)
        weight = merge_shape(self.op_name, 'weight', in_shapes[1],
                             (self.p.input_dim, self.p.output_dim))
        return [data, weight], [tuple(data) + (self.p.output_dim,)]

    def infer_type(self, in_types, out_types):
        dtype = in_types[1] or out_types[0] or self.p.dtype
        return [in_types[0], dtype], [dtype]

    def _indices(self, xp, data):
        return xp.clip(data, 0, self.p.input_dim - 1).astype(np.int64)

    def forward(self, octx, inputs, aux):
        data, weight = inputs
        return [weight[self._indices(octx.xp, data)]]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        data, weight = inputs
        need = octx.need_grad or [False, True]
        if need[0]:
            raise MXNetError("Embedding layer doesn't support calculate data gradient "
                             "(bind the data with grad_req='null')")
        if not need[1]:
            return [None, None]
        dy = out_grads[0].reshape(-1, weight.shape[1])
        idx = self._indices(xp, data).reshape(-1)
        return [None, scatter_rows(xp, weight.shape[0], idx, dy).astype(weight.dtype, copy=False)]
