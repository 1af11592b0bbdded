"""``_linspace``: ``num`` evenly spaced values from ``start`` to ``stop`` (a source operator,
behind ``mx.nd.linspace`` and ``mx.sym.linspace``)."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register


@register
class Linspace(Operator):
    """``start + i * step`` for i < num, step = (stop - start) / (num - 1, or num without the
    endpoint), computed in float64 and cast to ``dtype`` as MXNet does."""
    op_name = '_linspace'
    arguments = ()
    backward_uses = ()
    params = {'start': Param('float'), 'stop': Param('float'), 'num': Param('int'),
              'endpoint': Param('bool', True), 'ctx': Param('str', ''),
              'dtype': Param('dtype', 'float32')}

    def setup(self):
        if self.p.num < 0:
            raise MXNetError('_linspace: Number of sequence should be non-negative, received %d'
                             % self.p.num)

    def infer_shape(self, in_shapes, out_shapes):
        return in_shapes, [(self.p.num,)]

    def infer_type(self, in_types, out_types):
        return in_types, [self.p.dtype]

    def forward(self, octx, inputs, aux):
        steps = self.p.num - 1 if self.p.endpoint else self.p.num
        step = (self.p.stop - self.p.start) / steps if steps > 0 else 0.0
        values = self.p.start + step * np.arange(self.p.num, dtype=np.float64)
        return [octx.xp.asarray(values.astype(self.p.dtype))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return []
