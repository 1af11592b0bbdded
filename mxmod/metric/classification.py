"""Classification metrics: Accuracy, TopKAccuracy, F1, MCC and PCC."""
import math

import numpy

from .base import EvalMetric, register, alias, check_label_shapes, read_host, to_host

__all__ = ['Accuracy', 'TopKAccuracy', 'F1', 'MCC', 'PCC']


@register
@alias('acc')
class Accuracy(EvalMetric):
    """Fraction of predictions equal to the label.

    Predictions whose shape differs from the label's are reduced with argmax over ``axis``;
    both are then cast to int32 and flattened.

    Parameters
    ----------
    axis : int, default 1
        The class axis of the predictions.
    name : str, default 'accuracy'
    output_names, label_names : list of str, optional
    """

    def __init__(self, axis=1, name='accuracy', output_names=None, label_names=None):
        super(Accuracy, self).__init__(name, axis=axis, output_names=output_names,
                                       label_names=label_names, has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        """Count correct predictions of each (label, prediction) pair."""
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            pred = read_host(pred)
            label = read_host(label)
            if pred.shape != label.shape:
                pred = numpy.argmax(pred, axis=self.axis)
            pred = pred.astype(numpy.int32).ravel()
            label = label.astype(numpy.int32).ravel()
            check_label_shapes(label, pred)
            self._add(numpy.count_nonzero(pred == label), len(pred))


@register
@alias('top_k_accuracy', 'top_k_acc')
class TopKAccuracy(EvalMetric):
    """Fraction of samples whose label is among the ``top_k`` highest-scored classes.

    Parameters
    ----------
    top_k : int, default 1
        Must be greater than 1 (use Accuracy otherwise). The name gets a ``_<top_k>`` suffix.
    name : str, default 'top_k_accuracy'
    output_names, label_names : list of str, optional
    """

    def __init__(self, top_k=1, name='top_k_accuracy', output_names=None, label_names=None):
        super(TopKAccuracy, self).__init__(name, top_k=top_k, output_names=output_names,
                                           label_names=label_names, has_global_stats=True)
        self.top_k = top_k
        if not self.top_k > 1:
            raise ValueError('TopKAccuracy needs top_k > 1, got %r; use Accuracy for top_k=1'
                             % (top_k,))
        self._base_name = self.name
        self.name += '_%d' % self.top_k

    def get_config(self):
        config = super(TopKAccuracy, self).get_config()
        config['name'] = self._base_name  # the constructor appends the _<k> suffix again
        return config

    def update(self, labels, preds):
        """Count the samples whose label is in the top ``top_k`` predictions."""
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            if len(pred.shape) > 2:
                raise ValueError('TopKAccuracy: predictions must have at most 2 dims, got shape %s'
                                 % (tuple(pred.shape),))
            ranked = numpy.argpartition(to_host(pred).astype('float32'), -self.top_k)
            label = to_host(label).astype('int32')
            check_label_shapes(label, ranked)
            correct = 0
            if ranked.ndim == 1:
                correct = (ranked.flat == label.flat).sum()
            elif ranked.ndim == 2:
                num_classes = ranked.shape[1]
                for j in range(min(num_classes, self.top_k)):
                    correct += (ranked[:, num_classes - 1 - j].flat == label.flat).sum()
            self._add(correct, ranked.shape[0])


class _BinaryStats(object):
    """True/false positive/negative counts, local and global, for binary classifiers."""

    _FIELDS = ('tp', 'fp', 'fn', 'tn')

    def __init__(self):
        self.local = dict.fromkeys(self._FIELDS, 0)
        self.total = dict.fromkeys(self._FIELDS, 0)

    def update(self, label, pred):
        """Add the counts of one (label, prediction-scores) pair."""
        pred = to_host(pred)
        label = to_host(label).astype('int32')
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError('binary classification metrics (F1, MCC) accept at most 2 label '
                             'values, got %s' % (numpy.unique(label).tolist(),))
        pred_pos = numpy.argmax(pred, axis=1) == 1
        label_pos = label == 1
        counts = {'tp': (pred_pos & label_pos).sum(), 'fp': (pred_pos & ~label_pos).sum(),
                  'fn': (~pred_pos & label_pos).sum(), 'tn': (~pred_pos & ~label_pos).sum()}
        for key, value in counts.items():
            self.local[key] += value
            self.total[key] += value

    def reset_local(self):
        """Clear the local counts."""
        self.local = dict.fromkeys(self._FIELDS, 0)

    def reset(self):
        """Clear the local and the global counts."""
        self.reset_local()
        self.total = dict.fromkeys(self._FIELDS, 0)

    @staticmethod
    def count(stats):
        """Number of examples in a counts dict."""
        return stats['tp'] + stats['fp'] + stats['fn'] + stats['tn']

    @staticmethod
    def fscore(stats):
        """F1 score of a counts dict (0 when undefined)."""
        tp, fp, fn = stats['tp'], stats['fp'], stats['fn']
        precision = float(tp) / (tp + fp) if tp + fp > 0 else 0.
        recall = float(tp) / (tp + fn) if tp + fn > 0 else 0.
        if precision + recall > 0:
            return 2 * precision * recall / (precision + recall)
        return 0.

    @staticmethod
    def matthewscc(stats):
        """Matthews correlation of a counts dict; zero factors of the denominator count as 1."""
        if not _BinaryStats.count(stats):
            return 0.
        tp, fp, fn, tn = (float(stats[k]) for k in ('tp', 'fp', 'fn', 'tn'))
        denom = 1.
        for term in (tp + fp, tp + fn, tn + fp, tn + fn):
            if term != 0.:
                denom *= term
        return (tp * tn - fp * fn) / math.sqrt(denom)


class _BinaryMetric(EvalMetric):
    """F1/MCC machinery: 'macro' averages one score per update call, 'micro' pools counts."""

    def __init__(self, name, output_names, label_names, average):
        if average not in ('macro', 'micro'):
            raise ValueError("%s: average must be 'macro' or 'micro', got %r"
                             % (type(self).__name__, average))
        self.average = average
        self._stats = _BinaryStats()
        super(_BinaryMetric, self).__init__(name, output_names=output_names,
                                            label_names=label_names, average=average,
                                            has_global_stats=True)

    def _score(self, stats):
        raise NotImplementedError

    def update(self, labels, preds):
        """Add the counts of every pair; score them (macro) or pool them (micro)."""
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._stats.update(label, pred)
        local, total = self._stats.local, self._stats.total
        if self.average == 'macro':
            self.sum_metric += self._score(local)
            self.global_sum_metric += self._score(total)
            self.num_inst += 1
            self.global_num_inst += 1
            self._stats.reset()
        else:
            self.num_inst = _BinaryStats.count(local)
            self.global_num_inst = _BinaryStats.count(total)
            self.sum_metric = self._score(local) * self.num_inst
            self.global_sum_metric = self._score(total) * self.global_num_inst

    def reset(self):
        """Clear the local and global tallies and counts."""
        super(_BinaryMetric, self).reset()
        self._stats.reset()

    def reset_local(self):
        """Clear the local tally and counts."""
        super(_BinaryMetric, self).reset_local()
        self._stats.reset_local()


@register
class F1(_BinaryMetric):
    """F1 score (harmonic mean of precision and recall) of a binary classifier.

    Predictions are class scores (argmax over axis 1 gives the predicted class).

    Parameters
    ----------
    name : str, default 'f1'
    output_names, label_names : list of str, optional
    average : {'macro', 'micro'}, default 'macro'
        'macro' averages the score of each update call; 'micro' scores the pooled counts.
    """

    def __init__(self, name='f1', output_names=None, label_names=None, average='macro'):
        super(F1, self).__init__(name, output_names, label_names, average)

    def _score(self, stats):
        return _BinaryStats.fscore(stats)


@register
class MCC(_BinaryMetric):
    """Matthews correlation coefficient of a binary classifier.

    Zero factors of the denominator are replaced by 1 (so degenerate batches score 0).

    Parameters
    ----------
    name : str, default 'mcc'
    output_names, label_names : list of str, optional
    average : {'macro', 'micro'}, default 'macro'
    """

    def __init__(self, name='mcc', output_names=None, label_names=None, average='macro'):
        super(MCC, self).__init__(name, output_names, label_names, average)

    def _score(self, stats):
        return _BinaryStats.matthewscc(stats)


def _confusion_mcc(cmat):
    """Multiclass Matthews correlation (Gorodkin's R_K) of a confusion matrix; nan if undefined."""
    n = cmat.sum()
    rows = cmat.sum(axis=1)
    cols = cmat.sum(axis=0)
    cov_xx = numpy.sum(rows * (n - rows))
    cov_yy = numpy.sum(cols * (n - cols))
    if cov_xx == 0 or cov_yy == 0:
        return float('nan')
    cov_xy = numpy.sum(cmat.diagonal() * n - rows * cols)
    return cov_xy / (cov_xx * cov_yy) ** 0.5


@register
class PCC(EvalMetric):
    """Multiclass Matthews/Pearson correlation from a growing confusion matrix.

    Predictions are class scores (argmax over axis 1) or class indices shaped like the labels.

    Parameters
    ----------
    name : str, default 'pcc'
    output_names, label_names : list of str, optional
    has_global_stats : bool, default True
    """

    def __init__(self, name='pcc', output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super(PCC, self).__init__(name, output_names=output_names, label_names=label_names,
                                  has_global_stats=has_global_stats)

    def _grow(self, inc):
        pad = ((0, inc), (0, inc))
        self.lcm = numpy.pad(self.lcm, pad, 'constant', constant_values=0)
        self.gcm = numpy.pad(self.gcm, pad, 'constant', constant_values=0)
        self.k += inc

    def update(self, labels, preds):
        """Add every pair to the confusion matrices (one instance per call)."""
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = to_host(label).astype('int32')
            pred = to_host(pred)
            if pred.shape != label.shape:
                pred = pred.argmax(axis=1)
            pred = pred.astype('int32').ravel()
            label = label.ravel()
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(n + 1 - self.k)
            batch = numpy.zeros((self.k, self.k))
            numpy.add.at(batch, (pred, label), 1)
            self.lcm += batch
            self.gcm += batch
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        """Local correlation times the local number of update calls."""
        return _confusion_mcc(self.lcm) * self.num_inst

    @property
    def global_sum_metric(self):
        """Global correlation times the global number of update calls."""
        return _confusion_mcc(self.gcm) * self.global_num_inst

    def reset(self):
        """Clear both confusion matrices."""
        self.global_num_inst = 0.
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        """Clear the local confusion matrix."""
        self.num_inst = 0.
        self.lcm = numpy.zeros((self.k, self.k))
