"""Random operators that draw indices or orders rather than values of a distribution:
``_sample_multinomial`` (category indices, optionally with their differentiable
log-probabilities), ``_shuffle`` (a permutation of the first axis) and
``_sample_unique_zipfian`` (candidate sampling without repeats). Each draws from the device's
stream (``octx.rng``, seeded by ``mx.random.seed``)."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape


@register
class SampleMultinomial(Operator):
    """Category indices drawn from the distributions in the last axis of ``data``; with
    ``get_prob`` also the log-probability of each draw (differentiable w.r.t. ``data``)."""
    op_name = '_sample_multinomial'
    aliases = ('sample_multinomial',)
    params = {'shape': Param('shape', ()), 'get_prob': Param('bool', False),
              'dtype': Param('dtype', 'int32',
                             choices=('uint8', 'int32', 'float16', 'float32', 'float64'))}
    backward_uses = ('inputs', 'outputs')

    def list_outputs(self):
        return ['output0', 'output1'] if self.p.get_prob else ['output']

    def out_shape_of(self, data_shape):
        """Output shape for a data shape."""
        extra = tuple(self.p.shape or ())
        if len(data_shape) == 1:
            return extra or (1,)
        return tuple(data_shape[:-1]) + extra

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:
            return [None], list(out_shapes)
        out = self.out_shape_of(data)
        outs = [merge_shape(self.op_name, n, s, out)
                for n, s in zip(self.list_outputs(), out_shapes)]
        return [data], outs

    def infer_type(self, in_types, out_types):
        data = in_types[0]
        if data is None:    # as MXNet: nothing until data's dtype is known
            return list(in_types), list(out_types)
        return [data], [self.p.dtype] + ([data] if self.p.get_prob else [])

    def forward(self, octx, inputs, aux):
        xp, data = octx.xp, inputs[0]
        cats = data.shape[-1]
        rows = data.reshape(-1, cats)
        count = 1
        for d in self.p.shape or ():
            count *= d
        cdf = xp.cumsum(rows.astype('float64'), axis=1)
        draws = octx.rng.uniform(0.0, 1.0, (rows.shape[0], count))
        # one sorted search over all rows: shift row i by i * (largest total + 1)
        shift = (xp.arange(rows.shape[0]) * (float(cdf[:, -1].max()) + 1.0))[:, None]
        found = xp.searchsorted((cdf + shift).ravel(), (draws + shift).ravel(), side='left')
        index = found.reshape(draws.shape) - xp.arange(rows.shape[0])[:, None] * cats
        index = xp.clip(index, 0, cats - 1)
        shape = self.out_shape_of(data.shape)
        results = [index.reshape(shape).astype(self.p.dtype)]
        if self.p.get_prob:
            picked = xp.take_along_axis(rows, index, axis=1)
            results.append(xp.log(picked).reshape(shape).astype(data.dtype))
        return results

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, data = octx.xp, inputs[0]
        if not self.p.get_prob or out_grads[1] is None:
            return [xp.zeros_like(data)]
        cats = data.shape[-1]
        rows = data.reshape(-1, cats)
        index = outputs[0].reshape(rows.shape[0], -1).astype('int64')
        picked = xp.take_along_axis(rows, index, axis=1)
        weight = out_grads[1].reshape(index.shape) / picked
        one_hot = index[:, :, None] == xp.arange(cats)[None, None, :]
        grad = (one_hot * weight[:, :, None]).sum(axis=1)
        return [grad.reshape(data.shape).astype(data.dtype)]


@register
class Shuffle(Operator):
    """Randomly permute the array along its first axis."""
    op_name = '_shuffle'
    aliases = ('shuffle',)
    backward_uses = ()

    def forward(self, octx, inputs, aux):
        data = inputs[0]
        if data.ndim == 0 or data.shape[0] < 2:
            return [data.copy()]
        return [data[octx.rng.permutation(data.shape[0])]]


# ---- unique samples ------------------------------------------------------------------------------
def _unique_zipfian_row(rng, range_max, num_sampled):
    """Draw log-uniform classes ``round(exp(u log range_max)) - 1`` (u uniform in [0, 1)) until
    ``num_sampled`` distinct ones are found; return them in order of discovery and the number of
    draws it took."""
    log_range = np.log(range_max)
    found = np.empty(0, dtype=np.int64)
    tries = 0
    while found.size < num_sampled:
        need = num_sampled - found.size
        chunk = max(64, 2 * need)
        u = rng.uniform(0.0, 1.0, chunk)
        u = u.get() if hasattr(u, 'get') else np.asarray(u)     # host copy on GPU streams
        vals = np.floor(np.exp(u * log_range) + 0.5).astype(np.int64) - 1
        _, first = np.unique(vals, return_index=True)
        is_new = np.zeros(chunk, dtype=bool)
        is_new[first] = True
        is_new &= ~np.isin(vals, found)
        pos = np.flatnonzero(is_new)
        if pos.size >= need:
            pos = pos[:need]
            tries += int(pos[-1]) + 1
        else:
            tries += chunk
        found = np.concatenate([found, vals[pos]])
    return found, tries


@register
class SampleUniqueZipfian(Operator):
    """``(batch_size, num_sampled)`` distinct classes per row from the approximately Zipfian
    distribution on [0, range_max), and per row the number of draws needed (both int64)."""
    op_name = '_sample_unique_zipfian'
    arguments = ()
    outputs = ('output0', 'output1')     # MXNet names them so (no output names registered)
    params = {'range_max': Param('int'), 'shape': Param('shape', ())}
    backward_uses = ()

    def setup(self):
        shape = tuple(self.p.shape or ())
        if shape and len(shape) != 2:
            raise MXNetError('%s: shape must be 2-D (batch_size, num_sampled), got %s'
                             % (self.op_name, shape))
        if shape and shape[1] > self.p.range_max:
            raise MXNetError('%s: Number of samples cannot exceed the number of possible classes '
                             '(num_sampled=%d, range_max=%d)'
                             % (self.op_name, shape[1], self.p.range_max))

    def infer_shape(self, in_shapes, out_shapes):
        shape = tuple(self.p.shape or ())
        if not shape:
            out = out_shapes[0]
            if out is None or len(out) != 2:
                raise MXNetError('%s: shape must be 2-D (batch_size, num_sampled), got %s'
                                 % (self.op_name, shape))
            return [], [out, merge_shape(self.op_name, 'num_tries', out_shapes[1], (out[0],))]
        return [], [merge_shape(self.op_name, 'samples', out_shapes[0], shape),
                    merge_shape(self.op_name, 'num_tries', out_shapes[1], (shape[0],))]

    def infer_type(self, in_types, out_types):
        return [], ['int64', 'int64']

    def forward(self, octx, inputs, aux):
        shape = tuple(self.p.shape or ())
        if not shape and octx.out_shapes:
            shape = tuple(octx.out_shapes[0])
        if len(shape) != 2:
            raise MXNetError('%s: shape must be 2-D (batch_size, num_sampled), got %s'
                             % (self.op_name, shape))
        batch, num = shape
        samples = np.empty((batch, num), dtype=np.int64)
        tries = np.empty((batch,), dtype=np.int64)
        for i in range(batch):
            samples[i], tries[i] = _unique_zipfian_row(octx.rng, self.p.range_max, num)
        xp = octx.xp
        return [xp.asarray(samples), xp.asarray(tries)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return []
