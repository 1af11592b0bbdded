"""Loss layers (SoftmaxOutput, the regression outputs, SVMOutput, MakeLoss, make_loss) and the
ordinary loss-shaped operators smooth_l1 and softmax_cross_entropy.

A loss layer (``is_loss = True``) ignores the gradient arriving at its output: its backward
writes the gradient of the loss it stands for, and its label receives a zero gradient."""
import numpy as np

from ..base import MXNetError
from .base import forward_shape_infer, Operator, Param, register, merge_shape

_NORMALIZATIONS = ('null', 'batch', 'valid')

def _softmax(xp, x, axis):
    """Numerically stable softmax along ``axis`` (float16 computed in float32)."""
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    if xp is np:        # the reductions without ndarray.max/sum's Python wrappers
        e = np.subtract(work, np.maximum.reduce(work, axis=axis, keepdims=True))
        np.exp(e, out=e)
        e /= np.add.reduce(e, axis=axis, keepdims=True)
        return e if e.dtype is x.dtype else e.astype(x.dtype, copy=False)
    e = xp.exp(work - work.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)
    return e.astype(x.dtype, copy=False)

def _size(shape):
    total = 1
    for d in shape:
        total *= d
    return total

def _known(shape):
    return shape is not None and all(d > 0 for d in shape)

def _label_zero_grad(octx, label):
    need = octx.need_grad
    return octx.xp.zeros_like(label) if need is not None and need[1] else None

def _onehot_grad(xp, prob, labels, axis, alpha):
    """``prob`` minus a (smoothed) one-hot of integer ``labels`` along ``axis``; labels outside
    [0, K) subtract nothing, as in MXNet."""
    k = prob.shape[axis]
    if alpha == 0.0 and prob.ndim == 2 and axis == 1:
        if prob.size <= _SMALL_ONEHOT:
            # rows x classes, few: the boolean one-hot subtracted as it is (True counts 1, False
            # 0: the values of the float one-hot); a label outside [0, K) matches no class
            return xp.subtract(prob, labels[:, None] == _classes(xp, k))
        # many: subtract 1 at each row's label (fewer passes over memory than a one-hot)
        grad = prob.copy()
        valid = (labels >= 0) & (labels < k)
        rows = xp.arange(prob.shape[0])
        if bool(valid.all()):
            grad[rows, labels] -= 1
        else:
            grad[rows[valid], labels[valid]] -= 1
        return grad
    shape = [1] * prob.ndim
    shape[axis] = k
    classes = xp.arange(k).reshape(shape)
    hit = labels.reshape(labels.shape[:axis] + (1,) + labels.shape[axis:]) == classes
    if alpha == 0.0:
        return prob - hit.astype(prob.dtype)
    off = alpha / (k - 1) if k > 1 else 0.0
    target = xp.where(hit, 1.0 - alpha, off).astype(prob.dtype)
    return prob - target

_CLASSES = {}
# gradients of this many elements or fewer subtract a boolean one-hot: for 8 x 2 it takes 1.5 us
# against 4.4 us for the copy and indexed subtraction, for 128 x 100 14.0 us against 6.4
_SMALL_ONEHOT = 2048


def _classes(xp, k):
    """``xp.arange(k)`` (int64), made once per number of classes on the host."""
    if xp is not np:
        return xp.arange(k)
    classes = _CLASSES.get(k)
    if classes is None:
        classes = np.arange(k, dtype=np.int64)
        classes.flags.writeable = False
        if len(_CLASSES) < 64:
            _CLASSES[k] = classes
    return classes


class _LabelledLoss(Operator):
    """Loss layer with arguments (data, label); label dtype follows data."""
    arguments = ('data', 'label')
    is_loss = True
    backward_uses = ('inputs', 'outputs')

    def infer_type(self, in_types, out_types):
        dtype = in_types[0] or (out_types[0] if out_types else None)
        if dtype is None:
            return in_types, out_types
        return [dtype] * len(in_types), [dtype]     # one type for data and label, as MXNet

