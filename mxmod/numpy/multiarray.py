"""``mx.np.ndarray``: an NDArray with NumPy's semantics where MXNet 1.9.1's numpy front end has
them: 0-d results (scalar indexing, full reductions), zero-size shapes, dtype promotion between
arrays (integer / float gives float), boolean comparisons, ``dtype`` as a numpy.dtype and
NumPy's repr. The values, autograd and operators are those of mx.nd; results come back as
mx.np.ndarray."""
import functools

import numpy as _np

from ..ndarray import NDArray
from ..ndarray import tape
from ..ndarray.ndarray import from_xp

__all__ = ['ndarray', 'as_np', 'as_nd', 'to_np_result']

_REDUCTIONS = ('sum', 'mean', 'max', 'min', 'prod', 'nansum', 'nanprod')


def _share(array, cls):
    """A ``cls`` object over the same storage, context and autograd entry as ``array``."""
    out = cls.__new__(cls)
    out._data = array._data
    out._ctx = array._ctx
    for slot in ('_ag', '_exc'):
        value = getattr(array, slot, None)
        if value is not None:
            setattr(out, slot, value)
    return out


def as_np(array):
    """``array`` (an NDArray) as an mx.np.ndarray, sharing its storage (no copy)."""
    if type(array) is ndarray:  # pylint: disable=unidiomatic-typecheck
        return array
    if array.stype != 'default':
        raise ValueError('as_np_ndarray: only dense arrays have a numpy form, got storage type '
                         '%r' % array.stype)
    return _share(array, ndarray)


def as_nd(array):
    """``array`` (an mx.np.ndarray) as a legacy NDArray, sharing its storage."""
    return _share(array, NDArray)


def to_np_result(value):
    """Results of NDArray methods (arrays, or lists/tuples of them) as mx.np.ndarrays."""
    if isinstance(value, NDArray) and value.stype == 'default':
        return as_np(value)
    if isinstance(value, (list, tuple)):
        return type(value)(to_np_result(item) for item in value)
    return value


def reshaped(array, shape):
    """``array`` with the same values in ``shape`` (0-d included), recorded for autograd."""
    shape = tuple(shape)
    if tuple(array.shape) == shape:
        return as_np(array)
    out = ndarray.__new__(ndarray)
    out._data = array._data.reshape(shape)
    out._ctx = array._ctx
    source_shape = tuple(array.shape)

    def backward(out_grads, need):
        del need
        return [out_grads[0].reshape(source_shape)]
    tape.record_function(backward, [array], [out])
    return out


def _numpy_shape(shape, method, **kwargs):
    """The shape numpy gives ``method`` on an array of ``shape`` (computed on a dummy)."""
    dummy = _np.broadcast_to(_np.zeros((), dtype=_np.float32), shape)
    return getattr(dummy, method)(**kwargs).shape


def _is_float(dtype):
    return _np.issubdtype(_np.dtype(dtype), _np.floating)


def _promote(left, right):
    """MXNet's numpy dtype promotion of two arrays: a float meets an integer or bool -> the
    float; otherwise NumPy's rule."""
    left, right = _np.dtype(left), _np.dtype(right)
    if left == right:
        return left
    if _is_float(left) and not _is_float(right):
        return left
    if _is_float(right) and not _is_float(left):
        return right
    return _np.result_type(left, right)


def _binary(name, true_divide=False, compare=False):
    legacy = getattr(NDArray, name)

    @functools.wraps(legacy)
    def method(self, other):
        lhs = self
        if isinstance(other, NDArray):
            target = _promote(self._data.dtype, other._data.dtype)
            if true_divide and not _is_float(target):
                target = _np.dtype(_np.float32)
            lhs = self.astype(target, copy=False)
            other = other.astype(target, copy=False)
        elif isinstance(other, (bool, _np.bool_)):
            other = int(other)
        elif true_divide and not _is_float(self._data.dtype):
            lhs = self.astype(_np.float32)
        elif not isinstance(other, (int, float, _np.number)):
            return NotImplemented
        result = legacy(lhs, other)
        if compare:
            return as_np(result).astype(_np.bool_)
        return as_np(result)
    return method


