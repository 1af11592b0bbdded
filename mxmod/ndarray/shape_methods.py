"""NDArray's shape methods with MXNet's semantics: ``reshape`` (a view, MXNet's shape codes),
``flatten`` / ``expand_dims`` / ``squeeze`` (copies, or views with ``inplace=True``),
``broadcast_to`` / ``broadcast_like``, ``reshape_like`` and ``T``. While autograd records, each
is recorded as the operator it stands for."""
from ..base import MXNetError
from ..context import xp_of
from . import tape
from .ndarray import NDArray, carry_error, from_xp, on_device
from .register import invoke

__all__ = ['reshape', 'reshape_like', 'flatten', 'expand_dims', 'squeeze', 'broadcast_to',
           'broadcast_like', 'transpose_property']


def _recording(array):
    return tape.is_recording() and tape.in_graph(array)


def _view(array, shape):
    """``array`` with ``shape``, sharing its memory (its storage is always C-contiguous)."""
    data = array._data
    if not data.flags.c_contiguous:
        # an operator handed out a strided result: give the array its own compact storage
        data = array._data = xp_of(array.context).ascontiguousarray(data)
    return carry_error(array, from_xp(data.reshape(shape), array.context))


def _reshape_target(array, shape, reverse):
    """The shape MXNet's codes give; as MXNet, a larger target is an MXNetError and a smaller
    one a ValueError."""
    from ..ops.shape_codes import reshape_partial  # pylint: disable=import-outside-toplevel
    new_shape = reshape_partial(array.shape, shape, reverse, check_size=False)
    if _size(new_shape) > array.size:
        raise MXNetError('NDArray.Reshape: target shape %s (from %s) has more elements than the '
                         'array of shape %s' % (new_shape, tuple(shape), array.shape))
    if _size(new_shape) != array.size:
        raise ValueError('Cannot reshape array of size %d into shape %s'
                         % (array.size, tuple(shape)))
    return new_shape


def _size(shape):
    total = 1
    for d in shape:
        total *= d
    return total


@on_device
def reshape(self, *shape, **kwargs):
    """A view of the array with a new shape (shared memory).

    ``shape`` is given as separate ints or one tuple, with MXNet's codes: 0 copies a dimension,
    -1 infers one, -2 copies the rest, -3 merges two, -4 splits one into the next two values.
    ``reverse=True`` applies the codes from the right. A shape of another size raises
    ValueError."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = shape[0]
    if 'shape' in kwargs:
        shape = kwargs.pop('shape')
    reverse = kwargs.pop('reverse', False)
    if kwargs:
        raise TypeError('reshape() got unexpected keyword argument(s) %s' % sorted(kwargs))
    new_shape = _reshape_target(self, tuple(shape), reverse)
    if _recording(self):
        return invoke('Reshape', (self,), {'shape': new_shape})
    return _view(self, new_shape)


def reshape_like(self, *args, **kwargs):
    """The array reshaped like ``rhs`` (optionally only the ranges ``lhs_begin:lhs_end`` and
    ``rhs_begin:rhs_end`` of the shapes); see mx.nd.reshape_like."""
    return invoke('reshape_like', (self,) + args, kwargs)


def flatten(self, inplace=False):
    """The array as 2-D ``(shape[0], prod(rest))``: a copy, or a view with ``inplace=True``."""
    if not inplace or _recording(self):
        return invoke('Flatten', (self,), {})
    first = self.shape[0] if self.ndim else 1
    return _view(self, (first, self.size // first if first else _size(self.shape[1:])))


def expand_dims(self, axis, inplace=False):
    """The array with a new axis of size 1 at ``axis``: a copy, or a view with
    ``inplace=True``."""
    if not inplace or _recording(self):
        return invoke('expand_dims', (self,), {'axis': axis})
    if not -self.ndim - 1 <= axis <= self.ndim:
        raise MXNetError('expand_dims: axis %d is out of range for an array of %d dimensions'
                         % (axis, self.ndim))
    axis = axis + self.ndim + 1 if axis < 0 else axis
    return _view(self, self.shape[:axis] + (1,) + self.shape[axis:])


def squeeze(self, axis=None, inplace=False):
    """The array without axes of size 1 (all, or those in ``axis``): a copy, or a view with
    ``inplace=True``. Squeezing every axis leaves shape (1,)."""
    out = invoke('squeeze', (self,), {'axis': axis})
    if not inplace or _recording(self):
        return out
    return _view(self, out.shape)


@on_device
def broadcast_to(self, shape):
    """The array broadcast to ``shape`` (a 0 keeps the input's dimension); a new array."""
    lead = (0,) * (len(shape) - self.ndim) + self.shape
    shape = tuple(s if s != 0 else d for s, d in zip(shape, lead))
    if _recording(self):
        return invoke('broadcast_to', (self,), {'shape': shape})
    try:
        data = xp_of(self.context).broadcast_to(self._data, shape)
    except ValueError:
        raise MXNetError('broadcast_to: cannot broadcast an array of shape %s to %s'
                         % (self.shape, shape)) from None
    return from_xp(data.copy(), self.context)


def broadcast_like(self, other, **kwargs):
    """The array broadcast to the shape of ``other``."""
    if kwargs:
        return invoke('broadcast_like', (self, other), kwargs)
    return broadcast_to(self, other.shape)


@on_device
def _transposed(self):
    """The transpose (axes reversed); a new array."""
    if _recording(self):
        return invoke('transpose', (self,), {})
    return from_xp(self._data.T.copy(), self.context)


transpose_property = property(_transposed)

for _name in ('reshape', 'reshape_like', 'flatten', 'expand_dims', 'squeeze', 'broadcast_to',
              'broadcast_like'):
    setattr(NDArray, _name, globals()[_name])
NDArray.T = transpose_property
