"""The sparse half of ``mx.test_utils``: random row_sparse / CSR arrays (uniform or power-law
non-zeros), ``create_sparse_array`` and friends, and elementwise helpers, with the behaviour of
MXNet 1.9.1's helpers of the same names (re-exported by :mod:`mxmod.test_utils`)."""
import numpy as np
import numpy.random as rnd

from .base import MXNetError

__all__ = ['rand_sparse_ndarray', 'rand_ndarray', 'create_sparse_array', 'create_sparse_array_zd',
           'assign_each', 'assign_each2', 'shuffle_csr_column_indices', 'random_sample',
           'rand_coord_2d']


def _ctx_default(ctx):
    from .test_utils import default_context  # pylint: disable=import-outside-toplevel
    return ctx if ctx else default_context()


def random_sample(population, k):
    """``k`` elements of ``population`` in random order (a shuffled copy's first k)."""
    if not 0 <= k <= len(population):
        raise ValueError('random_sample: k=%d is outside [0, %d]' % (k, len(population)))
    pool = list(population)
    np.random.shuffle(pool)
    return pool[:k]


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random (x, y) int64 coordinate in [x_low, x_high) x [y_low, y_high)."""
    return (np.random.randint(x_low, x_high, dtype=np.int64),
            np.random.randint(y_low, y_high, dtype=np.int64))


def assign_each(the_input, function):
    """``function`` applied to every element of a numpy array (a float64 copy; None: a copy)."""
    if function is None:
        return np.array(the_input)
    flat = np.asarray(the_input).reshape(-1)
    return np.array([function(v) for v in flat], dtype=np.float64).reshape(np.shape(the_input))


def assign_each2(input1, input2, function):
    """``function(a, b)`` on every pair of elements of two equally shaped arrays."""
    if function is None:
        return np.array(input1)
    if np.shape(input1) != np.shape(input2):
        raise ValueError('assign_each2: shapes %s and %s differ' % (np.shape(input1),
                                                                   np.shape(input2)))
    pairs = zip(np.asarray(input1).reshape(-1), np.asarray(input2).reshape(-1))
    return np.array([function(a, b) for a, b in pairs],
                    dtype=np.float64).reshape(np.shape(input1))


def shuffle_csr_column_indices(csr):
    """Shuffle the column indices within each row of a scipy CSR matrix in place."""
    for row in range(len(csr.indptr) - 1):
        begin, end = csr.indptr[row], csr.indptr[row + 1]
        part = np.array(csr.indices[begin:end])
        np.random.shuffle(part)
        csr.indices[begin:end] = part


def _check_csr_request(rows, cols, density, distribution):
    if density < 0 or density > 1:
        raise ValueError('density has to be between 0 and 1')
    if rows <= 0 or cols <= 0:
        raise ValueError('num_rows or num_cols should be greater than 0')
    if distribution == 'powerlaw' and int(rows * cols * density) < 2 * rows:
        raise ValueError('not supported for this density: %s for this shape (%s, %s); keep '
                         'num_rows * num_cols * density >= 2 * num_rows' % (density, rows, cols))


def _uniform_csr(rows, cols, density, dtype, data_init, shuffle):
    import scipy.sparse as spsp  # pylint: disable=import-outside-toplevel
    from .ndarray import sparse  # pylint: disable=import-outside-toplevel
    _check_csr_request(rows, cols, density, 'uniform')
    csr = spsp.rand(rows, cols, density, dtype=dtype, format='csr')
    if data_init is not None:
        csr.data.fill(data_init)
    if shuffle:
        shuffle_csr_column_indices(csr)
    return sparse.csr_matrix((csr.data, csr.indices, csr.indptr), shape=(rows, cols), dtype=dtype)


def _powerlaw_csr(rows, cols, density, dtype):
    """Row i holds about 2^i non-zeros (from the left), every row at least one, until the
    requested number of non-zeros is used up."""
    from .ndarray import array  # pylint: disable=import-outside-toplevel
    _check_csr_request(rows, cols, density, 'powerlaw')
    left = int(rows * cols * density)
    dense = np.zeros((rows, cols), dtype=dtype)
    for row in range(rows):
        dense[row, 0] = 1 + rnd.uniform(0.001, 2)
        left -= 1
        if left <= 0:
            return array(dense).tostype('csr')
    width = 2
    for row in range(rows):
        limit = min(cols, width)
        if limit == cols and left > limit:
            dense[row] = 1 + rnd.uniform(0.001, 2)
            left -= limit - 1
            if left <= 0:
                return array(dense).tostype('csr')
            continue
        for col in range(1, limit):
            dense[row, col] = 1 + rnd.uniform(0.001, 2)
            left -= 1
            if left <= 0:
                return array(dense).tostype('csr')
        width *= 2
    if left > 0:
        raise ValueError('not supported for this density: %s for this shape (%s,%s)'
                         % (density, rows, cols))
    return array(dense).tostype('csr')


def _rand_rsp(shape, density, dtype, data_init, rsp_indices, modifier_func, ctx):
    from .ndarray import sparse  # pylint: disable=import-outside-toplevel
    if rsp_indices is not None:
        indices = np.asarray(rsp_indices)
        if len(indices) > shape[0]:
            raise ValueError('rand_sparse_ndarray: %d row indices for %d rows'
                             % (len(indices), shape[0]))
    else:
        indices = np.argwhere(rnd.rand(shape[0]) < density).flatten()
    if indices.shape[0] == 0:
        empty = sparse.zeros('row_sparse', shape, ctx=ctx, dtype=dtype)
        return empty, (np.array([], dtype=dtype), np.array([]))
    values = rnd.rand(indices.shape[0], *shape[1:]).astype(dtype)
    if data_init is not None:
        values.fill(data_init)
    if modifier_func is not None:
        values = assign_each(values, modifier_func)
    arr = sparse.row_sparse_array((values, indices), shape=shape, dtype=dtype, ctx=ctx)
    return arr, (values, indices)


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """A random sparse array and its parts: ``(rsp, (values, indices))`` or
    ``(csr, (indptr, indices, data))``.

    Parameters
    ----------
    shape : tuple of int
    stype : {'row_sparse', 'csr'}
    density : float, optional
        Fraction of non-zero rows (row_sparse) or elements (csr); random when None.
    dtype : numpy dtype, optional (float32)
    distribution : {'uniform', 'powerlaw'}, optional
        'powerlaw' (csr only): row i holds about twice the non-zeros of row i - 1.
    data_init : float, optional
        Value of every non-zero (instead of uniform random values).
    rsp_indices : sequence of int, optional
        The rows of a row_sparse result.
    modifier_func : callable, optional
        Applied to each row_sparse value.
    shuffle_csr_indices : bool, optional
        Shuffle the column indices inside each CSR row (an unsorted but valid layout).
    ctx : Context, optional
    """
    ctx = _ctx_default(ctx)
    density = rnd.rand() if density is None else density
    dtype = np.float32 if dtype is None else dtype
    distribution = distribution or 'uniform'
    if stype == 'row_sparse':
        if distribution != 'uniform':
            raise MXNetError('Distribution %s not supported for row_sparse' % distribution)
        return _rand_rsp(shape, density, dtype, data_init, rsp_indices, modifier_func, ctx)
    if stype == 'csr':
        if len(shape) != 2:
            raise ValueError('csr arrays are 2-D, got shape %s' % (tuple(shape),))
        if distribution == 'uniform':
            csr = _uniform_csr(shape[0], shape[1], density, dtype, data_init, shuffle_csr_indices)
        elif distribution == 'powerlaw':
            csr = _powerlaw_csr(shape[0], shape[1], density, dtype)
        else:
            raise MXNetError('Distribution not supported: %s' % distribution)
        csr = csr.as_in_context(ctx)
        return csr, (csr.indptr, csr.indices, csr.data)
    raise MXNetError('unknown storage type %r' % (stype,))


def rand_ndarray(shape, stype='default', density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random NDArray: normal values for 'default', else :func:`rand_sparse_ndarray`."""
    from .ndarray import array  # pylint: disable=import-outside-toplevel
    ctx = _ctx_default(ctx)
    if stype == 'default':
        values = np.random.randn(*shape) if len(shape) else np.random.randn()
        return array(np.asarray(values, dtype=np.float32), dtype=dtype, ctx=ctx)
    arr, _ = rand_sparse_ndarray(shape, stype, density=density, modifier_func=modifier_func,
                                 dtype=dtype, shuffle_csr_indices=shuffle_csr_indices,
                                 distribution=distribution, ctx=ctx)
    return arr


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """A random sparse array (row_sparse rows sorted when ``rsp_indices`` is given)."""
    if stype == 'row_sparse':
        indices = None if rsp_indices is None else np.sort(np.asarray(rsp_indices))
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                     rsp_indices=indices, dtype=dtype,
                                     modifier_func=modifier_func)
        return arr
    if stype == 'csr':
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                     dtype=dtype, modifier_func=modifier_func,
                                     shuffle_csr_indices=shuffle_csr_indices)
        return arr
    raise AssertionError('Unknown storage type: ' + str(stype))


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None, dtype=None,
                           modifier_func=None, shuffle_csr_indices=False):
    """:func:`create_sparse_array` where row_sparse rows come only from ``rsp_indices``."""
    if stype == 'row_sparse':
        density = 0.0
        if rsp_indices is not None and len(rsp_indices) > shape[0]:
            raise ValueError('%d row indices for %d rows' % (len(rsp_indices), shape[0]))
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)
