"""Modules written in Python without parameters: PythonModule (a base to subclass) and
PythonLossModule (a loss whose gradient comes from a Python function)."""
import logging

from .. import ndarray as nd
from ..base import MXNetError
from ..initializer import Uniform
from .base_module import BaseModule

__all__ = ['PythonModule', 'PythonLossModule']


class PythonModule(BaseModule):
    """A parameter-free module implemented in Python; subclasses define
    ``_compute_output_shapes``, ``forward``, ``backward``, ``get_outputs``...

    Parameters
    ----------
    data_names, label_names, output_names : list of str
    logger : Logger, default logging
    """

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super(PythonModule, self).__init__(logger=logger)
        self._data_names = list(data_names) if isinstance(data_names, tuple) else data_names
        self._label_names = list(label_names) if isinstance(label_names, tuple) else label_names
        self._output_names = output_names
        self._data_shapes = None
        self._label_shapes = None
        self._output_shapes = None

    @property
    def data_names(self):
        """Names of the data inputs."""
        return self._data_names

    @property
    def output_names(self):
        """Names of the outputs."""
        return self._output_names

    @property
    def data_shapes(self):
        """Bound data shapes."""
        return self._data_shapes

    @property
    def label_shapes(self):
        """Bound label shapes."""
        return self._label_shapes

    @property
    def output_shapes(self):
        """Output shapes computed at bind time."""
        return self._output_shapes

    def get_params(self):
        """No parameters: two empty dicts."""
        return (dict(), dict())

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Nothing to initialize."""

    def update(self):
        """Nothing to update."""

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """No optimizer is needed."""

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the outputs (no-op without labels)."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise RuntimeError('PythonModule does not support presliced labels')
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Record the shapes and compute the output shapes (only grad_req 'write')."""
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if grad_req != 'write':
            raise MXNetError('Python module only support write gradient, got grad_req=%r'
                             % (grad_req,))
        if [x[0] for x in data_shapes] != list(self._data_names):
            raise MXNetError('data_shapes names %s do not match data_names %s'
                             % ([x[0] for x in data_shapes], self._data_names))
        if label_shapes is not None and \
                [x[0] for x in label_shapes] != list(self._label_names or []):
            raise MXNetError('label_shapes names %s do not match label_names %s'
                             % ([x[0] for x in label_shapes], self._label_names))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        """Return ``[(output_name, shape), ...]`` from the bound input shapes."""
        raise NotImplementedError('%s must define _compute_output_shapes' % type(self).__name__)


class PythonLossModule(PythonModule):
    """A loss layer in Python: passes its input through and back-propagates
    ``grad_func(scores, labels)``.

    Parameters
    ----------
    name : str, default 'pyloss'
    data_names : tuple of one str, default ('data',)
    label_names : tuple of one str, default ('softmax_label',)
    logger : Logger, default logging
    grad_func : callable, optional
        ``grad_func(scores, labels) -> gradient`` (NDArray or array-like).
    """

    def __init__(self, name='pyloss', data_names=('data',), label_names=('softmax_label',),
                 logger=logging, grad_func=None):
        super(PythonLossModule, self).__init__(data_names, label_names, [name + '_output'],
                                               logger=logger)
        if len(data_names) != 1 or len(label_names) != 1:
            raise ValueError('PythonLossModule takes exactly one data and one label name, got '
                             '%s and %s' % (list(data_names), list(label_names)))
        if grad_func is not None and not callable(grad_func):
            raise TypeError('grad_func must be callable(scores, labels)')
        self._name = name
        self._scores = None
        self._labels = None
        self._scores_grad = None
        self._grad_func = grad_func

    def _compute_output_shapes(self):
        return [(self._name + '_output', self._data_shapes[0][1])]

    def forward(self, data_batch, is_train=None):
        """Keep the scores (and, when training, the labels)."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        """The scores of the last forward."""
        if not merge_multi_context:
            raise MXNetError('PythonLossModule only supports merge_multi_context=True')
        return [self._scores]

    def backward(self, out_grads=None):
        """Compute the gradient of the scores with ``grad_func``."""
        if out_grads is not None:
            raise MXNetError('For a loss module, out_grads should be None')
        if not self.for_training:
            raise MXNetError('backward needs the module bound with for_training=True')
        self._backward_impl()

    def _backward_impl(self):
        if self._grad_func is None:
            raise MXNetError('PythonLossModule needs grad_func (or a subclass overriding '
                             '_backward_impl) to compute gradients')
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, nd.NDArray) else nd.array(grad)

    def get_input_grads(self, merge_multi_context=True):
        """The gradient of the scores."""
        if not merge_multi_context:
            raise MXNetError('PythonLossModule only supports merge_multi_context=True')
        return [self._scores_grad]

    def install_monitor(self, mon):
        """A Python loss has no executors to monitor."""
        raise MXNetError('PythonLossModule has no executors; install_monitor is not supported')
