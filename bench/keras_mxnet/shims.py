"""Python 3.11 and numpy 2 compatibility for Keras 2.2 (keras-mxnet 2.2.4.3), applied before
``import keras``.

These patch the standard library and h5py only for Keras's sake; mxmod needs none of them (they
live in this harness, never in mxmod). Keras 2.2 was written for Python <= 3.9 and h5py 2."""
import collections
import collections.abc
import inspect


def apply():
    """Install the shims (idempotent)."""
    # 1. Python 3.10 removed the ABC aliases in ``collections`` (keras/callbacks.py imports
    #    ``from collections import Iterable``).
    for name in ('Iterable', 'Mapping', 'MutableMapping', 'Sequence', 'Callable'):
        if not hasattr(collections, name):
            setattr(collections, name, getattr(collections.abc, name))
    # 2. Python 3.11 removed ``inspect.getargspec`` (keras/utils/generic_utils.has_arg and
    #    keras/preprocessing/image.py call it).
    if not hasattr(inspect, 'getargspec'):
        def getargspec(func):
            spec = inspect.getfullargspec(func)
            return collections.namedtuple('ArgSpec', 'args varargs keywords defaults')(
                spec.args, spec.varargs, spec.varkw, spec.defaults)
        inspect.getargspec = getargspec
    _h5py_strings()
    # 4. numpy 2 removed aliases Keras uses (np.Inf in callbacks.py, np.string_ in io_utils.py,
    #    np.unicode_ in keras_preprocessing's sequence.py).
    import numpy  # pylint: disable=import-outside-toplevel
    for name, value in (('Inf', numpy.inf), ('NaN', numpy.nan), ('string_', numpy.bytes_),
                        ('unicode_', numpy.str_)):
        if name not in numpy.__dict__:
            setattr(numpy, name, value)


def _h5py_strings():
    """3. h5py 3 returns HDF5 string attributes as ``str``, where Keras 2.2's saving code calls
    ``.decode('utf8')`` on the bytes h5py 2 gave: give it back an object with ``decode``."""
    import numpy  # pylint: disable=import-outside-toplevel
    try:
        import h5py  # pylint: disable=import-outside-toplevel
    except ImportError:
        return
    if getattr(h5py.AttributeManager, '_keras22_shim', False):
        return

    class _Text(str):
        def decode(self, *args, **kwargs):  # pylint: disable=unused-argument
            return str(self)

    original = h5py.AttributeManager.__getitem__

    def getitem(self, name):
        value = original(self, name)
        if isinstance(value, str):
            return _Text(value)
        if getattr(value, 'ndim', 0) == 1 and not value.size:
            return []   # a layer without weights: numpy 2 refuses ``if empty_array:``
        if getattr(value, 'dtype', None) is not None and value.dtype.kind == 'O':
            # variable-length strings come back as objects: h5py 2 gave fixed-length bytes
            return numpy.array([v.encode('utf8') if isinstance(v, str) else v
                                for v in value.tolist()], dtype='S')
        return value
    h5py.AttributeManager.__getitem__ = getitem
    h5py.AttributeManager._keras22_shim = True
