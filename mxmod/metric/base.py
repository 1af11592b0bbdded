"""The metric base class, its registry, composite and custom metrics, and ``create``.

Every metric keeps a *local* tally (``sum_metric`` / ``num_inst``, cleared by ``reset_local``)
and a *global* one (``global_sum_metric`` / ``global_num_inst``, cleared only by ``reset``)."""
import json
from collections import OrderedDict

import numpy

from ..base import numeric_types, string_types
from ..ndarray import NDArray
from ..ndarray.ndarray import raise_deferred
from ..registry import family

__all__ = ['EvalMetric', 'CompositeEvalMetric', 'CustomMetric', 'check_label_shapes',
           'create', 'register', 'alias', 'np']


def plain_number(value):
    """A numpy scalar as the Python number it holds: metric values print as they did under MXNet
    on numpy < 2 (``0.5``, not ``np.float64(0.5)``); other values are returned unchanged."""
    return value.item() if isinstance(value, numpy.generic) else value


def to_host(array):
    """Return a numpy array for an NDArray (copied to the host) or an array-like."""
    if isinstance(array, NDArray):
        return array.asnumpy()
    return numpy.asarray(array)


def read_host(array):
    """Like :func:`to_host`, for a metric that only reads the values: a dense NDArray on the
    host is not copied (its pending operator error is raised all the same)."""
    if type(array) is NDArray and type(array._data) is numpy.ndarray:
        raise_deferred(array)
        return array._data
    return to_host(array)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Check that labels and predictions agree in length (or in shape).

    Parameters
    ----------
    labels : list of NDArray, or NDArray
        The labels of the data.
    preds : list of NDArray, or NDArray
        The predicted values.
    wrap : bool, default False
        Wrap a single NDArray in a list before returning it.
    shape : bool, default False
        Compare ``.shape`` instead of ``len()``.

    Returns
    -------
    labels, preds
        The inputs, wrapped in lists when ``wrap`` is set.

    Raises
    ------
    ValueError
        When the lengths (or shapes) differ.
    """
    if shape:
        label_shape, pred_shape = labels.shape, preds.shape
    else:
        label_shape, pred_shape = len(labels), len(preds)
    if label_shape != pred_shape:
        hint = (' (the metric got no labels: the evaluation data must provide them, e.g. '
                'NDArrayIter(data, label))' if not shape and label_shape == 0 else '')
        raise ValueError('Shape of labels {} does not match shape of predictions {}{}'
                         .format(label_shape, pred_shape, hint))
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    return labels, preds


def _name_value(names, values):
    if not isinstance(names, list):
        names = [names]
    if not isinstance(values, list):
        values = [values]
    return list(zip(names, values))


class EvalMetric(object):
    """Base class of the evaluation metrics.

    Parameters
    ----------
    name : str
        Display name of the metric.
    output_names : list of str, optional
        Outputs used by ``update_dict`` (all, in order, when None).
    label_names : list of str, optional
        Labels used by ``update_dict`` (all, in order, when None).
    **kwargs
        ``has_global_stats`` (bool, default False): whether the subclass keeps the global
        tally itself; other keyword arguments are recorded for ``get_config``.
    """

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop('has_global_stats', False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return 'EvalMetric: {}'.format(dict(self.get_name_value()))

    def get_config(self):
        """Return a dict from which ``mx.metric.create(config)`` rebuilds this metric."""
        config = self._kwargs.copy()
        config.update({'metric': self.__class__.__name__, 'name': self.name,
                       'output_names': self.output_names, 'label_names': self.label_names})
        return config

    def update_dict(self, label, pred):
        """Update with name -> NDArray dicts, selecting ``label_names`` / ``output_names``.

        Parameters
        ----------
        label : OrderedDict of str to NDArray
        pred : OrderedDict of str to NDArray
        """
        if self.output_names is not None:
            pred = [pred[name] for name in self.output_names]
        else:
            pred = list(pred.values())
        if self.label_names is not None:
            label = [label[name] for name in self.label_names]
        else:
            label = list(label.values())
        self.update(label, pred)

    def update(self, labels, preds):
        """Add a batch of labels and predictions (lists of NDArray) to the tallies."""
        raise NotImplementedError('%s must define update(labels, preds)' % type(self).__name__)

    def _add(self, value, count):
        """Add ``value`` over ``count`` instances to both the local and the global tally.

        Values are accumulated as Python floats (float64), as MXNet's tallies are."""
        value = float(value)
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def reset(self):
        """Clear the local and the global tallies."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local tally only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """Return ``(name, value)`` of the local tally (value is nan before any update)."""
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, plain_number(self.sum_metric / self.num_inst))

    def get_global(self):
        """Return ``(name, value)`` of the global tally (the local one without global stats)."""
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, plain_number(self.global_sum_metric / self.global_num_inst))

    def get_name_value(self):
        """Return the local result as a list of ``(name, value)`` pairs."""
        return _name_value(*self.get())

    def get_global_name_value(self):
        """Return the global result as a list of ``(name, value)`` pairs."""
        if not self._has_global_stats:
            return self.get_name_value()
        return _name_value(*self.get_global())


_METRICS = family(EvalMetric, 'metric')
register = _METRICS.register
alias = _METRICS.alias


def _create_one(metric, *args, **kwargs):
    if isinstance(metric, dict):
        if args:
            raise TypeError('metric config dict %r given together with positional arguments %r'
                            % (metric, args))
        config = dict(metric)
        config.update(kwargs)
        if 'metric' not in config:
            raise ValueError("metric config %r has no 'metric' key naming the class" % (metric,))
        return _create_one(config.pop('metric'), **config)
    if isinstance(metric, string_types) and metric.startswith('{'):
        if args or kwargs:
            raise TypeError('a JSON metric config takes no further arguments, got %r %r'
                            % (args, kwargs))
        return _create_one(json.loads(metric))
    return _METRICS.create(metric, *args, **kwargs)


def create(metric, *args, **kwargs):
    """Create a metric.

    Parameters
    ----------
    metric : str, EvalMetric, callable, dict or list
        A registered name or alias (case-insensitive), a JSON config string, a config dict
        (from ``get_config``), an instance (returned as is), a function
        ``feval(label, pred)`` (wrapped in a CustomMetric) or a list of any of these
        (combined in a CompositeEvalMetric).
    *args, **kwargs
        Passed to the metric's constructor.

    Returns
    -------
    EvalMetric
    """
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create_one(metric, *args, **kwargs)


@register
@alias('composite')
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns lists of names and values.

    Parameters
    ----------
    metrics : list of EvalMetric (or anything ``create`` accepts), optional
    name : str, default 'composite'
    output_names, label_names : list of str, optional
        Restrict ``update_dict`` to these outputs / labels.
    """

    def __init__(self, metrics=None, name='composite', output_names=None, label_names=None):
        super(CompositeEvalMetric, self).__init__(name, output_names=output_names,
                                                  label_names=label_names, has_global_stats=True)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        """Append a child metric (anything ``create`` accepts)."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """Return child metric ``index``; ValueError when out of range."""
        try:
            return self.metrics[index]
        except IndexError:
            raise ValueError('Metric index {} is out of range 0 and {}'
                             .format(index, len(self.metrics))) from None

    def update_dict(self, labels, preds):  # pylint: disable=arguments-renamed
        if self.label_names is not None:
            labels = OrderedDict(i for i in labels.items() if i[0] in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict(i for i in preds.items() if i[0] in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        """Update every child metric with the same labels and predictions."""
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        """Reset every child metric."""
        for metric in getattr(self, 'metrics', ()):
            metric.reset()

    def reset_local(self):
        """Reset the local tally of every child metric."""
        for metric in getattr(self, 'metrics', ()):
            metric.reset_local()

    def _collect(self, method):
        names, values = [], []
        for metric in self.metrics:
            name, value = getattr(metric, method)()
            names.extend([name] if isinstance(name, string_types) else name)
            values.extend([value] if isinstance(value, numeric_types) else value)
        return (names, values)

    def get(self):
        """Return ``([names], [values])`` of the children's local results."""
        return self._collect('get')

    def get_global(self):
        """Return ``([names], [values])`` of the children's global results."""
        return self._collect('get_global')

    def get_config(self):
        config = super(CompositeEvalMetric, self).get_config()
        config['metrics'] = [m.get_config() for m in self.metrics]
        return config


