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

__all__ = ['check_states_object', 'check_optimizer_object', 'check_states_match',
           'check_scheduler']

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


# per scheduler class (and its subclasses): attribute -> rule
_SCHEDULER_RULES = {
    'LRScheduler': {'base_lr': 'number', 'warmup_steps': 'count', 'warmup_begin_lr': 'number',
                    'warmup_final_lr': 'number', 'warmup_mode': ('linear', 'constant')},
    'FactorScheduler': {'step': 'positive', 'factor': 'number', 'stop_factor_lr': 'number',
                        'count': 'count'},
    'MultiFactorScheduler': {'step': 'steps', 'factor': 'number', 'cur_step_ind': 'count',
                             'count': 'count'},
    'PolyScheduler': {'power': 'number', 'base_lr_orig': 'number', 'max_update': 'positive',
                      'final_lr': 'number', 'max_steps': 'int'},
    'CosineScheduler': {'base_lr_orig': 'number', 'max_update': 'positive', 'final_lr': 'number',
                        'max_steps': 'int'},
}
# a FactorScheduler catching up more steps than this at one call is not a saved position
MAX_CATCH_UP = 10 ** 7


def _follows(rule, value):
    if isinstance(rule, tuple):
        return value in rule
    if rule == 'number':
        return isinstance(value, numbers.Real) and not isinstance(value, bool) \
            and np.isfinite(value)
    if rule == 'steps':
        return isinstance(value, list) and bool(value) and all(_is_count(v) and v >= 1
                                                               for v in value) \
            and all(a < b for a, b in zip(value, value[1:]))
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        return False
    return {'count': value >= 0, 'positive': value >= 1, 'int': True}[rule]


def check_scheduler(sched, num_update, where, fail):
    """Check a learning-rate scheduler restored from a file against its class's rules and the
    optimizer's ``num_update``; ``fail(what)`` raises."""
    for klass in type(sched).__mro__:
        for key, rule in _SCHEDULER_RULES.get(klass.__name__, {}).items():
            value = getattr(sched, key, None)
            if not _follows(rule, value):
                fail('%s.%s is %r, expected %s' % (where, key, value, rule if isinstance(
                    rule, str) else 'one of %s' % (rule,)))
    step, count = getattr(sched, 'step', None), getattr(sched, 'count', None)
    if type(sched).__name__ == 'FactorScheduler' or isinstance(step, int):
        if isinstance(step, int) and isinstance(count, int) and \
                (num_update - count) // max(step, 1) > MAX_CATCH_UP:
            fail('%s.count (%d) is too far behind num_update (%d) for a saved position'
                 % (where, count, num_update))
    if isinstance(step, list) and getattr(sched, 'cur_step_ind', 0) > len(step):
        fail('%s.cur_step_ind is past its %d steps' % (where, len(step)))


def _same_kind(template, value):
    if template is None:
        return True
    if isinstance(template, bool):
        return isinstance(value, (bool, numbers.Integral))
    if isinstance(template, numbers.Real):
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    for kind in (str, dict, (list, tuple)):
        if isinstance(template, kind):
            return isinstance(value, kind)
    return True


def _check_like_template(opt, name, fail):
    """Attributes a default instance of the class has must be there, of the same kind."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            template = type(opt)()
    except Exception:  # pylint: disable=broad-except
        return   # a user optimizer that needs arguments: only the common checks apply
    for key, value in vars(template).items():
        if key == 'param_dict':
            continue    # never pickled
        if key not in vars(opt):
            fail('the pickled %s lacks %s' % (name, key))
        if key in ('sym_info', 'lr_scheduler') + _OPTIONAL_NUMBER_ATTRS:
            continue    # checked on their own (None is allowed)
        if not _same_kind(value, vars(opt)[key]):
            fail('%s.%s is %r, expected a %s like %r' % (name, key, vars(opt)[key],
                                                         type(value).__name__, value))


def check_optimizer_object(opt, source):
    """Check a pickled optimizer: plain attributes of the kinds its class uses, numbers and
    counters where the update reads them, a consistent scheduler (a mutated file must fail
    here, not at the first update)."""
    from .base import Optimizer  # pylint: disable=import-outside-toplevel
    from ..lr_scheduler import LRScheduler  # pylint: disable=import-outside-toplevel
    if not isinstance(opt, Optimizer) or not isinstance(getattr(opt, '__dict__', None), dict):
        _fail(source, 'expected an Optimizer, got %s' % type(opt).__name__)
    name = type(opt).__name__
    attrs = vars(opt)
    for key, value in attrs.items():
        _check_plain(value, '%s.%s' % (name, key), source)
    missing = [key for key in _NUMBER_ATTRS + _OPTIONAL_NUMBER_ATTRS + _COUNT_ATTRS + _DICT_ATTRS
               + ('lr_scheduler',) if key not in attrs]
    if missing:
        _fail(source, 'the pickled %s lacks %s' % (name, ', '.join(missing)))
    for key in _NUMBER_ATTRS + _OPTIONAL_NUMBER_ATTRS:
        if not (attrs[key] is None and key in _OPTIONAL_NUMBER_ATTRS) and \
                not _follows('number', attrs[key]):
            _fail(source, '%s.%s is %r, expected a finite number' % (name, key, attrs[key]))
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
    _check_like_template(opt, name, lambda what: _fail(source, what))
    sched = attrs.get('lr_scheduler')
    if sched is not None and not isinstance(sched, LRScheduler):
        _fail(source, '%s.lr_scheduler is a %s' % (name, type(sched).__name__))
    if sched is not None:
        check_scheduler(sched, attrs['num_update'], '%s.lr_scheduler' % name,
                        lambda what: _fail(source, what))
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


def check_states_match(states, weights, optimizer, source, aliases=None):
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
    aliases : dict, optional
        Like ``weights``, for the keys of the other layout (parameter names for device-indexed
        states and the reverse; see :mod:`mxmod.optimizer.state_keys`).
    """
    if aliases:
        weights = {**aliases, **weights}
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
