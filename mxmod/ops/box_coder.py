"""The regression-target pair of contrib's box operators: box_encode (matched anchors and
references to normalised centre offsets) and box_decode (predictions back to boxes), with
MXNet's float rounding of the centre points."""
import numpy as np

from ..base import MXNetError
from .base import Operator, Param, register, merge_shape
from .boxes import _FORMATS


def _half_step(start, size):
    """``start + size * 0.5`` rounded once to the array's dtype, as MXNet's kernels compute it
    (the 0.5 is a double there)."""
    return (start + size.astype(np.float64) * 0.5).astype(size.dtype, copy=False)


def _corner_parts(box):
    """Centre x, centre y, width and height of (..., 4) corner boxes."""
    width = box[..., 2] - box[..., 0]
    height = box[..., 3] - box[..., 1]
    return _half_step(box[..., 0], width), _half_step(box[..., 1], height), width, height


def _check_boxes(op, what, shape, ndim=None, min_ndim=None):
    """MXNet's checks (at inference too): the shape's rank must be known and fit, and boxes end in
    a known last dim of 4."""
    if shape is None:
        raise MXNetError('%s: the shape of %s must be known' % (op, what))
    if ndim is not None and len(shape) != ndim:
        raise MXNetError('%s: %s must have %d dimensions, got shape %s'
                         % (op, what, ndim, tuple(shape)))
    if min_ndim is not None and len(shape) < min_ndim:
        raise MXNetError('%s: %s must have at least %d dimensions, got shape %s'
                         % (op, what, min_ndim, tuple(shape)))
    if (ndim or min_ndim) >= 3 and shape[-1] != 4:
        raise MXNetError('%s: the last dimension of %s must be 4, got shape %s'
                         % (op, what, tuple(shape)))