class ndarray(NDArray):  # pylint: disable=invalid-name
    """An mx.np array: an NDArray with NumPy semantics for shapes, indexing, reductions,
    dtype promotion and printing. Create it with ``mx.np.array``, ``mx.np.zeros``, ... or from
    an NDArray with ``as_np_ndarray()`` (which shares the storage)."""
    __slots__ = ()

    # ---- NumPy-style attributes and printing --------------------------------
    @property
    def dtype(self):
        """The element type, as a numpy.dtype."""
        return self._data.dtype

    @property
    def T(self):  # pylint: disable=invalid-name
        """The transpose (axes reversed)."""
        if self.ndim < 2:
            return self
        return self.transpose()

    def __repr__(self):
        text = repr(self.asnumpy())
        if self._data.dtype == _np.float32:
            text = text.replace(', dtype=float32', '')
        elif 'dtype=' not in text and self._data.dtype != _np.bool_:
            text = text[:-1] + ', dtype=%s)' % self._data.dtype
        if self._ctx.device_type != 'cpu':
            text = text[:-1] + ', ctx=%s)' % self._ctx
        return text

    def __str__(self):
        text = str(self.asnumpy())
        return text if self._ctx.device_type == 'cpu' else '%s @%s' % (text, self._ctx)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError('len() of unsized object')
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError('iteration over a 0-d array')
        for i in range(self.shape[0]):
            yield self[i]

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if _is_float(self._data.dtype):
            raise TypeError('only integer scalar arrays can be converted to a scalar index')
        return int(self.item())

    def item(self, *args):
        """The only element (or the one at ``args``) as a Python scalar."""
        return self.asnumpy().item(*args)

    def tolist(self):
        """The values as nested Python lists."""
        return self.asnumpy().tolist()

    # ---- conversions --------------------------------------------------------
    def as_nd_ndarray(self):
        """This array as a legacy NDArray (shared storage)."""
        return as_nd(self)

    def as_np_ndarray(self):
        """This array itself."""
        return self

    def copyto(self, other):
        """Copy into ``other`` (an array, returned) or onto a Context (a new mx.np.ndarray)."""
        result = NDArray.copyto(self, other)
        return result if isinstance(other, NDArray) else as_np(result)

    def astype(self, dtype, copy=True):  # pylint: disable=arguments-differ
        """The array converted to ``dtype`` (itself when unchanged and ``copy`` is False)."""
        return as_np(NDArray.astype(self, dtype, copy=copy))

    # ---- indexing, shapes and reductions ------------------------------------
    def __getitem__(self, key):
        result = NDArray.__getitem__(self, key)
        want = _np.broadcast_to(_np.zeros((), dtype=bool), self.shape)[
            key if not isinstance(key, NDArray) else key.asnumpy().astype(_np.int64)].shape
        return reshaped(result, want)

    def reshape(self, *shape, **kwargs):  # pylint: disable=arguments-differ
        """The same values in another shape (NumPy's rules: one -1 is inferred)."""
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        shape = kwargs.pop('newshape', shape)
        if kwargs.pop('order', 'C') != 'C':
            raise NotImplementedError('reshape: only order C is supported')
        if kwargs:
            raise TypeError('reshape got unexpected arguments %s' % sorted(kwargs))
        target = _np.broadcast_to(_np.zeros((), dtype=bool), self.shape).reshape(shape).shape
        return reshaped(self, target)

    def _reduce(self, name, axis=None, keepdims=False, **kwargs):
        legacy = NDArray.__getattr__(self, name)
        if axis is None:
            result = legacy(keepdims=keepdims, **kwargs)
        else:
            result = legacy(axis=axis, keepdims=keepdims, **kwargs)
        method = {'nansum': 'sum', 'nanprod': 'prod'}.get(name, name)
        want = _numpy_shape(self.shape, method, axis=axis, keepdims=keepdims) \
            if self.size else tuple(result.shape)
        return reshaped(result, want)

    def __getattr__(self, name):
        if name in _REDUCTIONS:
            return functools.partial(self._reduce, name)
        raise AttributeError('mxnet.numpy.ndarray object has no attribute %s' % name)

    def transpose(self, *axes):
        """The array with its axes permuted (reversed when none are given)."""
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = tuple(axes[0])
        legacy = NDArray.__getattr__(self, 'transpose')
        return as_np(legacy(axes=axes) if axes and axes != (None,) else legacy())

    def swapaxes(self, axis1, axis2):
        """The array with ``axis1`` and ``axis2`` interchanged."""
        return as_np(NDArray.__getattr__(self, 'swapaxes')(dim1=axis1, dim2=axis2))

    def clip(self, min=None, max=None):  # pylint: disable=redefined-builtin
        """Values limited to [min, max]."""
        low = -_np.inf if min is None else min
        high = _np.inf if max is None else max
        return as_np(NDArray.__getattr__(self, 'clip')(a_min=low, a_max=high))

    def flatten(self, order='C'):  # pylint: disable=arguments-differ
        """A 1-D copy of the values."""
        if order != 'C':
            raise NotImplementedError('flatten: only order C is supported')
        return reshaped(NDArray.copy(self), (self.size,))

    def squeeze(self, axis=None):  # pylint: disable=arguments-differ
        """The array without its length-1 axes (or the given ones)."""
        return reshaped(self, _numpy_shape(self.shape, 'squeeze', axis=axis))

    def __setitem__(self, key, value):
        if isinstance(key, tuple) and not key and self.ndim == 0:
            key = Ellipsis
        NDArray.__setitem__(self, key, value)

    def __bool__(self):
        if self.size != 1:
            raise ValueError('The truth value of an array with more than one element is '
                             'ambiguous. Use a.any() or a.all()')
        return bool(self.item())


for _name in ('__add__', '__radd__', '__sub__', '__rsub__', '__mul__', '__rmul__', '__mod__',
              '__rmod__', '__pow__', '__rpow__'):
    setattr(ndarray, _name, _binary(_name))
for _name in ('__truediv__', '__rtruediv__', '__div__', '__rdiv__'):
    setattr(ndarray, _name, _binary(_name, true_divide=True))
for _name in ('__eq__', '__ne__', '__gt__', '__ge__', '__lt__', '__le__'):
    setattr(ndarray, _name, _binary(_name, compare=True))
ndarray.__hash__ = NDArray.__hash__


def _wrap_method(name):
    legacy = getattr(NDArray, name)

    @functools.wraps(legacy)
    def method(self, *args, **kwargs):
        return to_np_result(legacy(self, *args, **kwargs))
    return method


for _name in ('__neg__', '__abs__', 'copy', 'as_in_context', 'detach', 'expand_dims',
              'broadcast_to'):
    setattr(ndarray, _name, _wrap_method(_name))


def _grad(self):
    """The gradient buffer (an mx.np.ndarray), or None."""
    value = NDArray.grad.fget(self)
    return as_np(value) if value is not None else None


ndarray.grad = property(_grad)
del _name


def wrap_storage(data, ctx):
    """An mx.np.ndarray over the numpy/cupy array ``data`` on ``ctx`` (no copy)."""
    return as_np(from_xp(data, ctx))
