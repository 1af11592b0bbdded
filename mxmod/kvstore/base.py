"""The key-value store interface shared by every store type, key/value normalization and ``create``.

A store type is chosen by its name as MXNet does: names registered with
``KVStoreBase.register`` (class name, lower-cased) first; otherwise names containing ``dist``
go to the distributed store, names containing ``nccl`` to the NCCL store, and every other name
(``local``, ``device``, ``local_allreduce_cpu`` ...) to the in-process store."""
import importlib

from ..base import MXNetError, string_types, integer_types
from ..profiler.hooks import traced
from ..registry import family

__all__ = ['create', 'KVStoreBase', 'normalize_pairs', 'check_type_name']


class KVStoreBase(object):
    """Interface of a key-value store used for data-parallel training.

    Keys are ints or strings (one kind per store); values are NDArrays or lists of NDArrays
    (one per device). Concrete stores implement the methods below.
    """
    OPTIMIZER = 'optimizer'

    def __init_subclass__(cls, **kwargs):
        """Every store type's data calls appear in the profiler's trace as ``KVStore.<call>``."""
        super().__init_subclass__(**kwargs)
        for call in ('init', 'push', 'pull', 'pushpull', 'broadcast', 'row_sparse_pull', 'barrier'):
            if call in cls.__dict__:
                setattr(cls, call, traced('KVStore', 'KVStore.' + call, outermost=True)(
                    cls.__dict__[call]))

    def init(self, key, value):
        """Initialize ``key`` (or a list of keys) with ``value``; must precede push and pull."""
        raise NotImplementedError('%s does not support init' % type(self).__name__)

    def push(self, key, value, priority=0):
        """Push values (summed over a per-device list) into the store."""
        raise NotImplementedError('%s does not support push' % type(self).__name__)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored value of ``key`` into every array of ``out``."""
        raise NotImplementedError('%s does not support pull' % type(self).__name__)

    def broadcast(self, key, value, out, priority=0):
        """Initialize ``key`` with ``value`` and copy it into ``out``."""
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` then pull the result into ``out`` (``value`` itself when None)."""
        raise NotImplementedError()

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull only the rows ``row_ids`` of a row_sparse value."""
        raise NotImplementedError('%s does not support row_sparse_pull' % type(self).__name__)

    def set_optimizer(self, optimizer):
        """Run ``optimizer`` on the store's copy of the weights at every push."""
        raise NotImplementedError()

    def set_updater(self, updater):
        """Set ``updater(key, merged_value, stored_value)`` applied at every push."""
        raise NotImplementedError('%s does not support set_updater' % type(self).__name__)

    def set_gradient_compression(self, compression_params):
        """Compress pushed gradients, e.g. ``{'type': '2bit', 'threshold': 0.5}``."""
        raise NotImplementedError('%s does not support gradient compression' % type(self).__name__)

    @staticmethod
    def is_capable(capability):
        """Whether the store supports ``capability`` (only ``'optimizer'`` is defined).

        A static method, so that the class itself answers (``type(kv).is_capable('optimizer')``);
        a subclass may override it with a static or an instance method."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer states of the store's updater to ``fname``."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        """Read optimizer states written by :meth:`save_optimizer_states`."""
        raise NotImplementedError()

    def barrier(self):
        """Wait until every worker reaches this point (a no-op in one process)."""

    def _barrier(self):
        self.barrier()

    @property
    def type(self):
        """The type string the store was created with."""
        raise NotImplementedError()

    @property
    def rank(self):
        """This worker's rank."""
        raise NotImplementedError()

    @property
    def num_workers(self):
        """Number of workers."""
        raise NotImplementedError()

    @staticmethod
    def register(klass):
        """Register a KVStoreBase subclass under its lower-cased class name for :func:`create`."""
        if not (isinstance(klass, type) and issubclass(klass, KVStoreBase)):
            raise TypeError('KVStoreBase.register expects a KVStoreBase subclass, got %r'
                            % (klass,))
        return _REGISTRY.register(klass)


_REGISTRY = family(KVStoreBase, 'kvstore')
KVStoreBase.kv_registry = _REGISTRY.table

# (substring of the type name, module in this package, class name); the first match wins.
_NATIVE_TYPES = [('dist', 'dist', 'DistKVStore'), ('nccl', 'nccl', 'NCCLKVStore')]


# the store type names MXNet 1.9.1 documents or uses (its C++ side accepts any text and makes an
# in-process store of a misspelled one; mxmod refuses it)
KNOWN_TYPES = ('local', 'device', 'nccl', 'dist', 'dist_sync', 'dist_async', 'dist_device_sync',
               'dist_sync_device', 'dist_device_async', 'dist_async_device', 'local_update_cpu',
               'local_allreduce_cpu', 'local_allreduce_device')


