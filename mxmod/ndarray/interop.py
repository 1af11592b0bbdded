"""Sharing memory with other array libraries: ``from_numpy`` (zero-copy), and DLPack capsules
(``to_dlpack_for_read`` / ``to_dlpack_for_write`` / ``from_dlpack``) as MXNet exchanges them with
other frameworks."""
import numpy as np

from ..base import MXNetError
from ..context import Context, cupy_module, device_scope
from .ndarray import NDArray, from_xp

__all__ = ['from_numpy', 'to_dlpack_for_read', 'to_dlpack_for_write', 'from_dlpack']

_DL_CPU, _DL_CUDA = 1, 2     # DLPack device types


def from_numpy(ndarray, zero_copy=True, array_cls=NDArray):
    """An NDArray holding the values of a numpy array.

    Parameters
    ----------
    ndarray : numpy.ndarray
    zero_copy : bool
        Share the numpy array's memory (it must be C-contiguous); the numpy array is then made
        read-only, so that only the NDArray writes to it. False copies.
    array_cls : type
        The class of the result (NDArray).
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError('from_numpy expects a numpy.ndarray, got %s' % type(ndarray).__name__)
    ctx = Context('cpu', 0)
    if not zero_copy:
        return _as_cls(from_xp(np.array(ndarray, copy=True), ctx), array_cls)
    if not ndarray.flags['C_CONTIGUOUS']:
        raise ValueError('Only c-contiguous arrays are supported for zero-copy')
    ndarray.flags['WRITEABLE'] = False
    return _as_cls(from_xp(_writable_alias(ndarray), ctx), array_cls)


def _writable_alias(ndarray):
    """A writable numpy array over the memory of the C-contiguous ``ndarray`` (which may be
    read-only), keeping it alive."""
    import ctypes  # pylint: disable=import-outside-toplevel
    memory = (ctypes.c_char * ndarray.nbytes).from_address(ndarray.ctypes.data)
    memory.owner = ndarray
    return np.frombuffer(memory, dtype=ndarray.dtype).reshape(ndarray.shape)


def _as_cls(array, array_cls):
    if array_cls is NDArray or array_cls is None:
        return array
    out = array_cls.__new__(array_cls)
    out._data, out._ctx = array._data, array._ctx
    return out


def _capsule(data):
    """The DLPack capsule of a numpy or cupy array (sharing its memory)."""
    if hasattr(data, '__dlpack__'):
        return data.__dlpack__()
    return data.toDlpack()


def to_dlpack_for_read(data):
    """A DLPack capsule sharing ``data``'s memory, for another framework to read (pending writes
    are finished first)."""
    data.wait_to_read()
    with device_scope(data.context):
        return _capsule(data._data)


def to_dlpack_for_write(data):
    """A DLPack capsule sharing ``data``'s memory, for another framework to write (pending
    reads and writes are finished first)."""
    data.wait_to_write()
    with device_scope(data.context):
        return _capsule(data._data)


class _CapsuleHolder(object):
    """Presents a raw DLPack capsule through the ``__dlpack__`` protocol numpy and cupy read."""

    def __init__(self, capsule, device):
        self._capsule = capsule
        self._device = device

    def __dlpack__(self, *args, **kwargs):
        del args, kwargs
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def _capsule_device(capsule):
    """(device type, id) recorded in a DLPack capsule's DLTensor."""
    import ctypes  # pylint: disable=import-outside-toplevel
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    is_valid = ctypes.pythonapi.PyCapsule_IsValid
    is_valid.restype = ctypes.c_int
    is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    if not is_valid(capsule, b'dltensor'):
        raise MXNetError('Invalid DLPack Tensor. DLTensor capsules can be consumed only once.')
    address = get_pointer(capsule, b'dltensor')
    # DLTensor: void *data; then DLDevice {int32 device_type; int32 device_id}
    device = (ctypes.c_int32 * 2).from_address(address + ctypes.sizeof(ctypes.c_void_p))
    return int(device[0]), int(device[1])


def from_dlpack(dlpack):
    """An NDArray sharing the memory of a DLPack capsule (consumed: a capsule can be used once)
    or of any object with ``__dlpack__`` (a numpy/cupy array, a torch tensor, ...)."""
    if hasattr(dlpack, '__dlpack__'):
        device = dlpack.__dlpack_device__()
        source = dlpack
    else:
        device = _capsule_device(dlpack)
        source = _CapsuleHolder(dlpack, device)
    if device[0] == _DL_CPU:
        return from_xp(np.from_dlpack(source), Context('cpu', 0))
    if device[0] == _DL_CUDA:
        ctx = Context('gpu', device[1])
        with device_scope(ctx):
            return from_xp(cupy_module().from_dlpack(source), ctx)
    raise MXNetError('from_dlpack: DLPack device type %d is not supported (CPU or CUDA only)'
                     % device[0])


def _method_read(self):
    """A DLPack capsule of this array for reading (see mx.nd.to_dlpack_for_read)."""
    return to_dlpack_for_read(self)


def _method_write(self):
    """A DLPack capsule of this array for writing (see mx.nd.to_dlpack_for_write)."""
    return to_dlpack_for_write(self)


NDArray.to_dlpack_for_read = _method_read
NDArray.to_dlpack_for_write = _method_write
