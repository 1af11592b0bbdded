"""Global switches shared by the layers (numpy shape semantics for partial shape inference)."""
import functools
import threading

_STATE = threading.local()


def is_np_shape():
    """True inside ``mx.np_shape(True)``: unknown dimensions are -1 and unknown shapes None."""
    return getattr(_STATE, 'np_shape', False)


def set_np_shape(active):
    """Turn numpy shape semantics on or off; returns the previous setting."""
    prev = is_np_shape()
    _STATE.np_shape = bool(active)
    return prev


class np_shape(object):  # pylint: disable=invalid-name
    """Scope (``with mx.np_shape(True):``) for numpy shape semantics."""

    def __init__(self, active=True):
        self._active = active
        self._prev = None

    def __enter__(self):
        self._prev = set_np_shape(self._active)
        return self

    def __exit__(self, ptype, value, trace):
        set_np_shape(self._prev)


def use_np_shape(func):
    """Decorator running ``func`` with numpy shape semantics on."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with np_shape(True):
            return func(*args, **kwargs)
    return wrapper


def is_np_array():
    """mxmod has no mx.np front end; always False."""
    return False
