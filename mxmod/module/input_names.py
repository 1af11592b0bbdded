"""Checking a module's input names against its symbol and turning (name, shape) pairs into
DataDesc (MXNet's base_module helpers; re-exported there)."""
import warnings

import numpy as np

from ..io import DataDesc

__all__ = ['_check_input_names', '_check_names_match', '_parse_data_desc',
           'check_training_labels']

_PARAM_SUFFIXES = ('_weight', '_bias', '_gamma', '_beta')


def _check_input_names(symbol, names, typename, throw):
    """Every name must be an argument of ``symbol``: ValueError (throw) or a warning."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [arg for arg in args if not arg.endswith(_PARAM_SUFFIXES)]
        msg = ("You created Module with Module(..., %s_names=%s) but input with name '%s' is not "
               "found in symbol.list_arguments(). Did you mean one of:\n\t%s"
               % (typename, str(names), name, '\n\t'.join(candidates)))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _check_names_match(data_names, data_shapes, name, throw):
    """The names in ``data_shapes`` must be ``data_names`` (in any order)."""
    actual = [x[0] for x in data_shapes]
    if sorted(data_names) != sorted(actual):
        msg = ("Data provided by %s_shapes don't match names specified by %s_names (%s vs. %s)"
               % (name, name, str(data_shapes), str(data_names)))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _as_descs(shapes, what):
    descs = []
    for item in shapes:
        if isinstance(item, DataDesc):
            descs.append(item)
            continue
        if not isinstance(item, (list, tuple)) or len(item) < 2:
            raise TypeError('%s must be a list of DataDesc or (name, shape) pairs, got %r'
                            % (what, item))
        shape = item[1]
        if not isinstance(shape, (list, tuple)) or \
                not all(isinstance(d, (int, np.integer)) for d in shape):
            raise TypeError('%s: the shape of %r must be a tuple of ints, got %r'
                            % (what, item[0], shape))
        descs.append(DataDesc(item[0], tuple(int(d) for d in shape), *item[2:]))
    return descs


def _parse_data_desc(data_names, label_names, data_shapes, label_shapes):
    """Convert (name, shape) pairs into DataDesc and check them against the module's names."""
    data_shapes = _as_descs(data_shapes, 'data_shapes')
    _check_names_match(data_names, data_shapes, 'data', True)
    if label_shapes is not None:
        label_shapes = _as_descs(label_shapes, 'label_shapes')
        _check_names_match(label_names, label_shapes, 'label', False)
    else:
        _check_names_match(label_names, [], 'label', False)
    return data_shapes, label_shapes


def check_training_labels(symbol, label_names, label_shapes):
    """Training needs a shape for every label the network reads: raise naming the label the
    network expects and the labels that came (instead of failing later with a KeyError)."""
    if symbol is None or not label_names:
        return
    given = [desc[0] for desc in label_shapes or []]   # DataDesc or a (name, shape) pair
    args = symbol.list_arguments()
    absent = [name for name in label_names if name not in args]
    unlisted = [name for name in given if name in args and name not in label_names]
    if absent and unlisted:
        from ..base import MXNetError  # pylint: disable=import-outside-toplevel
        raise MXNetError(
            'fit: the Module was created with label_names=%s, which the network does not read, '
            'while the data provides the label %s that the network reads (it would be taken for '
            'a parameter); create the Module with label_names=%s'
            % (list(label_names), ', '.join(repr(n) for n in unlisted), unlisted))
    missing = [name for name in label_names if name in args and name not in given]
    if missing:
        from ..base import MXNetError  # pylint: disable=import-outside-toplevel
        raise MXNetError(
            'fit: the network reads the label %s, but the training data provides %s; training '
            'needs labels: give the data iterator labels under that name (e.g. NDArrayIter(data, '
            'label, label_name=%r)) or create the Module with label_names matching the '
            'iterator\'s' % (', '.join(repr(m) for m in missing),
                             'the labels %s' % given if given else 'no labels', missing[0]))