# ---- SoftmaxOutput ----------------------------------------------------------------------------
@register
class SoftmaxOutput(_LabelledLoss):
    """Softmax forward; backward is the cross-entropy gradient ``softmax - onehot(label)``.

    Parameters (MXNet's): grad_scale, ignore_label, multi_output, use_ignore, preserve_shape,
    normalization ('null' | 'batch' | 'valid'), out_grad, smooth_alpha. A label with the output's
    shape is a probability label (gradient ``out - label``, no normalization). Like MXNet 1.9.1,
    ``out_grad=True`` multiplies the gradient by the softmax output (its backward node receives the
    output where the head gradient was meant to be)."""
    op_name = 'SoftmaxOutput'
    aliases = ('Softmax',)
    params = {'grad_scale': Param('float', 1.0), 'ignore_label': Param('float', -1.0),
              'multi_output': Param('bool', False), 'use_ignore': Param('bool', False),
              'preserve_shape': Param('bool', False),
              'normalization': Param('str', 'null', _NORMALIZATIONS),
              'out_grad': Param('bool', False), 'smooth_alpha': Param('float', 0.0)}

    def setup(self):
        if not 0.0 <= self.p.smooth_alpha <= 1.0:
            raise MXNetError('SoftmaxOutput: smooth_alpha must be in [0, 1], got %s'
                             % self.p.smooth_alpha)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: from data forwards (the label from data; nothing flows back from the output)
        data, label = in_shapes
        if data is None or not data:
            return [data, label], list(out_shapes)
        if label != data:
            if self.p.multi_output:
                label = self._multi_label_shape(data, label)
            else:
                label = merge_shape(self.op_name, 'label', label, tuple(data[:-1]))
        return [data, label], [data]

    def _multi_label_shape(self, data, label):
        if not _known(data):
            raise MXNetError('SoftmaxOutput (multi_output): the label shape follows from data\'s '
                             'size, which needs every dimension of data known; got %s'
                             % (tuple(data),))
        n, k = data[0], data[1]
        flat = (n, _size(data) // n // k)
        if label is None:
            return flat
        allowed = [flat, (n,) + tuple(data[2:]), (n, 1) + tuple(data[2:])]
        if tuple(label) not in allowed:
            raise MXNetError('SoftmaxOutput (multi_output): label shape %s does not fit data %s;'
                             ' expected %s or %s' % (tuple(label), tuple(data), allowed[0], allowed[1]))
        return label

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        if self.p.multi_output:
            n, k = x.shape[0], x.shape[1]
            return [_softmax(octx.xp, x.reshape(n, k, -1), 1).reshape(x.shape)]
        if self.p.preserve_shape:
            return [_softmax(octx.xp, x, x.ndim - 1)]
        return [_softmax(octx.xp, x.reshape(x.shape[0], -1), 1).reshape(x.shape)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, (data, label), out = octx.xp, inputs, outputs[0]
        if tuple(label.shape) == tuple(out.shape):
            grad = (out - label) * out.dtype.type(self.p.grad_scale)
        elif self.p.multi_output:
            grad = self._multi_grad(xp, out, label)
        else:
            grad = self._flat_grad(xp, out, label)
        if self.p.out_grad:
            grad = grad * out
        return [grad.astype(data.dtype, copy=False), _label_zero_grad(octx, label)]

    def _valid_count(self, xp, labels):
        if self.p.normalization != 'valid':
            return None
        ignored = int(xp.count_nonzero(labels == int(self.p.ignore_label)))
        return max(labels.size - ignored, 1)

    def _ignore(self, xp, grad, labels, axis):
        if self.p.use_ignore:
            keep = xp.expand_dims(labels != int(self.p.ignore_label), axis)
            grad = grad * keep.astype(grad.dtype)
        return grad

    def _flat_grad(self, xp, out, label):
        if self.p.preserve_shape:
            rows = _size(out.shape[:-1])
        else:
            rows = out.shape[0]
        prob = out.reshape(rows, -1)
        labels = label.reshape(-1).astype(np.int64)
        if labels.size < rows:
            raise MXNetError('SoftmaxOutput: label has %d entries, expected at least %d (label %s,'
                             ' data %s)' % (labels.size, rows, tuple(label.shape), tuple(out.shape)))
        used = labels[:rows]
        grad = self._ignore(xp, _onehot_grad(xp, prob, used, 1, self.p.smooth_alpha), used, 1)
        count = {'null': 1, 'batch': labels.size}.get(self.p.normalization)
        count = count or self._valid_count(xp, labels)
        scale = self.p.grad_scale / count
        if scale != 1.0:
            grad *= prob.dtype.type(scale)
        return grad.reshape(out.shape)

    def _multi_grad(self, xp, out, label):
        n, k = out.shape[0], out.shape[1]
        prob = out.reshape(n, k, -1)
        spatial = prob.shape[2]
        labels = label.reshape(n, spatial).astype(np.int64)
        grad = self._ignore(xp, _onehot_grad(xp, prob, labels, 1, 0.0), labels, 1)
        count = {'null': 1, 'batch': n}.get(self.p.normalization)
        count = count or self._valid_count(xp, labels)
        divisor = count * (1 if self.p.normalization == 'valid' else spatial)
        return (grad * prob.dtype.type(self.p.grad_scale / divisor)).reshape(out.shape)

# ---- regression outputs -----------------------------------------------------------------------
class _RegressionOutput(_LabelledLoss):
    """Forward ``fn(data)``; gradient ``dloss(out, label) * grad_scale / outputs-per-sample``."""
    params = {'grad_scale': Param('float', 1.0)}

    @staticmethod
    def fn(xp, x):
        return x

    @staticmethod
    def dloss(xp, out, label):
        return out - label

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: once data is fully known, forwards only
        data, label = in_shapes
        if not _known(data):
            return [data, label], list(out_shapes)
        if label is None:
            label = (data[0],) if len(data) == 2 and data[1] == 1 else tuple(data)
        elif not _known(label) or label[0] != data[0] or _size(label) != _size(data):
            raise MXNetError('%s: label shape %s is inconsistent with data shape %s (the first'
                             ' dimension and the total size must match)'
                             % (self.op_name, tuple(label), tuple(data)))
        return [data, label], [data]

    def forward(self, octx, inputs, aux):
        return [self.fn(octx.xp, inputs[0]).astype(inputs[0].dtype, copy=False)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        data, label = inputs
        out = outputs[0]
        per_sample = label.size // label.shape[0] if label.ndim and label.shape[0] else 1
        grad = self.dloss(octx.xp, out, label.reshape(out.shape).astype(out.dtype, copy=False))
        grad = grad * out.dtype.type(self.p.grad_scale / per_sample)
        return [grad.astype(data.dtype, copy=False), _label_zero_grad(octx, label)]

def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))

@register
class LinearRegressionOutput(_RegressionOutput):
    """Identity forward; squared-loss gradient ``(out - label) * grad_scale / m``."""
    op_name = 'LinearRegressionOutput'

@register
class MAERegressionOutput(_RegressionOutput):
    """Identity forward; absolute-loss gradient ``sign(out - label) * grad_scale / m`` where a zero
    difference counts as negative (MXNet's ``minus_sign``)."""
    op_name = 'MAERegressionOutput'
    dloss = staticmethod(lambda xp, out, label: xp.where(out - label > 0, 1.0, -1.0).astype(out.dtype))

@register
class LogisticRegressionOutput(_RegressionOutput):
    """Sigmoid forward; binary cross-entropy gradient ``(out - label) * grad_scale / m``."""
    op_name = 'LogisticRegressionOutput'
    fn = staticmethod(_sigmoid)

# ---- SVMOutput -------------------------------------------------------------------------------
@register
class SVMOutput(_LabelledLoss):
    """Identity forward; backward is the L2-SVM (default) or L1-SVM hinge gradient."""
    op_name = 'SVMOutput'
    params = {'margin': Param('float', 1.0), 'regularization_coefficient': Param('float', 1.0),
              'use_linear': Param('bool', False)}

    def infer_shape(self, in_shapes, out_shapes):
        data, label = in_shapes      # as MXNet: from data forwards only
        if data is None:
            return [data, label], list(out_shapes)
        if data:
            label = merge_shape(self.op_name, 'label', label, tuple(data[:-1]))
        return [data, label], [data]

    def forward(self, octx, inputs, aux):
        return [inputs[0].copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, (data, label), out = octx.xp, inputs, outputs[0]
        src = out.reshape(out.shape[0], -1)
        labels = label.reshape(-1).astype(np.int64)
        hit = xp.arange(src.shape[1]).reshape(1, -1) == labels[:src.shape[0]].reshape(-1, 1)
        margin, reg = src.dtype.type(self.p.margin), src.dtype.type(self.p.regularization_coefficient)
        if self.p.use_linear:
            grad = xp.where(hit, -(margin > src).astype(src.dtype), (margin > -src).astype(src.dtype))
        else:
            grad = xp.where(hit, xp.where(margin > src, -2 * (margin - src), 0),
                            xp.where(margin > -src, 2 * (margin + src), 0))
        grad = (grad * reg).astype(data.dtype, copy=False).reshape(data.shape)
        return [grad, _label_zero_grad(octx, label)]

# ---- MakeLoss / make_loss ---------------------------------------------------------------------
@register
class MakeLoss(Operator):
    """Identity forward; the gradient is ``grad_scale`` everywhere, divided by the batch size
    ('batch') or by the number of elements above ``valid_thresh`` ('valid', at least 1)."""
    op_name = 'MakeLoss'
    params = {'grad_scale': Param('float', 1.0), 'valid_thresh': Param('float', 0.0),
              'normalization': Param('str', 'null', _NORMALIZATIONS)}
    is_loss = True
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        return forward_shape_infer(self, in_shapes, out_shapes)

    def forward(self, octx, inputs, aux):
        return [inputs[0].copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, data = octx.xp, inputs[0]
        scale = self.p.grad_scale
        if self.p.normalization == 'batch':
            scale /= data.shape[0]
        elif self.p.normalization == 'valid':
            valid = int(xp.count_nonzero(data > data.dtype.type(self.p.valid_thresh)))
            scale /= max(valid, 1)
        return [xp.full(data.shape, scale, dtype=data.dtype)]

@register
class MakeLossUnary(Operator):
    """``make_loss``: identity forward, gradient of ones (the head gradient is not used)."""
    op_name = 'make_loss'
    outputs = ('loss',)
    is_loss = True
    backward_uses = ('inputs',)

    def forward(self, octx, inputs, aux):
        return [inputs[0].copy()]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return [octx.xp.ones_like(inputs[0])]

# ---- smooth_l1, softmax_cross_entropy (ordinary operators) ------------------------------------
@register
class SmoothL1(Operator):
    """Elementwise smooth L1: ``0.5 (sigma x)^2`` when ``|x| < 1/sigma^2``, else
    ``|x| - 0.5/sigma^2``, with sigma = ``scalar``."""
    op_name = 'smooth_l1'
    params = {'scalar': Param('float', 1.0), 'is_int': Param('bool', True)}
    backward_uses = ('inputs',)
    mirror_cheap = True

    def forward(self, octx, inputs, aux):
        x = inputs[0]
        sq = x.dtype.type(self.p.scalar * self.p.scalar)
        inv = 1 / sq
        ax = octx.xp.abs(x)
        return [octx.xp.where(ax > inv, ax - 0.5 * inv, 0.5 * x * x * sq).astype(x.dtype, copy=False)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        x = inputs[0]
        sq = x.dtype.type(self.p.scalar * self.p.scalar)
        inv = 1 / sq
        slope = octx.xp.where(octx.xp.abs(x) > inv, octx.xp.sign(x), sq * x)
        return [(out_grads[0] * slope).astype(x.dtype, copy=False)]

@register
class SoftmaxCrossEntropy(Operator):
    """Sum over the batch of ``-log(softmax(data)[label])`` (probabilities clipped at 1e-8); output
    shape (1,). data (N, K), label (N,)."""
    op_name = 'softmax_cross_entropy'
    arguments = ('data', 'label')
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        # as MXNet: both shapes must be there (of 2 and 1 dims), their first dims equal (an
        # unknown dim equals only an unknown dim)
        data, label = in_shapes
        for what, shape, ndim in (('data', data, 2), ('label', label, 1)):
            if shape is None or len(shape) != ndim:
                raise MXNetError('softmax_cross_entropy: %s must be %d-D, got %s'
                                 % (what, ndim, 'an unknown shape' if shape is None
                                    else 'shape %s' % (tuple(shape),)))
        if data[0] != label[0]:
            raise MXNetError('softmax_cross_entropy: data %s and label %s differ in their batch '
                             'size' % (tuple(data), tuple(label)))
        return [data, label], [(1,)]

    def forward(self, octx, inputs, aux):
        xp, (data, label) = octx.xp, inputs
        prob = _softmax(xp, data, 1)
        picked = xp.take_along_axis(prob, label.astype(np.int64).reshape(-1, 1), axis=1)
        loss = -xp.log(xp.maximum(picked, data.dtype.type(1e-8))).sum()
        return [loss.reshape(1).astype(data.dtype)]

    def backward(self, octx, out_grads, inputs, outputs, aux):
        xp, (data, label) = octx.xp, inputs
        grad = _onehot_grad(xp, _softmax(xp, data, 1), label.astype(np.int64), 1, 0.0)
        return [(grad * out_grads[0].reshape(1, 1)).astype(data.dtype, copy=False), None]
