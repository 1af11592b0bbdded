"""Checks on unpickled optimizer states: the shape of what a ``.states`` file holds (a dict of
per-weight states, optionally with the optimizer), and whether those states belong to the network
they are loaded into (every key one of its weights, every array the shape and dtype that the
optimizer creates for that weight), so that another network's states fail at load, naming the
parameter, instead of at the first update."""
import numbers
import warnings

import numpy as np

from ..ndarray.ndarray import NDArray
from .safe_unpickle import StatesFileError, MAX_DEPTH

__all__ = ['check_states_object', 'check_optimizer_object', 'check_states_match']

_NUMBER_ATTRS = ('wd', 'rescale_grad')
_OPTIONAL_NUMBER_ATTRS = ('lr', 'clip_gradient')
_COUNT_ATTRS = ('num_update', 'begin_num_update')
_DICT_ATTRS = ('lr_mult', 'wd_mult', 'idx2name', '_index_update_count')
_PLAIN = (type(None), bool, numbers.Number, str, bytes, np.generic)


def _fail(source, what):
    raise StatesFileError('Invalid optimizer states in %s: %s' % (source, what))


def _is_count(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0


def _is_key(key):
    return isinstance(key, str) or (isinstance(key, numbers.Integral)
                                    and not isinstance(key, bool))


def _check_state(state, where, source, depth=0):
    """A per-weight state is None, an NDArray, or tuples/lists of those."""
    if state is None:
        return
    if isinstance(state, NDArray):
        if getattr(state, '_data', None) is None:
            _fail(source, '%s holds an NDArray without data' % where)
        return
    if isinstance(state, (tuple, list)) and depth < 4:
        for i, item in enumerate(state):
            _check_state(item, '%s[%d]' % (where, i), source, depth + 1)
        return
    _fail(source, '%s is a %s; a state is None, an NDArray or a tuple of those'
          % (where, type(state).__name__))


def _check_plain(value, where, source, depth=0):
    """Optimizer attributes: numbers, strings and containers of them, a scheduler, NDArrays."""
    from ..lr_scheduler import LRScheduler  # pylint: disable=import-outside-toplevel
    if depth > MAX_DEPTH // 4:
        _fail(source, '%s is nested too deeply' % where)
    if isinstance(value, _PLAIN) or isinstance(value, NDArray):
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _check_plain(key, '%s key' % where, source, depth + 1)
            _check_plain(item, '%s[%r]' % (where, key), source, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for i, item in enumerate(value):
            _check_plain(item, '%s[%d]' % (where, i), source, depth + 1)
    elif isinstance(value, LRScheduler) and isinstance(getattr(value, '__dict__', None), dict):
        for key, item in vars(value).items():
            _check_plain(item, '%s.%s' % (where, key), source, depth + 1)
    else:
        _fail(source, '%s is a %s, which an optimizer does not hold'
              % (where, type(value).__name__))


def check_optimizer_object(opt, source):
    """Check a pickled optimizer: plain attributes, and numbers and counters where the update
    reads them (a mutated file must not fail at the first update instead)."""
    from .base import Optimizer  # pylint: disable=import-outside-toplevel
    from ..lr_scheduler import LRScheduler  # pylint: disable=import-outside-toplevel
    if not isinstance(opt, Optimizer) or not isinstance(getattr(opt, '__dict__', None), dict):
        _fail(source, 'expected an Optimizer, got %s' % type(opt).__name__)
    name = type(opt).__name__
    attrs = vars(opt)
    for key, value in attrs.items():
        _check_plain(value, '%s.%s' % (name, key), source)
    required = _NUMBER_ATTRS + _OPTIONAL_NUMBER_ATTRS + _COUNT_ATTRS + _DICT_ATTRS
    missing = [key for key in required if key not in attrs]
    if missing:
        _fail(source, 'the pickled %s lacks %s' % (name, ', '.join(missing)))
    for key in _NUMBER_ATTRS + _OPTIONAL_NUMBER_ATTRS:
        value = attrs[key]
        if not (value is None and key in _OPTIONAL_NUMBER_ATTRS) and (
                isinstance(value, bool) or not isinstance(value, numbers.Real)):
            _fail(source, '%s.%s is %r, expected a number' % (name, key, value))
    for key in _COUNT_ATTRS:
        if not _is_count(attrs[key]):
            _fail(source, '%s.%s is %r, expected a count >= 0' % (name, key, attrs[key]))
    for key in _DICT_ATTRS:
        if not isinstance(attrs[key], dict):
            _fail(source, '%s.%s is a %s, expected a dict' % (name, key,
                                                              type(attrs[key]).__name__))
    counts = [attrs['_index_update_count']]
    counts.extend(attrs.get('_all_index_update_counts', {}).values())
    if any(not isinstance(c, dict) or not all(_is_count(v) for v in c.values()) for c in counts):
        _fail(source, '%s update counters must map keys to counts >= 0' % name)
    sched = attrs.get('lr_scheduler')
    if sched is not None and not isinstance(sched, LRScheduler):
        _fail(source, '%s.lr_scheduler is a %s' % (name, type(sched).__name__))
    if attrs['lr'] is None and sched is None:
        _fail(source, '%s has neither a learning rate nor a scheduler' % name)


def check_states_object(obj, source):
    """Check what a ``.states`` pickle held: ``{key: state}`` or ``({key: state}, optimizer)``.

    Returns
    -------
    (dict, Optimizer or None)
    """
    optimizer = None
    if isinstance(obj, tuple) and len(obj) == 2:
        obj, optimizer = obj
        check_optimizer_object(optimizer, source)
    if not isinstance(obj, dict):
        _fail(source, 'expected a dict of states by weight index (or a (states, optimizer) '
                      'pair), got %s' % type(obj).__name__)
    for key, state in obj.items():
        if not _is_key(key):
            _fail(source, 'state key %r is a %s, expected an int or str weight index'
                  % (key, type(key).__name__))
        _check_state(state, 'the state of %r' % (key,), source)
    return obj, optimizer


def _layout(state):
    """(shape, dtype) leaves of a state, None where the state has no array."""
    if isinstance(state, NDArray):
        return (tuple(state.shape), np.dtype(state.dtype).name)
    if isinstance(state, (tuple, list)):
        return tuple(_layout(item) for item in state)
    return None


def _describe(layout):
    if layout is None:
        return 'no state'
    if _is_leaf(layout):
        return '%s %s' % (layout[1], layout[0])
    return '(' + ', '.join(_describe(item) for item in layout) + ')'


def _is_leaf(layout):
    return isinstance(layout, tuple) and len(layout) == 2 and isinstance(layout[1], str)


def _same_layout(got, want):
    if _is_leaf(got) or _is_leaf(want) or got is None or want is None:
        return got == want
    return len(got) == len(want) and all(_same_layout(g, w) for g, w in zip(got, want))


def check_states_match(states, weights, optimizer, source):
    """Check that loaded ``states`` belong to a network.

    Parameters
    ----------
    states : dict
        Loaded states by update key.
    weights : dict
        Update key -> (parameter name, weight NDArray) of the network they are loaded into.
    optimizer : Optimizer
        Creates the reference state of each weight (its layout is compared, not its values).
    source : str
        The file, for error messages.
    """
    unknown = [key for key in states if key not in weights]
    if unknown:
        _fail(source, 'it holds states for update keys %s, which this network does not have '
                      '(its keys are %s); the states were saved from another network or with '
                      'another number of devices'
              % (_some(unknown), _some(list(weights))))
    for key, state in states.items():
        name, weight = weights[key]
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # float16 advice was given when training began
            want = _layout(optimizer.create_state_multi_precision(key, weight))
        got = _layout(state)
        if not _same_layout(got, want):
            _fail(source, 'the state of parameter %r (update key %r) is %s, but %s creates %s '
                          'for its weight (%s %s); the states were saved from another network '
                          'or optimizer' % (name, key, _describe(got), type(optimizer).__name__,
                                            _describe(want), np.dtype(weight.dtype).name,
                                            tuple(weight.shape)))


def _some(keys, limit=8):
    keys = sorted(keys, key=repr)
    text = ', '.join(repr(k) for k in keys[:limit])
    return '[%s%s]' % (text, ', ...' if len(keys) > limit else '')
