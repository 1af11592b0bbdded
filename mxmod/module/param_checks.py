"""Checks of what ``init_params`` / ``set_params`` / ``forward`` receive, before anything is
written: the initializer (a name is created as ``mx.init.create`` does), the given parameter
dicts (shapes that are not the network's, values that are not arrays), naming the parameter,
and the arrays of a batch."""
import copy

import numpy as np

from ..argcheck import ArgumentTypeError, ArgumentValueError
from ..ndarray import NDArray, array

__all__ = ['as_initializer', 'check_given', 'checked_batch', 'check_fit_arguments']


def as_initializer(initializer):
    """``initializer`` as a callable: a name or JSON config is created (``'xavier'``)."""
    from .. import initializer as init  # pylint: disable=import-outside-toplevel
    if isinstance(initializer, type):
        raise ArgumentTypeError('init_params: initializer must be an Initializer object, got the '
                                'class %s itself; create one: %s()'
                                % (initializer.__name__, initializer.__name__))
    if initializer is None or callable(initializer) and not isinstance(initializer, str):
        return initializer
    if isinstance(initializer, (str, dict)):
        try:
            return init.create(initializer)
        except (ValueError, TypeError, KeyError) as err:
            raise ArgumentValueError('init_params: initializer %r cannot be created: %s'
                                     % (initializer, err)) from None
    raise ArgumentTypeError('init_params: initializer must be an Initializer (or its name, such '
                            'as \'xavier\'), got %r (%s)' % (initializer, type(initializer).__name__))


def check_given(own_args, own_auxs, arg_params, aux_params):
    """Refuse given parameters that cannot be set into the network's (``own_*``: name ->
    array of the network): dicts of NDArrays of the network's shapes. Names the network lacks
    are left alone, as MXNet's init_params leaves them (set_params with allow_missing=True
    refuses them in the executors' copy, as MXNet's does)."""
    for kind, own, given in (('arg_params', own_args, arg_params),
                             ('aux_params', own_auxs, aux_params)):
        if given is None:
            continue
        if not isinstance(given, dict):
            raise ArgumentTypeError('%s must be a dict of name to NDArray, got %s'
                                    % (kind, type(given).__name__))
        for name, arr in own.items():
            value = given.get(name)
            if value is None:
                continue
            if not isinstance(value, NDArray):
                raise ArgumentTypeError('%s[%r] must be an NDArray, got %s'
                                        % (kind, name, type(value).__name__))
            if tuple(value.shape) != tuple(arr.shape):
                raise ArgumentValueError(
                    'cannot set parameter %r: %s holds shape %s, the network needs %s (were '
                    'these parameters saved from another network?)'
                    % (name, kind, tuple(value.shape), tuple(arr.shape)))


def checked_batch(data_batch, data_names, label_count):
    """The batch ``Module.forward`` runs: its data (and labels) counted against the module's
    inputs, numpy arrays converted to NDArrays. A list of per-device batches passes through."""
    if isinstance(data_batch, list):
        for i, batch in enumerate(data_batch):
            if not isinstance(getattr(batch, 'data', None), (list, tuple)):
                raise ArgumentTypeError('forward: a list of per-device batches must hold '
                                        'DataBatch objects; item %d is a %s'
                                        % (i, type(batch).__name__))
        return data_batch
    data = getattr(data_batch, 'data', None)
    if not isinstance(data, (list, tuple)):
        raise ArgumentTypeError('forward: data_batch must be a DataBatch (an object with a list '
                                '"data"), got %s' % type(data_batch).__name__)
    label = getattr(data_batch, 'label', None) or []
    if len(data) != len(data_names):
        raise ArgumentValueError('forward: the batch has %d data arrays, the module takes %d (%s)'
                                 % (len(data), len(data_names), data_names))
    if label and label_count and len(label) != label_count:
        raise ArgumentValueError('forward: the batch has %d label arrays, the module was bound '
                                 'with %d' % (len(label), label_count))
    arrays = list(data) + list(label)
    if all(isinstance(a, NDArray) for a in arrays):
        return data_batch
    for i, arr in enumerate(arrays):
        if not isinstance(arr, (NDArray, np.ndarray)):
            raise ArgumentTypeError('forward: %s %d of the batch is a %s, expected an NDArray'
                                    % ('data' if i < len(data) else 'label',
                                       i if i < len(data) else i - len(data),
                                       type(arr).__name__))
    batch = copy.copy(data_batch)
    batch.data = [a if isinstance(a, NDArray) else array(a) for a in data]
    if label:
        batch.label = [a if isinstance(a, NDArray) else array(a) for a in label]
    return batch


_CALLBACKS = ('epoch_end_callback', 'batch_end_callback', 'eval_end_callback',
              'eval_batch_end_callback')


def check_fit_arguments(train_data, num_epoch, begin_epoch, arguments):
    """``fit``'s data iterator, epoch numbers and callbacks (``arguments``: fit's locals)."""
    from ..io import DataIter  # pylint: disable=import-outside-toplevel
    if not isinstance(train_data, DataIter) and not hasattr(train_data, 'provide_data'):
        raise ArgumentTypeError('fit: train_data must be a DataIter (e.g. mx.io.NDArrayIter(data, '
                                'label, batch_size)), got %s' % type(train_data).__name__)
    for name, value in (('num_epoch', num_epoch), ('begin_epoch', begin_epoch)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ArgumentTypeError('fit: %s must be an int >= 0, got %r' % (name, value))
    for name in _CALLBACKS:
        value = arguments.get(name)
        for callback in value if isinstance(value, (list, tuple)) else [value]:
            if callback is not None and not callable(callback):
                raise ArgumentTypeError('fit: %s must be a callable or a list of callables, got '
                                        '%r (%s)' % (name, callback, type(callback).__name__))
