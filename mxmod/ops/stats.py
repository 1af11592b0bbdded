"""Statistics over arrays: moments (mean and variance), cumsum (MXNet's ``_np_cumsum``) and
histogram (``_histogram``), with MXNet's shapes, dtypes and gradients."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from .reduce import reduced_axes, reduced_shape
from .shape import norm_axis


@register
class Moments(Operator):
    """Mean and variance over ``axes`` (which must be given); integer inputs truncate as MXNet's
    integer arithmetic does. Gradient: ``dmean / N + dvar * 2 (x - mean) / N``."""
    op_name = 'moments'
    params = {'axes': Param('shape?', None), 'keepdims': Param('bool', False)}
    outputs = ('mean', 'var')
    backward_uses = ('inputs', 'outputs')

    def _check_axes(self):
        # (checked when shapes are inferred or computed, as MXNet: a symbol may be made)
        if not self.p.axes:
            raise MXNetError('moments: empty axes is not supported; to compute global moments '
                             'pass every axis to the axes argument')

    def _out_shape(self, shape):
        return reduced_shape(self.op_name, shape, self.p.axes, self.p.keepdims, False)

    def infer_shape(self, in_shapes, out_shapes):
        self._check_axes()
        data = in_shapes[0]
        if data is None:        # MXNet checks its axes against the unknown rank and fails
            raise MXNetError('moments: the shape of data must be known to reduce over axes %s'
                             % (self.p.axes,))
        out = self._out_shape(data)
        return [data], [merge_shape(self.op_name, n, out, s)
                        for n, s in zip(self.outputs, out_shapes)]

    def forward(self, octx, inputs, aux):
        self._check_axes()
        xp, x = octx.xp, inputs[0]
        axes = reduced_axes(self.op_name, self.p.axes, False, x.ndim)
        work = x.astype(np.float32) if x.dtype == np.float16 else x
        if x.dtype.kind in 'iub':
            work = x.astype(np.int64)
            count = int(np.prod([x.shape[a] for a in axes]))
            mean = work.sum(axis=axes, keepdims=True) // count
            var = ((work - mean) ** 2).sum(axis=axes, keepdims=True) // count
        else:
            mean = work.mean(axis=axes, keepdims=True)
            var = xp.square(work - mean).mean(axis=axes, keepdims=True)
        shape = self._out_shape(x.shape)
        return [mean.astype(x.dtype).reshape(shape), var.astype(x.dtype).reshape(shape)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, x = octx.xp, inputs[0]
        axes = reduced_axes(self.op_name, self.p.axes, False, x.ndim)
        small = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        count = x.dtype.type(int(np.prod([x.shape[a] for a in axes])))
        dmean, dvar = [xp.zeros(small, x.dtype) if g is None else g.reshape(small)
                       for g in out_grads]
        mean = outputs[0].reshape(small)
        grad = dmean / count + dvar * (x - mean) * (2 / count)
        return [grad.astype(x.dtype, copy=False)]


@register
class CumSum(Operator):
    """Cumulative sum along ``axis`` (None: of the flattened array), in ``dtype`` (default: the
    input's). The gradient is the reversed cumulative sum of the head gradient."""
    op_name = '_np_cumsum'
    aliases = ('cumsum',)
    arguments = ('a',)
    params = {'axis': Param('int?', None),
              'dtype': Param('dtype?', None, (None, 'float16', 'float32', 'float64', 'int32',
                                              'int64', 'int8'))}
    backward_uses = ()

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if self.p.axis is not None:     # as MXNet: input and output share one shape
            shape = merge_shape(self.op_name, 'a', data, out_shapes[0])
            return [shape], [shape]     # (the axis is checked when computing, as MXNet)
        if data is None or 0 in data:   # MXNet flattens by the size, which must be known
            raise MXNetError('%s: without an axis the whole shape of a must be known, got %s'
                             % (self.op_name, 'an unknown shape' if data is None
                                else tuple(data)))
        out = (int(np.prod(data)),)
        return [data], [merge_shape(self.op_name, 'output', out, out_shapes[0])]

    def infer_type(self, in_types, out_types):
        return in_types, [self.p.dtype or in_types[0]]

    def _axis(self, ndim):
        return 0 if self.p.axis is None else norm_axis(self.op_name, self.p.axis, ndim)

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        octx.saved['in_meta'] = (tuple(x.shape), x.dtype)
        data = x.reshape(-1) if self.p.axis is None else x
        dtype = self.p.dtype or x.dtype
        return [octx.xp.cumsum(data, axis=self._axis(data.ndim), dtype=dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape, dtype = octx.saved['in_meta']
        dy = out_grads[0]
        axis = self._axis(dy.ndim)
        rev = (slice(None),) * axis + (slice(None, None, -1),)
        grad = octx.xp.cumsum(dy[rev], axis=axis)[rev]
        return [grad.reshape(shape).astype(dtype, copy=False)]


def _parse_range(value):
    """MXNet's histogram ``range``: a pair of floats, or None."""
    if value is None or (isinstance(value, str) and value.strip() in ('', 'None')):
        return None
    if isinstance(value, str):
        import ast   # pylint: disable=import-outside-toplevel
        value = ast.literal_eval(value)
    pair = tuple(float(v) for v in value)
    if len(pair) != 2:
        raise ValueError('range must be a pair (low, high), got %r' % (value,))
    return pair


@register
class Histogram(Operator):
    """Counts of ``data`` in bins: ``bin_cnt`` equal bins over ``range`` (both given), or the
    bin edges in the input ``bins``. Values outside the bins are ignored; the last bin includes
    its right edge. Outputs the int64 counts and the edges; no gradient."""
    op_name = '_histogram'
    params = {'bin_cnt': Param('int?', None), 'range': Param('str?', None)}
    arguments = ('data', 'bins')
    outputs = ('output', 'bins')
    differentiable = False
    backward_uses = ()

    def setup(self):
        try:
            self.range = _parse_range(self.p.range)
        except (ValueError, SyntaxError, TypeError) as err:
            raise MXNetError('_histogram: invalid range %r: %s' % (self.p.range, err)) from None
        if (self.p.bin_cnt is None) != (self.range is None):
            raise MXNetError('_histogram: bin_cnt and range must both be given or both omitted')
        if self.range is not None and self.range[0] > self.range[1]:
            raise MXNetError('_histogram: range %s must have low <= high' % (self.range,))

    def list_arguments(self):
        return ['data'] if self.p.bin_cnt is not None else ['data', 'bins']

    def infer_shape(self, in_shapes, out_shapes):
        if self.p.bin_cnt is not None:
            n = self.p.bin_cnt
            return in_shapes, [(n,), (n + 1,)]
        bins = in_shapes[1]
        if bins is None or len(bins) != 1 or not bins[0] or bins[0] < 2:
            raise MXNetError('_histogram: bins must be a 1-D array of at least 2 edges, got '
                             '%s' % ('an unknown shape' if bins is None else tuple(bins),))
        return in_shapes, [(bins[0] - 1,), tuple(bins)]

    def infer_type(self, in_types, out_types):
        return in_types, ['int64', in_types[0]]

    def forward(self, octx, inputs, aux):
        xp, x = octx.xp, inputs[0].reshape(-1)
        if self.p.bin_cnt is not None:
            low, high = self.range
            n = self.p.bin_cnt
            steps = np.arange(n + 1, dtype=np.float64)
            edges = xp.asarray(((high * steps + (n - steps) * low) / n).astype(x.dtype))
        else:
            edges = inputs[1].astype(x.dtype, copy=False)
            low, high = edges[0], edges[-1]
            n = edges.shape[0] - 1
        inside = (x >= low) & (x <= high)
        index = xp.minimum(xp.searchsorted(edges, x[inside], side='right') - 1, n - 1)
        counts = xp.bincount(xp.maximum(index, 0), minlength=n)[:n].astype(np.int64)
        return [counts, edges.copy()]