def check_type_name(name, what='mx.kv.create'):
    """The lower-cased store type ``name``; an MXNetError listing the valid names otherwise."""
    from ..argcheck import ArgumentTypeError, ArgumentValueError  # pylint: disable=import-outside-toplevel
    if not isinstance(name, string_types):
        raise ArgumentTypeError('%s: the kvstore type must be a string, got %r (%s)'
                                % (what, name, type(name).__name__))
    lowered = name.lower()
    if lowered not in KNOWN_TYPES and lowered not in _REGISTRY.table:
        raise ArgumentValueError('%s: unknown kvstore type %r; valid types are %s'
                                 % (what, name, ', '.join(sorted(set(KNOWN_TYPES)
                                                                 | set(_REGISTRY.table)))))
    return lowered


def create(name='local'):
    """Create a key-value store.

    Parameters
    ----------
    name : str, default 'local'
        ``'local'`` (reduce on CPU), ``'device'`` (reduce on the devices), ``'nccl'``,
        ``'dist_sync'``, ``'dist_device_sync'``, ``'dist_async'`` or a registered store name.

    Returns
    -------
    KVStoreBase
    """
    name = check_type_name(name)
    if name in _REGISTRY.table:
        return _REGISTRY.table[name]()
    for marker, module_name, class_name in _NATIVE_TYPES:
        if marker in name:
            return _load_native(module_name, class_name, name)(name)
    from .local import KVStore  # pylint: disable=import-outside-toplevel
    return KVStore(name)


def _load_native(module_name, class_name, type_name):
    try:
        module = importlib.import_module('.' + module_name, __package__)
    except ModuleNotFoundError as err:
        if err.name != __package__ + '.' + module_name:
            raise
        raise MXNetError('kvstore type %r needs mxmod.kvstore.%s, which this installation does '
                         'not have' % (type_name, module_name)) from None
    return getattr(module, class_name)


def _key_kind(key):
    if isinstance(key, bool) or not isinstance(key, integer_types + string_types):
        raise MXNetError('kvstore keys must be int or str, got %r (%s)' % (key, type(key).__name__))
    return 'str' if isinstance(key, string_types) else 'int'


def _as_value_list(key, value, what):
    if isinstance(value, (list, tuple)):
        vals = list(value)
    else:
        vals = [value]
    for val in vals:
        if not hasattr(val, 'shape') or not hasattr(val, 'context'):
            raise TypeError('%s: the value for key %r must be an NDArray or a list of NDArrays, '
                            'got %s' % (what, key, type(val).__name__))
    return vals


def normalize_pairs(key, value, what):
    """Turn ``(key, value)`` as given to init/push/pull into ``(kind, [(key, [arrays])])``.

    ``key`` is one key with an NDArray or a per-device list, or a list of keys with one such
    entry per key. ``kind`` is ``'int'`` or ``'str'``; mixing kinds raises MXNetError.
    """
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            raise MXNetError('%s: %d keys need a list of %d values, got %r'
                             % (what, len(key), len(key), type(value).__name__))
        pairs = [(k, _as_value_list(k, v, what)) for k, v in zip(key, value)]
    else:
        pairs = [(key, _as_value_list(key, value, what))]
    kinds = set(_key_kind(k) for k, _ in pairs)
    if len(kinds) > 1:
        raise MXNetError('%s: inconsistent types of keys detected (int and str keys mixed in %r)'
                         % (what, key))
    return (kinds.pop() if kinds else None), pairs


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A minimal pure-Python store: pushpull sums a list of values; no optimizer support."""

    def broadcast(self, key, value, out, priority=0):
        """Copy ``value`` into every array of ``out``."""
        for dst in (out if isinstance(out, list) else [out]):
            dst[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        """Sum the list ``value`` into ``out`` (or back into ``value``)."""
        if not isinstance(value, (list, tuple)):
            if out is not None:
                self.broadcast(key, value, out)
            return
        ctx = value[0].context
        total = value[0].as_in_context(ctx).copy()
        for val in value[1:]:
            total += val.as_in_context(ctx)
        self.broadcast(key, total, list(value) if out is None else out)

    @staticmethod
    def is_capable(capability):
        """Only ``'optimizer'`` is known, and this store does not have it."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError('Unknown capability: %s' % capability)

    @property
    def type(self):
        return 'teststore'

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1


def check_new_keys(pairs, known):
    """Raise MXNet's error when a key of ``pairs`` ((key, values) from normalize_pairs) is already
    in ``known`` or comes with more than one value."""
    for k, vals in pairs:
        if k in known or len(vals) != 1:
            raise MXNetError('init: duplicate init of key %r. Please double check if you '
                             'called kv.init or kv.broadcast with this key multiple times' % (k,))
