"""Reductions (sum, mean, max, min, prod, nansum, nanprod, norm), index searches (argmax, argmin,
argmax_channel) and ordering (topk, sort, argsort), with MXNet's shapes and gradients.

Shapes follow MXNet's legacy rules: reducing every axis without ``keepdims`` gives shape (1,);
``exclude=True`` reduces the axes *not* listed. max/min send the gradient to every element equal
to the result (ties all receive it); prod divides the output by each input (0/0 gives nan, as in
MXNet); argmax/argmin return indices in the input's dtype."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape

_INDEX_DTYPES = ('uint8', 'int32', 'int64', 'float16', 'float32', 'float64')


def _norm_axis(op, axis, ndim):
    if not -ndim <= axis < max(ndim, 1):
        raise MXNetError('%s: axis %d is out of range for an input with %d dimensions'
                         % (op, axis, ndim))
    return axis + ndim if axis < 0 else axis


def reduced_axes(op, axis, exclude, ndim):
    """Sorted tuple of the axes reduced by ``axis``/``exclude`` (None or () = all axes)."""
    if not axis:
        return tuple(range(ndim))
    axes = sorted(_norm_axis(op, a, ndim) for a in axis)
    if len(set(axes)) != len(axes):
        raise MXNetError('%s: reduction axes have duplicates: %s' % (op, tuple(axis)))
    if exclude:
        return tuple(i for i in range(ndim) if i not in axes)
    return tuple(axes)


def reduced_shape(op, shape, axis, keepdims, exclude):
    """Output shape of a reduction of ``shape`` (MXNet's ReduceAxesShapeImpl)."""
    shape = tuple(shape)
    if not axis:
        return (1,) * len(shape) if keepdims else (1,)
    axes = reduced_axes(op, axis, exclude, len(shape))
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    kept = tuple(d for i, d in enumerate(shape) if i not in axes)
    return kept or (1,)


class _Reduce(Operator):
    """Reduction over ``axis`` (int, tuple or None) with ``keepdims`` and ``exclude``."""
    params = {'axis': Param('shape?', None), 'keepdims': Param('bool', False),
              'exclude': Param('bool', False)}
    backward_uses = ('inputs', 'outputs')
    whole_input = False     # MXNet infers max, min and norm only from a fully known input

    def _axis_params(self):
        return self.p.axis, self.p.keepdims, self.p.exclude

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None or (self.whole_input and 0 in data):
            return in_shapes, out_shapes
        axis, keepdims, exclude = self._axis_params()
        out = reduced_shape(self.op_name, data, axis, keepdims, exclude)
        return [data], [merge_shape(self.op_name, 'output', out_shapes[0], out)]

    def _axes(self, ndim):
        axis, _, exclude = self._axis_params()
        return reduced_axes(self.op_name, axis, exclude, ndim)

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        octx.saved['in_shape'] = tuple(x.shape)
        out = self.reduce(octx.xp, x, self._axes(x.ndim))
        axis, keepdims, exclude = self._axis_params()
        return [out.reshape(reduced_shape(self.op_name, x.shape, axis, keepdims, exclude))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape = octx.saved.get('in_shape') or tuple(inputs[0].shape)
        axes = self._axes(len(shape))
        small = tuple(1 if i in axes else d for i, d in enumerate(shape))
        dy = out_grads[0].reshape(small)
        y = outputs[0].reshape(small) if 'outputs' in self.backward_uses else None
        x = inputs[0] if 'inputs' in self.backward_uses else None
        with np.errstate(divide='ignore', invalid='ignore'):   # prod: 0/0 is nan, as in MXNet
            grad = self.grad(octx.xp, x, y, dy, shape, axes)
        return [octx.xp.broadcast_to(grad, shape).astype(dy.dtype)]

    def reduce(self, xp, x, axes):
        raise NotImplementedError

    def grad(self, xp, x, y, dy, shape, axes):
        raise NotImplementedError


def _accumulate(x):
    return np.float32 if x.dtype == np.float16 else x.dtype


def _count(shape, axes):
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _reduce_class(name, aliases, reduce, grad, uses, doc='', whole_input=False):
    return register(type(name.title() + 'Reduce', (_Reduce,), {
        'op_name': name, 'aliases': tuple(aliases), 'reduce': staticmethod(reduce),
        'grad': staticmethod(grad), 'backward_uses': uses, '__doc__': doc,
        'whole_input': whole_input}))


def _sum(xp, x, axes):
    return x.sum(axis=axes, dtype=_accumulate(x), keepdims=True).astype(x.dtype, copy=False)


def _mean(xp, x, axes):
    total = x.sum(axis=axes, dtype=_accumulate(x) if x.dtype.kind == 'f' else np.float64,
                  keepdims=True)
    mean = total / max(_count(x.shape, axes), 1)
    return (mean if x.dtype.kind == 'f' else xp.trunc(mean)).astype(x.dtype)


def _nanprod(xp, x, axes):
    return xp.where(xp.isnan(x), 1, x).prod(axis=axes, keepdims=True).astype(x.dtype, copy=False)


def _nansum(xp, x, axes):
    return _sum(xp, xp.where(xp.isnan(x), 0, x).astype(x.dtype, copy=False), axes)


_reduce_class('sum', ('sum_axis',), _sum, lambda xp, x, y, dy, shape, axes: dy, (),
              doc='Sum over the given axes.')
_reduce_class('mean', (), _mean,
              lambda xp, x, y, dy, shape, axes: dy / dy.dtype.type(max(_count(shape, axes), 1)),
              (), doc='Mean over the given axes (integer means truncate, as in MXNet).')
_reduce_class('_square_sum', (), lambda xp, x, axes: _sum(xp, x * x, axes),
              lambda xp, x, y, dy, shape, axes: 2 * x * dy, ('inputs',),
              doc='Sum of squares over the given axes (dense form of MXNet\'s sparse helper).')
def _extreme(name):
    """max/min over ``axes``; an empty reduction is an error (there is no identity)."""
    def reduce(xp, x, axes):
        if x.size == 0:
            raise MXNetError('%s: cannot reduce a zero-size array of shape %s (no identity)'
                             % (name, tuple(x.shape)))
        return getattr(x, name)(axis=axes, keepdims=True)
    return reduce


_reduce_class('max', ('max_axis',), _extreme('max'),
              lambda xp, x, y, dy, shape, axes: dy * (x == y), ('inputs', 'outputs'),
              doc='Maximum over the given axes; the gradient goes to every maximal element.',
              whole_input=True)
_reduce_class('min', ('min_axis',), _extreme('min'),
              lambda xp, x, y, dy, shape, axes: dy * (x == y), ('inputs', 'outputs'),
              doc='Minimum over the given axes; the gradient goes to every minimal element.',
              whole_input=True)
_reduce_class('prod', (), lambda xp, x, axes: x.prod(axis=axes, keepdims=True).astype(x.dtype,
                                                                                      copy=False),
              lambda xp, x, y, dy, shape, axes: dy * (y / x), ('inputs', 'outputs'),
              doc='Product over the given axes; gradient ``dy * out / x``.')
_reduce_class('nansum', (), _nansum,
              lambda xp, x, y, dy, shape, axes: dy * ~xp.isnan(x), ('inputs',),
              doc='Sum treating NaN as zero; NaN entries get a zero gradient.')
_reduce_class('nanprod', (), _nanprod,
              lambda xp, x, y, dy, shape, axes: xp.where(xp.isnan(x), 0, dy * (y / x)),
              ('inputs', 'outputs'), doc='Product treating NaN as one; NaN entries get zero gradient.')


@register
class Norm(_Reduce):
    """L1 (``ord=1``) or L2 (``ord=2``) norm over ``axis`` (None: all elements), optionally cast to
    ``out_dtype``. Gradients: ``dy * sign(x)`` and ``dy * x / norm``."""
    op_name = 'norm'
    params = {'ord': Param('int', 2, (1, 2)), 'axis': Param('shape?', None),
              'out_dtype': Param('dtype?', None, (None, 'float16', 'float32', 'float64', 'int64',
                                                  'int32', 'int8')),
              'keepdims': Param('bool', False)}
    backward_uses = ('inputs', 'outputs')
    whole_input = True

    def _axis_params(self):
        return self.p.axis, self.p.keepdims, False

    def reduce(self, xp, x, axes):
        work = x.astype(np.float32) if x.dtype == np.float16 else x
        if self.p.ord == 1:
            out = xp.abs(work).sum(axis=axes, keepdims=True)
        else:
            out = xp.sqrt((work * work).sum(axis=axes, keepdims=True))
        return out.astype(self.p.out_dtype or x.dtype)

    def grad(self, xp, x, y, dy, shape, axes):
        if self.p.ord == 1:
            return (dy * xp.sign(x)).astype(x.dtype)
        return (dy * (x / y)).astype(x.dtype)

    def backward(self, octx, out_grads, inputs, outputs, aux):
        grads = super().backward(octx, out_grads, inputs, outputs, aux)
        return [grads[0].astype(inputs[0].dtype, copy=False)]

    def infer_type(self, in_types, out_types):
        if self.p.out_dtype is not None:
            return in_types, [self.p.out_dtype]
        dtype = in_types[0] or out_types[0]
        return [dtype], [dtype]


# ---- argmax / argmin --------------------------------------------------------------------------
def _search_shape(op, shape, axis, keepdims):
    if axis is None or len(shape) == 1:
        return (1,) * len(shape) if keepdims else (1,)
    axis = _norm_axis(op, axis, len(shape))
    if keepdims:
        return tuple(1 if i == axis else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i != axis)


class _Search(Operator):
    """Index of the extreme value along ``axis`` (None: of the flattened input), as input dtype."""
    params = {'axis': Param('int?', None), 'keepdims': Param('bool', False)}
    backward_uses = ()
    pick = None

    def infer_shape(self, in_shapes, out_shapes):
        if in_shapes[0] is None or 0 in in_shapes[0]:   # MXNet waits for the whole shape
            return in_shapes, out_shapes
        out = _search_shape(self.op_name, in_shapes[0], self.p.axis, self.p.keepdims)
        return in_shapes, [merge_shape(self.op_name, 'output', out_shapes[0], out)]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        octx.saved['in_shape'] = tuple(x.shape)
        if self.p.axis is None:
            idx = getattr(x.reshape(-1), self.pick)()
        else:
            idx = getattr(x, self.pick)(axis=_norm_axis(self.op_name, self.p.axis, x.ndim))
        shape = _search_shape(self.op_name, x.shape, self.p.axis, self.p.keepdims)
        return [octx.xp.asarray(idx).astype(x.dtype).reshape(shape)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape = octx.saved.get('in_shape') or tuple(inputs[0].shape)
        return [octx.xp.zeros(shape, dtype=out_grads[0].dtype)]


@register
class ArgMax(_Search):
    """Index of the first maximum along ``axis``; the gradient is zero."""
    op_name = 'argmax'
    pick = 'argmax'


@register
class ArgMin(_Search):
    """Index of the first minimum along ``axis``; the gradient is zero."""
    op_name = 'argmin'
    pick = 'argmin'


@register
class ArgMaxChannel(_Search):
    """argmax along axis 1 (legacy); it has no gradient."""
    op_name = 'argmax_channel'
    params = {}
    pick = 'argmax'
    differentiable = False

    def setup(self):
        self.p.axis, self.p.keepdims = 1, False

    def backward(self, octx, out_grads, inputs, outputs, aux):
        raise MXNetError('argmax_channel is not differentiable (MXNet registers no gradient for it)')
