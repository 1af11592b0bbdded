"""Joining, splitting, repeating and padding operators: Concat, stack, SliceChannel, tile,
repeat, reverse and Pad (MXNet 1.9.1 names, defaults and shape inference; part of ``shape``)."""
import numpy as np

from ..base import MXNetError
from .base import Param, register, merge_shape
from .shape import ShapeOnly, is_known, norm_axis, prod, save_shape, saved_shape


# ---- joining and splitting --------------------------------------------------------------------
class _Variadic(ShapeOnly):
    """Base of operators taking ``num_args`` inputs named arg0, arg1, ..."""

    def setup(self):
        if self.p.num_args < 1:
            raise MXNetError('%s: num_args must be at least 1, got %d'
                             % (self.op_name, self.p.num_args))

    def list_arguments(self):
        return ['arg%d' % i for i in range(self.p.num_args)]


@register
class Concat(_Variadic):
    """Join ``num_args`` arrays along axis ``dim``."""
    op_name = 'Concat'
    aliases = ('concat',)
    params = {'num_args': Param('int'), 'dim': Param('int', 1)}

    def infer_shape(self, in_shapes, out_shapes):
        common, total, axis = None, 0, None
        for i, shape in enumerate(list(in_shapes) + list(out_shapes)):
            if shape is None:
                if i < len(in_shapes):
                    total = None
                continue
            axis = norm_axis('Concat', self.p.dim, len(shape), 'dim')
            if i < len(in_shapes):
                total = None if total is None or not shape[axis] else total + shape[axis]
            masked = tuple(0 if j == axis else d for j, d in enumerate(shape))
            common = merge_shape('Concat', 'arg%d' % i if i < len(in_shapes) else 'output',
                                 common, masked)
        if common is None:
            return in_shapes, out_shapes
        if not common:
            raise MXNetError('Concat: zero-dimensional arrays cannot be concatenated')
        ins = [merge_shape('Concat', 'arg%d' % i, s, common) for i, s in enumerate(in_shapes)]
        out = list(common)
        if total:
            out[axis] = total
        return ins, [merge_shape('Concat', 'output', out_shapes[0], tuple(out))]

    def forward(self, octx, inputs, aux):
        save_shape(octx, *inputs)
        axis = norm_axis('Concat', self.p.dim, inputs[0].ndim, 'dim')
        return [octx.xp.concatenate(inputs, axis=axis)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        dy = out_grads[0]
        axis = norm_axis('Concat', self.p.dim, dy.ndim, 'dim')
        sizes = [saved_shape(octx, inputs, i)[0][axis] for i in range(self.p.num_args)]
        return octx.xp.split(dy, np.cumsum(sizes)[:-1].tolist(), axis=axis)


@register
class Stack(_Variadic):
    """Join ``num_args`` arrays of one shape along a new axis."""
    op_name = 'stack'
    params = {'axis': Param('int', 0), 'num_args': Param('int')}

    def infer_shape(self, in_shapes, out_shapes):
        common = None
        for i, shape in enumerate(in_shapes):
            common = merge_shape('stack', 'arg%d' % i, common, shape)
        if not is_known(common):
            return in_shapes, out_shapes
        axis = norm_axis('stack', self.p.axis, len(common) + 1)
        out = tuple(common[:axis]) + (self.p.num_args,) + tuple(common[axis:])
        return in_shapes, [merge_shape('stack', 'output', out_shapes[0], out)]

    def forward(self, octx, inputs, aux):
        return [octx.xp.stack(inputs, axis=norm_axis('stack', self.p.axis, inputs[0].ndim + 1))]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        dy = out_grads[0]
        axis = norm_axis('stack', self.p.axis, dy.ndim)
        return [octx.xp.take(dy, i, axis=axis) for i in range(self.p.num_args)]


@register
class SliceChannel(ShapeOnly):
    """Split along ``axis`` into ``num_outputs`` equal parts (optionally dropping the axis)."""
    op_name = 'SliceChannel'
    aliases = ('split',)
    params = {'num_outputs': Param('int'), 'axis': Param('int', 1),
              'squeeze_axis': Param('bool', False)}

    def list_outputs(self):
        return ['output%d' % i for i in range(self.p.num_outputs)]

    def _part(self, data, axis):
        n, size = self.p.num_outputs, data[axis]
        if size % n or (not size and n > 1):    # MXNet fails on an unknown size (-1 % n)
            raise MXNetError('SliceChannel: cannot split axis %d of shape %s into %d equal parts'
                             % (axis, tuple(data), n))
        if self.p.squeeze_axis and size and size != n:
            raise MXNetError('SliceChannel: with squeeze_axis=True the axis size must equal '
                             'num_outputs=%d; got shape %s' % (n, tuple(data)))
        if self.p.squeeze_axis:
            return tuple(data[:axis]) + tuple(data[axis + 1:])
        return tuple(data[:axis]) + (size // n,) + tuple(data[axis + 1:])

    def _whole(self, part, axis):
        if self.p.squeeze_axis:
            return tuple(part[:axis]) + (self.p.num_outputs,) + tuple(part[axis:])
        return tuple(part[:axis]) + (part[axis] * self.p.num_outputs,) + tuple(part[axis + 1:])

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:
            return in_shapes, out_shapes
        axis = norm_axis('SliceChannel', self.p.axis, len(data))
        part = self._part(data, axis)
        for i, shape in enumerate(out_shapes):
            part = merge_shape('SliceChannel', 'output%d' % i, part, shape)
        data = merge_shape('SliceChannel', 'data', data, self._whole(part, axis))
        return [data], [part] * self.p.num_outputs

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        axis = norm_axis('SliceChannel', self.p.axis, x.ndim)
        self._part(x.shape, axis)
        parts = octx.xp.split(x, self.p.num_outputs, axis=axis)
        if self.p.squeeze_axis:
            return [p.squeeze(axis) for p in parts]
        return [octx.xp.ascontiguousarray(p) for p in parts]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp = octx.xp
        ref = next(g for g in out_grads if g is not None)
        grads = [xp.zeros_like(ref) if g is None else g for g in out_grads]
        if self.p.squeeze_axis:
            axis = norm_axis('SliceChannel', self.p.axis, ref.ndim + 1)
            return [xp.stack(grads, axis=axis)]
        return [xp.concatenate(grads, axis=norm_axis('SliceChannel', self.p.axis, ref.ndim))]


# ---- repetition -------------------------------------------------------------------------------
@register
class Tile(ShapeOnly):
    """Repeat the whole array ``reps`` times along each axis (numpy.tile)."""
    op_name = 'tile'
    params = {'reps': Param('shape')}

    def setup(self):
        bad = [r for r in self.p.reps if r < 0]
        if bad:
            raise MXNetError('tile: reps must be non-negative, got reps=%s' % (self.p.reps,))

    def _layout(self, shape):
        n = max(len(shape), len(self.p.reps))
        src = (1,) * (n - len(shape)) + tuple(shape)
        reps = (1,) * (n - len(self.p.reps)) + tuple(self.p.reps)
        return src, reps

    def infer_shape(self, in_shapes, out_shapes):
        if not is_known(in_shapes[0]):
            return in_shapes, out_shapes
        src, reps = self._layout(in_shapes[0])
        out = tuple(d * r for d, r in zip(src, reps))
        return in_shapes, [merge_shape('tile', 'output', out_shapes[0], out)]

    def forward(self, octx, inputs, aux):
        from ..util import is_np_shape  # pylint: disable=import-outside-toplevel
        if 0 in self.p.reps and not is_np_shape():
            # outside np_shape semantics a zero dimension means 'unknown': MXNet's shape
            # inference for tile fails on it
            raise MXNetError('Operator tile inferring shapes failed: reps=%s gives a zero-size '
                             'output dimension, allowed only under mx.np_shape()'
                             % (self.p.reps,))
        save_shape(octx, inputs[0])
        return [octx.xp.tile(inputs[0], self.p.reps)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape = saved_shape(octx, inputs)[0]
        src, reps = self._layout(shape)
        split = []
        for r, d in zip(reps, src):
            split.extend([r, d])
        summed = out_grads[0].reshape(split).sum(axis=tuple(range(0, len(split), 2)))
        return [summed.reshape(shape)]


@register
class Repeat(ShapeOnly):
    """Repeat each element ``repeats`` times along ``axis`` (flattened when axis is None)."""
    op_name = 'repeat'
    params = {'repeats': Param('int'), 'axis': Param('int?', None)}

    def setup(self):
        if self.p.repeats < 0:
            raise MXNetError('repeat: repeats cannot be negative, got %d' % self.p.repeats)

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:
            return in_shapes, out_shapes
        # MXNet multiplies the unknown size (-1) by repeats and fails (but for one repeat)
        if self.p.axis is None:
            if 0 in data and self.p.repeats:
                raise MXNetError('repeat: without an axis the whole shape of data must be known,'
                                 ' got %s' % (tuple(data),))
            out = (prod(data) * self.p.repeats,)
        else:
            axis = norm_axis('repeat', self.p.axis, len(data))
            if not data[axis] and self.p.repeats > 1:
                raise MXNetError('repeat: the size of axis %d of data %s must be known'
                                 % (axis, tuple(data)))
            out = tuple(d * self.p.repeats if i == axis else d for i, d in enumerate(data))
        if self.p.repeats == 0:
            out = (0,)
        return in_shapes, [merge_shape('repeat', 'output', out_shapes[0], out)]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        save_shape(octx, x)
        if self.p.axis is None:
            return [octx.xp.repeat(x.reshape(-1), self.p.repeats)]
        axis = norm_axis('repeat', self.p.axis, x.ndim)
        return [octx.xp.repeat(x, self.p.repeats, axis=axis)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape = saved_shape(octx, inputs)[0]
        dy = out_grads[0]
        if self.p.axis is None:
            return [dy.reshape(-1, self.p.repeats).sum(axis=1).reshape(shape)]
        axis = norm_axis('repeat', self.p.axis, len(shape))
        split = tuple(shape[:axis + 1]) + (self.p.repeats,) + tuple(shape[axis + 1:])
        return [dy.reshape(split).sum(axis=axis + 1)]


@register
class Reverse(ShapeOnly):
    """Reverse the order of elements along the given axes."""
    op_name = 'reverse'
    aliases = ('flip',)
    params = {'axis': Param('shape')}

    def _axes(self, ndim):
        return tuple(norm_axis('reverse', a, ndim) for a in self.p.axis)

    def infer_shape(self, in_shapes, out_shapes):
        shape = merge_shape('reverse', 'output', in_shapes[0], out_shapes[0])
        if shape is not None:
            self._axes(len(shape))
        return [shape], [shape]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        return [octx.xp.flip(x, axis=self._axes(x.ndim)).copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        dy = out_grads[0]
        return [octx.xp.flip(dy, axis=self._axes(dy.ndim))]


# ---- padding ---------------------------------------------------------------------------------
@register
class Pad(ShapeOnly):
    """Pad a 4-D or 5-D array on its spatial axes (mode constant, edge or reflect)."""
    op_name = 'Pad'
    aliases = ('pad',)
    params = {'mode': Param('str', choices=('constant', 'edge', 'reflect')),
              'pad_width': Param('shape'), 'constant_value': Param('float', 0.0)}

    def _pairs(self, shape, partial=False):
        pw, ndim = self.p.pad_width, len(shape)
        if ndim not in (4, 5):
            raise MXNetError('Pad: only 4-D or 5-D inputs are supported, got shape %s'
                             % (tuple(shape),))
        if len(pw) != 2 * ndim:
            raise MXNetError('Pad: pad_width %s needs %d entries for an input of shape %s'
                             % (pw, 2 * ndim, tuple(shape)))
        if any(pw[:4]):
            raise MXNetError('Pad: padding of the first two axes must be zero, got %s' % (pw,))
        pairs = [(pw[2 * i], pw[2 * i + 1]) for i in range(ndim)]
        if self.p.mode == 'reflect' and any(
                (d and (lo >= d or hi >= d)) or (partial and not d and i in (2, 3))
                for i, (d, (lo, hi)) in enumerate(zip(shape, pairs))):
            raise MXNetError('Pad: reflect padding %s must be smaller than the input %s'
                             % (pw, tuple(shape)))
        return pairs

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:        # MXNet checks the rank (4 or 5) of an unknown shape and fails
            raise MXNetError('Pad: only 4-D or 5-D inputs are supported, got an unknown shape')
        # (MXNet reflect-checks axes 2 and 3 even when unknown, and fails; it adds the padding
        # to an unknown size too, where mxmod keeps the size unknown)
        out = tuple(d + lo + hi if d else 0
                    for d, (lo, hi) in zip(data, self._pairs(data, partial=True)))
        return in_shapes, [merge_shape('Pad', 'output', out_shapes[0], out)]

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        save_shape(octx, x)
        pairs = self._pairs(x.shape)
        if self.p.mode == 'constant':
            return [octx.xp.pad(x, pairs, mode='constant', constant_values=self.p.constant_value)]
        return [octx.xp.pad(x, pairs, mode=self.p.mode)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        shape = saved_shape(octx, inputs)[0]
        grad = out_grads[0]
        for axis, (size, (lo, hi)) in enumerate(zip(shape, self._pairs(shape))):
            if lo or hi:
                grad = self._fold_axis(grad, axis, size, lo, hi)
        return [grad]

    def _fold_axis(self, grad, axis, size, lo, hi):
        """Gradient along one padded axis: the centre, plus each padded position added back to
        the input position it copied (edge/reflect)."""
        lead = (slice(None),) * axis
        out = grad[lead + (slice(lo, lo + size),)].copy()
        if self.p.mode == 'constant':
            return out
        source = np.pad(np.arange(size), (lo, hi), mode=self.p.mode)
        for j in list(range(lo)) + list(range(lo + size, lo + size + hi)):
            src = int(source[j])
            out[lead + (slice(src, src + 1),)] += grad[lead + (slice(j, j + 1),)]
        return out
