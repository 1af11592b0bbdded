"""``mx.kv``: key-value stores that sum gradients across devices (and processes) and may run the
optimizer on their copy of the weights. ``create('local' | 'device' | 'dist_sync' | ...)``."""
from .base import create, KVStoreBase, TestStore  # noqa: F401
from .local import KVStore  # noqa: F401
from .compression import TwoBitCompression  # noqa: F401

__all__ = ['create', 'KVStoreBase', 'KVStore', 'TestStore']