@register
class CustomMetric(EvalMetric):
    """A metric computed by a function of numpy arrays.

    Parameters
    ----------
    feval : callable(label, pred)
        Returns a value (one instance) or a ``(sum_metric, num_inst)`` tuple.
    name : str, optional
        Defaults to ``feval.__name__`` (``custom(<lambda>)`` style for lambdas).
    allow_extra_outputs : bool, default False
        Allow more predictions than labels (extra ones are ignored).
    output_names, label_names : list of str, optional
    """

    def __init__(self, feval, name=None, allow_extra_outputs=False,
                 output_names=None, label_names=None):
        if name is None:
            name = feval.__name__
            if '<' in name:
                name = 'custom(%s)' % name
        super(CustomMetric, self).__init__(name, feval=feval,
                                           allow_extra_outputs=allow_extra_outputs,
                                           output_names=output_names, label_names=label_names,
                                           has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        """Call ``feval(label, pred)`` on each pair of host arrays and add its result."""
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            result = self._feval(to_host(label), to_host(pred))
            if isinstance(result, tuple):
                self._add(*result)
            else:
                self._add(result, 1)

    def get_config(self):
        """CustomMetric holds a Python function and cannot be serialized: raises."""
        raise NotImplementedError('CustomMetric %r cannot be serialized: it wraps a Python '
                                  'function' % self.name)


def np(numpy_feval, name=None, allow_extra_outputs=False):  # pylint: disable=invalid-name
    """Create a CustomMetric from a function of numpy arrays.

    Parameters
    ----------
    numpy_feval : callable(label, pred)
        Receives numpy arrays; returns a float (or a ``(sum, count)`` tuple).
    name : str, optional
    allow_extra_outputs : bool, default False

    Returns
    -------
    CustomMetric
    """
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
