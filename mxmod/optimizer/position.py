"""Where an optimizer is in training, as plain JSON: the update counters (``num_update`` and the
per-device, per-weight counts that Adam's bias correction and every lr scheduler read) and the
learning-rate scheduler's own progress. A checkpoint carries it so that a resumed run continues
exactly where the saved one stopped (see :mod:`mxmod.checkpoint`)."""
import copy
import numbers

from ..base import MXNetError
from .states_check import check_scheduler

__all__ = ['get_position', 'restore_position']

# scheduler attributes that change as training advances; the rest is its configuration
_SCHEDULER_PROGRESS = ('base_lr', 'count', 'cur_step_ind')


def _plain(value):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if isinstance(value, numbers.Real):
        return True
    return isinstance(value, (list, tuple)) and all(_plain(v) for v in value)


def _scheduler_state(sched):
    state = {}
    for key, value in sorted(vars(sched).items()):
        if _plain(value):
            state[key] = list(value) if isinstance(value, tuple) else value
    return {'class': type(sched).__name__, 'state': state}


def _encode_key(key):
    return ['str', key] if isinstance(key, str) else ['int', int(key)]


def _decode_key(pair):
    kind, value = pair
    return str(value) if kind == 'str' else int(value)


def get_position(optimizer):
    """The optimizer's progress as a JSON-serializable dict.

    Parameters
    ----------
    optimizer : Optimizer

    Returns
    -------
    dict
    """
    counts = getattr(optimizer, '_all_index_update_counts', {0: optimizer._index_update_count})  # pylint: disable=protected-access
    position = {'optimizer': type(optimizer).__name__,
                'lr': optimizer.lr if _plain(optimizer.lr) else None,
                'num_update': int(optimizer.num_update),
                'index_update_counts': [[int(dev), [[_encode_key(k), int(v)]
                                                    for k, v in table.items()]]
                                        for dev, table in counts.items()]}
    if optimizer.lr_scheduler is not None:
        position['lr_scheduler'] = _scheduler_state(optimizer.lr_scheduler)
    return position


def _same_config(sched, saved, lr_now, lr_saved):
    state = saved['state']
    if type(sched).__name__ != saved['class'] or lr_now != lr_saved:
        return False
    current = _scheduler_state(sched)['state']
    return all(current.get(k) == v for k, v in state.items() if k not in _SCHEDULER_PROGRESS)


def _decode_tables(position, fail):
    try:
        tables = {int(dev): {_decode_key(k): int(v) for k, v in pairs}
                  for dev, pairs in position['index_update_counts']}
        num_update = position['num_update']
    except (KeyError, TypeError, ValueError) as err:
        fail('malformed (%s: %s)' % (type(err).__name__, err))
    counts = [v for table in tables.values() for v in table.values()]
    if not isinstance(num_update, int) or isinstance(num_update, bool) or num_update < 0 \
            or any(v < 0 or v > num_update for v in counts):
        fail('num_update %r and the update counts must be counts with num_update the largest'
             % (num_update,))
    return tables, num_update


def _restored_scheduler(optimizer, position, num_update, fail):
    """A copy of the optimizer's scheduler at the saved progress (None: keep the scheduler)."""
    saved = position.get('lr_scheduler')
    sched = optimizer.lr_scheduler
    if sched is None or not isinstance(saved, dict) or not isinstance(saved.get('state'), dict) \
            or not _same_config(sched, saved, optimizer.lr, position.get('lr')):
        return None
    restored = copy.copy(sched)
    for key in _SCHEDULER_PROGRESS:
        if key in saved['state'] and hasattr(sched, key):
            setattr(restored, key, saved['state'][key])
    check_scheduler(restored, num_update, 'lr_scheduler', fail)
    return restored


def restore_position(optimizer, position, source='the checkpoint'):
    """Set the optimizer's counters (and its scheduler's progress) from :func:`get_position`.

    The scheduler's progress is restored when it is configured as the saved one was (same
    class, settings and learning rate); a scheduler with other settings starts from the restored
    ``num_update`` instead. Nothing changes when the position is malformed (MXNetError).

    Parameters
    ----------
    optimizer : Optimizer
    position : dict
    source : str, optional
        Names where the position came from in errors.
    """
    def fail(what):
        raise MXNetError('the optimizer position in %s is invalid: %s' % (source, what))
    if not isinstance(position, dict):
        fail('expected an object, got %s' % type(position).__name__)
    tables, num_update = _decode_tables(position, fail)
    restored = _restored_scheduler(optimizer, position, num_update, fail)
    counts = optimizer._all_index_update_counts  # pylint: disable=protected-access
    current_dev = next((dev for dev, table in counts.items()
                        if table is optimizer._index_update_count), 0)  # pylint: disable=protected-access
    tables.setdefault(current_dev, {})
    optimizer._all_index_update_counts = tables  # pylint: disable=protected-access
    optimizer._index_update_count = tables[current_dev]  # pylint: disable=protected-access
    optimizer.num_update = num_update
    if restored is not None:
        vars(optimizer.lr_scheduler).update(vars(restored))
