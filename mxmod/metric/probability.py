"""Metrics on predicted probabilities and losses: CrossEntropy, NegativeLogLikelihood,
Perplexity, and Loss (with its Torch and Caffe aliases).

Per-batch sums are computed in the predictions' dtype (as MXNet does on the device) and
accumulated in float64."""
import numpy

from ..ndarray import NDArray
from .base import EvalMetric, register, alias, check_label_shapes, to_host

__all__ = ['CrossEntropy', 'NegativeLogLikelihood', 'Perplexity', 'Loss', 'Torch', 'Caffe']


def _label_log_loss(label, pred, eps, metric):
    """Sum of -log(p[label] + eps) over the rows of ``pred``; returns (loss, rows)."""
    label = to_host(label).ravel()
    pred = to_host(pred)
    rows = pred.shape[0]
    if label.shape[0] != rows:
        raise ValueError('%s: %d labels for %d prediction rows (pred shape %s)'
                         % (metric, label.shape[0], rows, pred.shape))
    prob = pred[numpy.arange(rows, dtype=numpy.int64), numpy.int64(label)]
    return (-numpy.log(prob + eps)).sum(), rows


@register
@alias('ce')
class CrossEntropy(EvalMetric):
    """Mean of -log(p[label] + eps) over samples.

    Parameters
    ----------
    eps : float, default 1e-12
        Added to the probabilities before the log.
    name : str, default 'cross-entropy'
    output_names, label_names : list of str, optional
    """

    def __init__(self, eps=1e-12, name='cross-entropy', output_names=None, label_names=None):
        super(CrossEntropy, self).__init__(name, eps=eps, output_names=output_names,
                                           label_names=label_names, has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        """Add the summed cross entropy of every (label, probabilities) pair."""
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._add(*_label_log_loss(label, pred, self.eps, type(self).__name__))


@register
@alias('nll_loss')
class NegativeLogLikelihood(CrossEntropy):
    """Mean negative log-likelihood of the labels: -log(p[label] + eps) per sample.

    Parameters
    ----------
    eps : float, default 1e-12
    name : str, default 'nll-loss'
    output_names, label_names : list of str, optional
    """

    def __init__(self, eps=1e-12, name='nll-loss', output_names=None, label_names=None):
        super(NegativeLogLikelihood, self).__init__(eps=eps, name=name,
                                                    output_names=output_names,
                                                    label_names=label_names)


@register
class Perplexity(EvalMetric):
    """exp of the mean negative log-probability of the labels.

    Parameters
    ----------
    ignore_label : int or None
        Label value excluded from the count (None counts everything).
    axis : int, default -1
        The class axis of the predictions.
    name : str, default 'perplexity'
    output_names, label_names : list of str, optional
    """

    def __init__(self, ignore_label, axis=-1, name='perplexity', output_names=None,
                 label_names=None):
        super(Perplexity, self).__init__(name, ignore_label=ignore_label, axis=axis,
                                         output_names=output_names, label_names=label_names,
                                         has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis
        self._dtype = numpy.dtype(numpy.float32)

    def _pick(self, label, pred):
        """Probabilities of the labels (indices clipped to the class range) and the labels."""
        pred = numpy.moveaxis(to_host(pred), self.axis, -1)
        classes = pred.shape[-1]
        label = to_host(label).ravel()
        if label.size * classes != pred.size:
            raise ValueError('Perplexity: shape mismatch, labels %s vs. predictions %s with %d '
                             'classes on axis %d' % (label.shape, pred.shape, classes, self.axis))
        index = numpy.clip(label.astype('int32'), 0, classes - 1)
        picked = pred.reshape(-1, classes)[numpy.arange(label.size), index]
        return picked, label

    def update(self, labels, preds):
        """Add -sum(log p[label]) and the number of counted labels of every pair."""
        if len(labels) != len(preds):
            raise ValueError('Perplexity: %d labels for %d predictions'
                             % (len(labels), len(preds)))
        loss = 0.
        num = 0
        for label, pred in zip(labels, preds):
            picked, label = self._pick(label, pred)
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(picked.dtype)
                num -= int(ignore.sum())
                picked = picked * (1 - ignore) + ignore
            loss -= float(numpy.sum(numpy.log(numpy.maximum(1e-10, picked))))
            num += picked.size
            self._dtype = numpy.promote_types(picked.dtype, numpy.float32)
        self._add(loss, num)

    def _perplexity(self, total, count):
        """exp(total / count), evaluated in the predictions' precision (at least float32)."""
        if count == 0:
            return float('nan')
        return float(numpy.exp(self._dtype.type(total / count)))

    def get(self):
        """Return ``(name, perplexity)`` of the local tally."""
        return (self.name, self._perplexity(self.sum_metric, self.num_inst))

    def get_global(self):
        """Return ``(name, perplexity)`` of the global tally."""
        return (self.name, self._perplexity(self.global_sum_metric, self.global_num_inst))


@register
class Loss(EvalMetric):
    """Mean of the prediction values (for outputs that already are losses); labels are ignored.

    Parameters
    ----------
    name : str, default 'loss'
    output_names, label_names : list of str, optional
    """

    def __init__(self, name='loss', output_names=None, label_names=None):
        super(Loss, self).__init__(name, output_names=output_names, label_names=label_names,
                                   has_global_stats=True)

    def update(self, _, preds):  # pylint: disable=arguments-renamed
        """Add the sum and the size of every prediction array."""
        if isinstance(preds, NDArray):
            preds = [preds]
        for pred in preds:
            values = to_host(pred)
            self._add(values.sum(), values.size)


@register
class Torch(Loss):
    """Loss metric named 'torch' (for Torch criterion outputs)."""

    def __init__(self, name='torch', output_names=None, label_names=None):
        super(Torch, self).__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """Loss metric named 'caffe' (for Caffe loss outputs)."""

    def __init__(self, name='caffe', output_names=None, label_names=None):
        super(Caffe, self).__init__(name, output_names=output_names, label_names=label_names)
