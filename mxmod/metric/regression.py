"""Regression metrics: MAE, MSE, RMSE and PearsonCorrelation.

MAE/MSE/RMSE add one batch mean per (label, prediction) pair, as MXNet does: with several
devices (one pair per device) the result is the mean of the per-device means."""
import numpy

from .base import EvalMetric, register, alias, check_label_shapes, to_host, plain_number

__all__ = ['MAE', 'MSE', 'RMSE', 'PearsonCorrelation']


def _pairs(labels, preds):
    """Yield host (label, pred) pairs with 1-D arrays reshaped to (n, 1)."""
    labels, preds = check_label_shapes(labels, preds, True)
    for label, pred in zip(labels, preds):
        label = to_host(label)
        pred = to_host(pred)
        if label.ndim == 1:
            label = label.reshape(label.shape[0], 1)
        if pred.ndim == 1:
            pred = pred.reshape(pred.shape[0], 1)
        yield label, pred


class _PerBatchMean(EvalMetric):
    """Adds ``batch_value(label, pred)`` once per pair, counting one instance per pair."""

    def __init__(self, name, output_names=None, label_names=None):
        super(_PerBatchMean, self).__init__(name, output_names=output_names,
                                            label_names=label_names, has_global_stats=True)

    @staticmethod
    def batch_value(label, pred):
        """The metric of one batch (host arrays)."""
        raise NotImplementedError

    def update(self, labels, preds):
        """Add the batch value of every (label, prediction) pair."""
        for label, pred in _pairs(labels, preds):
            self._add(self.batch_value(label, pred), 1)


@register
class MAE(_PerBatchMean):
    """Mean absolute error, averaged over update pairs.

    Parameters
    ----------
    name : str, default 'mae'
    output_names, label_names : list of str, optional
    """

    def __init__(self, name='mae', output_names=None, label_names=None):
        super(MAE, self).__init__(name, output_names, label_names)

    @staticmethod
    def batch_value(label, pred):
        return numpy.abs(label - pred).mean()


@register
class MSE(_PerBatchMean):
    """Mean squared error, averaged over update pairs.

    Parameters
    ----------
    name : str, default 'mse'
    output_names, label_names : list of str, optional
    """

    def __init__(self, name='mse', output_names=None, label_names=None):
        super(MSE, self).__init__(name, output_names, label_names)

    @staticmethod
    def batch_value(label, pred):
        return ((label - pred) ** 2.0).mean()


@register
class RMSE(_PerBatchMean):
    """Root mean squared error of each pair, averaged over update pairs.

    Parameters
    ----------
    name : str, default 'rmse'
    output_names, label_names : list of str, optional
    """

    def __init__(self, name='rmse', output_names=None, label_names=None):
        super(RMSE, self).__init__(name, output_names, label_names)

    @staticmethod
    def batch_value(label, pred):
        return numpy.sqrt(((label - pred) ** 2.0).mean())


class _Comoments(object):
    """Streaming count, means, sums of squared deviations and co-moment (Chan et al.)."""

    def __init__(self):
        self.count = 0
        self.mean_l = self.mean_p = 0.
        self.sse_l = self.sse_p = self.cov = 0.

    def add(self, label, pred):
        """Merge a batch of paired float64 values."""
        count = self.count + len(label)
        delta_l = label - self.mean_l
        delta_p = pred - self.mean_p
        mean_l = self.mean_l + numpy.sum(delta_l) / count
        mean_p = self.mean_p + numpy.sum(delta_p) / count
        self.sse_l += numpy.sum(delta_l * (label - mean_l))
        self.sse_p += numpy.sum(delta_p * (pred - mean_p))
        self.cov += numpy.sum(delta_l * (pred - mean_p))
        self.count, self.mean_l, self.mean_p = count, mean_l, mean_p

    def pearsonr(self):
        """Pearson correlation of everything merged so far."""
        return self.cov / numpy.sqrt(self.sse_p * self.sse_l)


@register
@alias('pearsonr')
class PearsonCorrelation(EvalMetric):
    """Pearson correlation between flattened labels and predictions.

    Parameters
    ----------
    name : str, default 'pearsonr'
    output_names, label_names : list of str, optional
    average : {'macro', 'micro'}, default 'macro'
        'macro' averages the correlation of each pair; 'micro' computes one correlation over
        all values seen (streaming).
    """

    def __init__(self, name='pearsonr', output_names=None, label_names=None, average='macro'):
        if average not in ('macro', 'micro'):
            raise ValueError("PearsonCorrelation: average must be 'macro' or 'micro', got %r"
                             % (average,))
        self.average = average
        super(PearsonCorrelation, self).__init__(name, output_names=output_names,
                                                 label_names=label_names, average=average,
                                                 has_global_stats=True)

    def reset(self):
        """Clear the local and global tallies."""
        super(PearsonCorrelation, self).reset()
        self._local = _Comoments()
        self._global = _Comoments()

    def reset_local(self):
        """Clear the local tally."""
        super(PearsonCorrelation, self).reset_local()
        self._local = _Comoments()

    def update(self, labels, preds):
        """Add every (label, prediction) pair; shapes must match."""
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = to_host(label).ravel().astype(numpy.float64)
            pred = to_host(pred).ravel().astype(numpy.float64)
            if self.average == 'macro':
                self._add(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self._local.add(label, pred)
                self._global.add(label, pred)
                self.num_inst += 1
                self.global_num_inst += 1

    def get(self):
        """Return ``(name, correlation)`` of the local tally."""
        if self.num_inst == 0 or self.average == 'macro':
            return super(PearsonCorrelation, self).get()
        return (self.name, plain_number(self._local.pearsonr()))

    def get_global(self):
        """Return ``(name, correlation)`` of the global tally."""
        if self.global_num_inst == 0 or self.average == 'macro':
            return super(PearsonCorrelation, self).get_global()
        return (self.name, plain_number(self._global.pearsonr()))
