"""``mx.optimizer``: optimizers (SGD, Adam, ...), their registry and the Updater used by KVStore."""
from . import optimizer, contrib  # noqa: F401
from .optimizer import *  # noqa: F401,F403
from .optimizer import __all__ as _names

__all__ = list(_names) + ['contrib']