@register
class BoxEncode(Operator):
    """Regression targets of anchors (B, N, 4) towards their matched references (B, M, 4), both
    corner boxes: ``((dx / aw, dy / ah, log(rw / aw), log(rh / ah)) - means) / stds`` for the
    positive samples (``samples > 0.5``), zero elsewhere; the second output is the 0/1 mask of
    positive samples repeated over the 4 coordinates. Zero gradients."""
    op_name = '_contrib_box_encode'
    arguments = ('samples', 'matches', 'anchors', 'refs', 'means', 'stds')
    outputs = ('output0', 'output1')
    backward_uses = ()

    @staticmethod
    def _check(samples, matches, anchors, refs):
        _check_boxes('box_encode', 'samples', samples, ndim=2)
        _check_boxes('box_encode', 'matches', matches, min_ndim=2)
        _check_boxes('box_encode', 'anchors', anchors, min_ndim=3)
        _check_boxes('box_encode', 'refs', refs, min_ndim=3)

    def infer_shape(self, in_shapes, out_shapes):
        samples, matches, anchors, refs, means, stds = in_shapes
        self._check(samples, matches, anchors, refs)
        means = merge_shape(self.op_name, 'means', means, (4,))
        stds = merge_shape(self.op_name, 'stds', stds, (4,))
        return [samples, matches, anchors, refs, means, stds], [anchors, anchors]

    def forward(self, octx, inputs, aux):
        xp = octx.xp
        samples, matches, anchors, refs, means, stds = inputs
        self._check(samples.shape, matches.shape, anchors.shape, refs.shape)
        for name, arr in (('means', means), ('stds', stds)):
            if arr.size != 4:
                raise MXNetError('box_encode: %s must have shape (4,), got %s'
                                 % (name, tuple(arr.shape)))
        octx.saved['meta'] = [(tuple(x.shape), x.dtype) for x in inputs]
        batch, count = anchors.shape[:2]
        dtype = anchors.dtype
        if samples.size != batch * count or matches.size < batch * count or \
                anchors.size != batch * count * 4:
            raise MXNetError('box_encode: samples %s and matches %s must hold one value per anchor '
                             'of anchors %s' % (tuple(samples.shape), tuple(matches.shape),
                                                tuple(anchors.shape)))
        num_refs = refs.shape[1]
        refs = refs.reshape(refs.shape[0], -1, 4)
        if refs.shape[0] < batch:
            raise MXNetError('box_encode: refs %s must have one batch entry per batch of anchors %s'
                             % (tuple(refs.shape), tuple(anchors.shape)))
        anchors = anchors.reshape(batch, count, 4)
        valid = samples.reshape(batch, count) > 0.5
        match = matches.reshape(-1)[:batch * count].reshape(batch, count).astype(np.int64)
        bad = valid & ((match < 0) | (match >= num_refs))
        if bool(bad.any()):
            raise MXNetError('box_encode: matches of positive samples must lie in [0, %d), got %s'
                             % (num_refs, match[bad][:5].tolist()))
        match = xp.clip(match, 0, num_refs - 1)
        ref = xp.take_along_axis(refs[:, :num_refs], match[..., None], axis=1)
        rx, ry, rw, rh = _corner_parts(ref)
        ax, ay, aw, ah = _corner_parts(anchors)
        means, stds = means.reshape(4), stds.reshape(4)
        wide = np.float64
        with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
            # offsets in the dtype; the log-size terms in double, rounded once (MXNet's kernel)
            target = xp.stack([
                ((rx - ax) / aw - means[0]) / stds[0],
                ((ry - ay) / ah - means[1]) / stds[1],
                ((xp.log((rw / aw).astype(wide)) - means[2].astype(wide)) / stds[2].astype(wide))
                .astype(dtype),
                ((xp.log((rh / ah).astype(wide)) - means[3].astype(wide)) / stds[3].astype(wide))
                .astype(dtype)], axis=-1)
        mask = xp.broadcast_to(valid[..., None], target.shape)
        target = xp.where(mask, target, 0).astype(dtype, copy=False)
        shape = inputs[2].shape
        return [target.reshape(shape), mask.astype(dtype).reshape(shape)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [octx.xp.zeros(s, d) for s, d in octx.saved['meta']]


@register
class BoxDecode(Operator):
    """Boxes (B, N, 4) in corner format from regression offsets ``data`` (B, N, 4) relative to
    ``anchors`` (1, N, 4) given in ``format`` (corner or center): centre ``a + d * std * a_size``
    and size ``a_size * exp(d * std)`` (the exponent capped at ``clip`` when it is positive).
    Zero gradients."""
    op_name = '_contrib_box_decode'
    arguments = ('data', 'anchors')
    params = {'std0': Param('float', 1.0), 'std1': Param('float', 1.0),
              'std2': Param('float', 1.0), 'std3': Param('float', 1.0),
              'clip': Param('float', -1.0), 'format': Param('str', 'center', _FORMATS)}
    backward_uses = ()

    def infer_shape(self, in_shapes, out_shapes):
        data, anchors = in_shapes
        _check_boxes('box_decode', 'data', data, ndim=3)
        _check_boxes('box_decode', 'anchors', anchors, min_ndim=3)
        return [data, anchors], [data]      # as MXNet: forwards only

    def forward(self, octx, inputs, aux):
        xp, p = octx.xp, self.p
        data, anchors = inputs
        _check_boxes('box_decode', 'data', data.shape, ndim=3)
        _check_boxes('box_decode', 'anchors', anchors.shape, min_ndim=3)
        octx.saved['meta'] = [(tuple(x.shape), x.dtype) for x in inputs]
        count = data.shape[1]
        if anchors.size != count * 4:
            raise MXNetError('box_decode: anchors %s must hold one box per box of data %s, i.e. '
                             'shape (1, %d, 4)' % (tuple(anchors.shape), tuple(data.shape), count))
        dtype = data.dtype.type
        anchors = anchors.reshape(1, count, 4)
        if p.format == 'corner':
            ax, ay, aw, ah = _corner_parts(anchors)
        else:
            ax, ay, aw, ah = (anchors[..., i] for i in range(4))
        cx = data[..., 0] * dtype(p.std0) * aw + ax
        cy = data[..., 1] * dtype(p.std1) * ah + ay
        dw = data[..., 2] * dtype(p.std2)
        dh = data[..., 3] * dtype(p.std3)
        if p.clip > 0:
            dw = xp.minimum(dw, dtype(p.clip))
            dh = xp.minimum(dh, dtype(p.clip))
        with np.errstate(over='ignore'):
            # the exponential is a double one rounded to the dtype, as in MXNet's kernel
            half_w = xp.exp(dw.astype(np.float64)).astype(data.dtype) * aw * dtype(0.5)
            half_h = xp.exp(dh.astype(np.float64)).astype(data.dtype) * ah * dtype(0.5)
        out = xp.stack([cx - half_w, cy - half_h, cx + half_w, cy + half_h], axis=-1)
        return [out.astype(data.dtype, copy=False)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [octx.xp.zeros(s, d) for s, d in octx.saved['meta']]
