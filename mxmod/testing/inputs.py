"""Random inputs of ``mx.test_utils``: numpy arrays, shapes, NDArrays and well-conditioned
matrices, plus small numpy reference helpers. They draw from numpy's global generator in the
order MXNet's helpers do, so a seeded test sees the same inputs as on MXNet."""
import numpy as np

from ..ndarray.ndarray import array as nd_array
from .harness import default_context, default_dtype

__all__ = ['random_arrays', 'random_uniform_arrays', 'random_sample', 'rand_shape_2d',
           'rand_shape_3d', 'rand_shape_nd', 'rand_coord_2d', 'rand_ndarray', 'np_reduce',
           'assign_each', 'assign_each2', 'create_2d_tensor', 'create_vector', 'get_identity_mat',
           'get_identity_mat_batch', 'new_matrix_with_real_eigvals_2d',
           'new_matrix_with_real_eigvals_nd', 'new_orthonormal_matrix_2d',
           'new_sym_matrix_with_real_eigvals_2d', 'new_sym_matrix_with_real_eigvals_nd']


def random_arrays(*shapes):
    """Standard-normal numpy arrays of the default dtype, one per shape (one array when a single
    shape is given; shape ``()`` gives a 0-d array)."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, **kwargs):
    """Uniform numpy arrays in ``[low, high)`` (keywords ``low=0``, ``high=1``, ``dtype``), a list
    with one per shape."""
    low = kwargs.pop('low', 0.0)
    high = kwargs.pop('high', 1.0)
    dtype = kwargs.pop('dtype', default_dtype())
    if kwargs:
        raise TypeError('random_uniform_arrays got unexpected argument(s) %s' % sorted(kwargs))
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """``k`` elements of the list ``population`` in random order (without replacement)."""
    if not 0 <= k <= len(population):
        raise ValueError('random_sample: k=%d is not within [0, %d]' % (k, len(population)))
    shuffled = population[:]
    np.random.shuffle(shuffled)
    return shuffled[:k]


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-D shape with sides at most ``dim0``, ``dim1`` (at least 1 unless
    ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-D shape with sides at most ``dim0``, ``dim1``, ``dim2``."""
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random shape of ``num_dim`` sides, each at most ``dim``."""
    low = 0 if allow_zero_size else 1
    return tuple(np.random.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random integer point of ``[x_low, x_high) x [y_low, y_high)``."""
    return (np.random.randint(x_low, x_high, dtype=np.int64),
            np.random.randint(y_low, y_high, dtype=np.int64))


def rand_ndarray(shape, stype='default', density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random NDArray: standard normal values for dense storage; for 'row_sparse' or 'csr',
    rows (elements) zeroed with probability ``1 - density`` and tagged with that storage type."""
    ctx = ctx or default_context()
    if stype == 'default':
        return nd_array(random_arrays(shape), dtype=dtype, ctx=ctx)
    data = np.random.uniform(size=shape).astype(dtype or np.float32)
    density = np.random.rand() if density is None else density
    if stype == 'row_sparse' and data.ndim:
        data[np.random.rand(data.shape[0]) >= density] = 0
    else:
        data[np.random.rand(*data.shape) >= density] = 0
    if modifier_func is not None:
        data = modifier_func(data)
    return nd_array(data, ctx=ctx, dtype=dtype or np.float32).tostype(stype)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce numpy array ``dat`` over ``axis`` (int, sequence or None) one axis at a time with
    ``numpy_reduce_func`` (e.g. ``np.sum``), keeping reduced axes as 1 when ``keepdims``."""
    axes = [axis] if isinstance(axis, int) else (list(axis) if axis is not None
                                                 else list(range(dat.ndim)))
    ret = dat
    for i in sorted(axes, reverse=True):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axes:
            shape[i] = 1
        ret = ret.reshape(tuple(shape))
    return ret


def assign_each(the_input, function):
    """numpy array of ``function(x)`` for each element ``x`` (a copy when function is None)."""
    if function is None:
        return np.array(the_input)
    return np.array([function(x) for x in np.asarray(the_input).reshape(-1)],
                    dtype=np.float64).reshape(np.shape(the_input))


def assign_each2(input1, input2, function):
    """numpy array of ``function(x, y)`` for each pair of elements of two same-shaped arrays."""
    if function is None:
        return np.array(input1)
    if np.shape(input1) != np.shape(input2):
        raise ValueError('assign_each2: shapes %s and %s differ' % (np.shape(input1), np.shape(input2)))
    pairs = zip(np.asarray(input1).reshape(-1), np.asarray(input2).reshape(-1))
    return np.array([function(x, y) for x, y in pairs], dtype=np.float64).reshape(np.shape(input1))


def create_2d_tensor(rows, columns, dtype=np.int64):
    """NDArray whose row ``i`` is filled with ``i``."""
    column = nd_array(np.arange(rows).reshape(rows, 1), dtype=dtype)
    return column.broadcast_to((rows, columns))


def create_vector(size, dtype=np.int64):
    """NDArray ``0, 1, ..., size - 1``."""
    return nd_array(np.arange(size), dtype=dtype)


def get_identity_mat(size):
    """float32 identity NDArray of ``size`` x ``size``."""
    return nd_array(np.eye(size, dtype=np.float32))


def get_identity_mat_batch(size):
    """A batch of two identity matrices."""
    return nd_array(np.stack([np.eye(size, dtype=np.float32)] * 2))


def _reflection(n):
    vec = np.random.uniform(-1.0, 1.0, n).reshape(n, 1)
    vec = vec / np.linalg.norm(vec, axis=-2, keepdims=True)
    return np.eye(n) - 2 * np.matmul(vec, vec.T)


def new_matrix_with_real_eigvals_2d(n):
    """A well-conditioned ``n`` x ``n`` matrix with real eigenvalues in [-10, 10]."""
    while True:
        diag = np.diag(np.random.uniform(-1.0, 1.0, n))
        basis = np.matmul(_reflection(n), diag)
        if np.linalg.cond(basis, 2) < 3:
            break
    eig = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(np.linalg.inv(basis), eig), basis)


def new_matrix_with_real_eigvals_nd(shape):
    """A stack of matrices from new_matrix_with_real_eigvals_2d of the given shape."""
    count = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1])
                     for _ in range(count)]).reshape(shape)


def new_orthonormal_matrix_2d(n):
    """A random orthonormal ``n`` x ``n`` matrix."""
    x = np.random.randn(n, n)
    return np.linalg.qr(np.matmul(x.T, x))[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    """A random symmetric matrix with eigenvalues in [-10, 10]."""
    q = new_orthonormal_matrix_2d(n)
    eig = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(q.T, eig), q)


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A stack of matrices from new_sym_matrix_with_real_eigvals_2d of the given shape."""
    count = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1])
                     for _ in range(count)]).reshape(shape)
