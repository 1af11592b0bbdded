"""``mx.gluon.loss``: Gluon's losses. Each is a HybridBlock called as ``loss(pred, label,
[sample_weight])`` returning one value per sample (the mean over every axis but
``batch_axis``), scaled by the constructor's ``weight`` and the per-sample ``sample_weight``."""
import numpy as np

from .. import ndarray
from ..base import numeric_types
from .hybrid_block import HybridBlock

__all__ = ['Loss', 'L2Loss', 'L1Loss', 'SigmoidBinaryCrossEntropyLoss', 'SigmoidBCELoss',
           'SoftmaxCrossEntropyLoss', 'SoftmaxCELoss', 'KLDivLoss', 'CTCLoss', 'HuberLoss',
           'HingeLoss', 'SquaredHingeLoss', 'LogisticLoss', 'TripletLoss', 'PoissonNLLLoss',
           'CosineEmbeddingLoss', 'SDMLLoss']


def _apply_weighting(F, loss, weight=None, sample_weight=None):  # pylint: disable=invalid-name
    """``loss`` times ``sample_weight`` (broadcast) and the number ``weight``."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        if not isinstance(weight, numeric_types):
            raise AssertionError('weight must be a number')
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):  # pylint: disable=invalid-name
    """``x`` in the shape of ``y``."""
    if F is ndarray:
        return x.reshape(y.shape)
    return F.reshape_like(x, y)


class Loss(HybridBlock):
    """Base of the losses.

    Parameters
    ----------
    weight : float or None
        Global scale of the loss.
    batch_axis : int
        The sample axis (kept; the others are averaged or summed).
    """

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return '%s(batch_axis=%s, w=%s)' % (type(self).__name__, self._batch_axis, self._weight)

    def hybrid_forward(self, F, x, *args, **kwargs):  # pylint: disable=invalid-name
        raise NotImplementedError('%s does not define hybrid_forward()' % type(self).__name__)

    def _mean(self, F, loss):  # pylint: disable=invalid-name
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class L2Loss(Loss):
    """``weight / 2 * (label - pred) ** 2``, averaged per sample (weight defaults to 1)."""

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):  # pylint: disable=arguments-differ,invalid-name
        label = _reshape_like(F, label, pred)
        loss = _apply_weighting(F, F.square(label - pred), self._weight / 2, sample_weight)
        return self._mean(F, loss)


class L1Loss(Loss):
    """``|label - pred|``, averaged per sample."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):  # pylint: disable=arguments-differ,invalid-name
        label = _reshape_like(F, label, pred)
        loss = _apply_weighting(F, F.abs(label - pred), self._weight, sample_weight)
        return self._mean(F, loss)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross-entropy of labels in [0, 1] and ``sigmoid(pred)`` (``pred`` itself when
    ``from_sigmoid``), in a numerically stable form; ``pos_weight`` scales the positive
    term."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):  # pylint: disable=arguments-differ,invalid-name
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            softplus = F.Activation(-F.abs(pred), act_type='softrelu')
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + softplus
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * (softplus + F.relu(-pred))
        else:
            eps = 1e-12
            if pos_weight is None:
                loss = -(F.log(pred + eps) * label + F.log(1. - pred + eps) * (1. - label))
            else:
                loss = -(F.broadcast_mul(F.log(pred + eps) * label, pos_weight)
                         + F.log(1. - pred + eps) * (1. - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """Cross-entropy of ``softmax(pred)`` (``pred`` as log-probabilities when ``from_logits``)
    with class indices (``sparse_label``) or probability labels, along ``axis``."""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):  # pylint: disable=arguments-differ,invalid-name
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """``label * (log(label) - pred)`` summed per sample; ``pred`` holds log-probabilities
    (``from_logits``, the default) or logits that get a log-softmax along ``axis``."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):  # pylint: disable=arguments-differ,invalid-name
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    """Connectionist temporal classification loss (blank label: the last class).

    Parameters
    ----------
    layout : {'NTC', 'TNC'}, default 'NTC'
    label_layout : {'NT', 'TN'}, default 'NT'
    weight : float, optional
    """

    def __init__(self, layout='NTC', label_layout='NT', weight=None, **kwargs):
        if layout not in ('NTC', 'TNC'):
            raise AssertionError("Only 'NTC' and 'TNC' layouts for pred are supported. Got: %s"
                                 % layout)
        if label_layout not in ('NT', 'TN'):
            raise AssertionError("Only 'NT' and 'TN' layouts for label are supported. Got: %s"
                                 % label_layout)
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find('N'), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,  # pylint: disable=arguments-differ,invalid-name
                       sample_weight=None):
        if self._layout == 'NTC':
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        args = [pred, label] + [arr for arr in (pred_lengths, label_lengths) if arr is not None]
        loss = F.CTCLoss(*args, use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label='last')
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    """Smoothed L1: ``0.5 / rho * err ** 2`` for ``|err| <= rho``, ``|err| - 0.5 * rho``
    beyond."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):  # pylint: disable=arguments-differ,invalid-name
        label = _reshape_like(F, label, pred)
        err = F.abs(label - pred)
        loss = F.where(err > self._rho, err - 0.5 * self._rho,
                       (0.5 / self._rho) * F.square(err))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` for labels in {-1, 1}."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):  # pylint: disable=arguments-differ,invalid-name
        label = _reshape_like(F, label, pred)
        loss = _apply_weighting(F, F.relu(self._margin - pred * label), self._weight,
                                sample_weight)
        return self._mean(F, loss)


class SquaredHingeLoss(Loss):
    """``max(0, margin - pred * label) ** 2`` for labels in {-1, 1}."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):  # pylint: disable=arguments-differ,invalid-name
        label = _reshape_like(F, label, pred)
        loss = F.square(F.relu(self._margin - pred * label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))`` for labels in {-1, 1} (``label_format='signed'``) or
    {0, 1} ('binary')."""

    def __init__(self, weight=None, batch_axis=0, label_format='signed', **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if label_format not in ('signed', 'binary'):
            raise ValueError('label_format can only be signed or binary, recieved %s.'
                             % label_format)

    def hybrid_forward(self, F, pred, label, sample_weight=None):  # pylint: disable=arguments-differ,invalid-name
        label = _reshape_like(F, label, pred)
        if self._label_format == 'signed':
            label = (label + 1.0) / 2.0
        loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type='softrelu')
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


class TripletLoss(Loss):
    """``max(0, |pred - positive|^2 - |pred - negative|^2 + margin)`` per sample."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative):  # pylint: disable=arguments-differ,invalid-name
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        return _apply_weighting(F, F.relu(loss + self._margin), self._weight, None)


class PoissonNLLLoss(Loss):
    """Negative log-likelihood of ``target`` under a Poisson distribution whose log-rate is
    ``pred`` (``from_logits``) or whose rate is ``pred``; ``compute_full`` adds Stirling's
    term. Returns the mean over all elements."""

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):  # pylint: disable=arguments-differ,invalid-name
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            loss = loss + stirling * (target > 1)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(input1, input2)`` for label 1, ``max(0, cos - margin)`` for label -1; one
    value per sample, shape (batch, 1)."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):  # pylint: disable=arguments-differ,invalid-name
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        positive = (1 - cos_sim) * (label == 1)
        zero = F.array([0]) if F is ndarray else F.zeros((1, 1))
        negative = F.broadcast_maximum(zero, (label == -1) * (cos_sim - self._margin))
        return _apply_weighting(F, positive + negative, self._weight, sample_weight)

    @staticmethod
    def _cosine_similarity(F, x, y, axis=-1):  # pylint: disable=invalid-name
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        dot = F.sum(x * y, axis=axis).reshape((-1, 1))
        eps = F.array([1e-12]) if F is ndarray else F.full((1, 1), 1e-12)
        return dot / F.broadcast_maximum(x_norm * y_norm, eps)


class SDMLLoss(Loss):
    """Smoothed deep metric learning loss over a batch of paired embeddings (x1[i] matches
    x2[i]): KL divergence between smoothed identity labels and the softmax of negative
    squared distances."""

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    @staticmethod
    def _compute_distances(x1, x2):
        if x1.shape != x2.shape:
            raise AssertionError('SDMLLoss: x1 and x2 must have the same shape, got %s and %s'
                                 % (x1.shape, x2.shape))
        batch, dim = x1.shape
        left = x1.expand_dims(1).broadcast_to([batch, batch, dim])
        right = x2.expand_dims(0).broadcast_to([batch, batch, dim])
        return ((left - right) ** 2).sum(axis=2)

    def _compute_labels(self, F, batch_size):  # pylint: disable=invalid-name
        gold = F.eye(batch_size)
        smooth = self.smoothing_parameter
        return gold * (1 - smooth) + (1 - gold) * smooth / (batch_size - 1)

    def hybrid_forward(self, F, x1, x2):  # pylint: disable=arguments-differ,invalid-name
        labels = self._compute_labels(F, x1.shape[0])
        distances = self._compute_distances(x1, x2)
        log_probabilities = F.log_softmax(-distances, axis=1)
        return self.kl_loss(log_probabilities, labels.as_in_context(distances.context))
