"""The two key layouts of optimizer states. A Module that updates on its devices keys each state
by ``param_index * num_devices + device``; one that updates in a kvstore keys it by the
parameter's name. MXNet stores states loaded from the other layout under their old keys and never
uses them (training silently restarts the states); mxmod keeps them under those keys too, and
hands each weight the state saved for its parameter (device 0's when the devices had one each)."""
import numbers

from ..ndarray.ndarray import NDArray

__all__ = ['alias_key', 'copy_state', 'int_layout_devices']


def _int_keys(keys):
    return [k for k in keys if isinstance(k, numbers.Integral) and not isinstance(k, bool)]


def int_layout_devices(keys, num_params):
    """How many devices an integer-keyed states dict was saved from (1 when unclear)."""
    ints = _int_keys(keys)
    if not ints or not num_params or (max(ints) + 1) % num_params:
        return 1
    return (max(ints) + 1) // num_params


def alias_key(states, idx, idx2name):
    """The key of ``states`` that holds update key ``idx``'s state in the other layout, or None.

    Parameters
    ----------
    states : dict
    idx : int or str
        The update key asked for.
    idx2name : dict of int to str
        The optimizer's update index -> parameter name table.
    """
    if isinstance(idx, str):
        positions = sorted(i for i, name in idx2name.items() if name == idx)
        if not positions:
            return None
        devices = int_layout_devices(states, len(idx2name))
        key = positions[0] * devices
        return key if key in states else None
    name = idx2name.get(idx)
    return name if isinstance(name, str) and name in states else None


def copy_state(state, context):
    """A copy of ``state`` (None, NDArray or tuples of them) on ``context``."""
    if isinstance(state, NDArray):
        return state.copyto(context)
    if isinstance(state, (tuple, list)):
        copied = [copy_state(s, context) for s in state]
        return tuple(copied) if isinstance(state, tuple) else copied
    return state
