"""``mx.nd.sparse``: CSRNDArray and RowSparseNDArray, their creation functions (``csr_matrix``,
``row_sparse_array``, ``zeros``, ``empty``, ``array`` from NDArrays and scipy.sparse), sparse
arithmetic (``add``, ``subtract``, ``multiply``, ``divide``) and the operators MXNet lists under
``mx.nd.sparse`` (``dot``, ``retain``, ``slice``, ``elemwise_add`` ...)."""
import numpy as np

from ..base import MXNetError, integer_types, mx_real_t, numeric_types
from ..context import Context, as_context, device_scope
from ..ops.sparse_registry import SPARSE_NAMESPACE
from ..sparse_storage import (CSRStorage, RowSparseStorage, empty_storage, INDEX_DTYPE)
from .ndarray import NDArray, _put
from .ndarray import array as _dense_array, zeros as _dense_zeros
from .register import invoke, make_function
from .sparse_ndarray import BaseSparseNDArray, CSRNDArray, RowSparseNDArray, wrap_storage

__all__ = ['csr_matrix', 'row_sparse_array', 'BaseSparseNDArray', 'CSRNDArray',
           'RowSparseNDArray', 'add', 'subtract', 'multiply', 'divide', 'zeros', 'empty', 'array']


def _scipy_sparse():
    try:
        import scipy.sparse as spsp  # pylint: disable=import-outside-toplevel
    except ImportError as err:
        raise ImportError('scipy is needed for scipy.sparse inputs: pip install scipy') from err
    return spsp


def _is_scipy(obj):
    try:
        import scipy.sparse as spsp  # pylint: disable=import-outside-toplevel
    except ImportError:
        return False
    return spsp.issparse(obj)


def _check_shape(given, wanted):
    if wanted is not None and tuple(int(d) for d in given) != tuple(int(d) for d in wanted):
        raise ValueError('Shape mismatch detected. %s v.s. %s' % (tuple(given), tuple(wanted)))


def _default_dtype(src, dtype):
    if dtype is not None:
        return dtype
    if isinstance(src, (NDArray, np.ndarray)) or _is_scipy(src):
        return src.dtype
    return mx_real_t


def _host(values, dtype):
    """A host numpy array of ``values`` (NDArray, numpy, list) in ``dtype``."""
    if isinstance(values, NDArray):
        values = values.asnumpy()
    return np.array(values, dtype=dtype)


# ---- creation --------------------------------------------------------------------------------
def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage type ``stype`` ('default', 'row_sparse' or 'csr')."""
    if stype == 'default':
        return _dense_zeros(shape, ctx=ctx, dtype=dtype, **kwargs)
    if stype not in ('row_sparse', 'csr'):
        raise ValueError('unknown storage type %r; expected one of default, row_sparse, csr'
                         % (stype,))
    ctx = as_context(ctx)
    shape = (shape,) if isinstance(shape, integer_types) else tuple(int(d) for d in shape)
    with device_scope(ctx):
        storage = empty_storage(ctx.xp, stype, shape, np.dtype(dtype or mx_real_t))
    return wrap_storage(storage, ctx)


def empty(stype, shape, ctx=None, dtype=None):
    """A new sparse array of ``stype`` (no non-zeros)."""
    if stype not in ('row_sparse', 'csr'):
        raise MXNetError('unknown storage type %r for sparse empty; expected row_sparse or csr'
                         % (stype,))
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def _from_parts(cls, parts, shape, ctx):
    ctx = as_context(ctx)
    with device_scope(ctx):
        moved = [_put(p, ctx) for p in parts]
        storage = cls(*(moved + [shape]))
    return wrap_storage(storage, ctx)


def _csr_from_definition(data, indices, indptr, shape, ctx, dtype):
    dtype = _default_dtype(data, dtype)
    data = _host(data, dtype)
    indices = _host(indices, INDEX_DTYPE)
    indptr = _host(indptr, INDEX_DTYPE)
    if shape is None:
        if indices.shape[0] == 0:
            raise ValueError('invalid shape')
        shape = (indptr.shape[0] - 1, int(indices.max()) + 1)
    if data.ndim != 1 or indptr.ndim != 1 or indices.ndim != 1 or indptr.shape[0] == 0 \
            or len(shape) != 2:
        raise ValueError('invalid shape')
    return _from_parts(CSRStorage, [data, indices, indptr], tuple(shape), ctx)


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """Create a CSRNDArray from ``(M, N)``, ``(data, indices, indptr)``, ``(data, (row, col))``,
    a dense array (NDArray, numpy, nested lists), a CSRNDArray or a scipy sparse matrix.

    Parameters
    ----------
    arg1 : tuple, array_like, CSRNDArray or scipy.sparse matrix
    shape : tuple of int, optional
        Inferred from the arguments when not given.
    ctx : Context, optional
    dtype : str or numpy.dtype, optional
        Defaults to the source's dtype (float32 for lists and shapes).

    Returns
    -------
    CSRNDArray
    """
    if isinstance(arg1, tuple):
        if len(arg1) == 2:
            if isinstance(arg1[1], tuple) and len(arg1[1]) == 2:
                values, (row, col) = arg1
                coo = _scipy_sparse().coo_matrix(
                    (_host(values, None), (_host(row, None), _host(col, None))), shape=shape)
                _check_shape(coo.shape, shape)
                return array(coo.tocsr(), ctx=ctx, dtype=dtype)
            _check_shape(arg1, shape)
            return empty('csr', arg1, ctx=ctx, dtype=dtype)
        if len(arg1) == 3:
            return _csr_from_definition(arg1[0], arg1[1], arg1[2], shape, ctx, dtype)
        raise ValueError('Unexpected length of input tuple: %d' % len(arg1))
    if isinstance(arg1, CSRNDArray) or _is_scipy(arg1):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, RowSparseNDArray):
        raise ValueError('Unexpected input type: RowSparseNDArray')
    return _from_dense(arg1, 'csr', shape, ctx, dtype)


def _from_dense(arg1, stype, shape, ctx, dtype):
    dense = _dense_array(arg1, dtype=_default_dtype(arg1, dtype))
    if ctx is not None and dense.context != ctx:
        dense = dense.as_in_context(ctx)
    _check_shape(dense.shape, shape)
    return dense.tostype(stype)


def _rsp_from_definition(data, indices, shape, ctx, dtype):
    dtype = _default_dtype(data, dtype)
    data = _host(data, dtype)
    indices = _host(indices, INDEX_DTYPE)
    if shape is None:
        if indices.shape[0] == 0:
            raise ValueError('invalid shape')
        shape = (int(indices[-1]) + 1,) + data.shape[1:]
    shape = tuple(int(d) for d in shape)
    if data.ndim != len(shape) or indices.ndim != 1 or int(np.prod(shape[1:])) == 0:
        raise ValueError('invalid shape')
    return _from_parts(RowSparseStorage, [data, indices], shape, ctx)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """Create a RowSparseNDArray from a shape, ``(data, indices)``, a dense array (NDArray,
    numpy, nested lists) or a RowSparseNDArray.

    Parameters
    ----------
    arg1 : tuple, array_like or RowSparseNDArray
    shape : tuple of int, optional
        Inferred from the arguments when not given.
    ctx : Context, optional
    dtype : str or numpy.dtype, optional

    Returns
    -------
    RowSparseNDArray
    """
    if isinstance(arg1, tuple):
        if len(arg1) < 2:
            raise ValueError('Unexpected length of input tuple: %d' % len(arg1))
        if len(arg1) > 2 or all(isinstance(d, integer_types) for d in arg1):
            _check_shape(arg1, shape)
            return empty('row_sparse', arg1, ctx=ctx, dtype=dtype)
        return _rsp_from_definition(arg1[0], arg1[1], shape, ctx, dtype)
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, CSRNDArray):
        raise ValueError('Unexpected input type: CSRNDArray')
    return _from_dense(arg1, 'row_sparse', shape, ctx, dtype)


def array(source_array, ctx=None, dtype=None):
    """A sparse array from a RowSparseNDArray, CSRNDArray or scipy sparse matrix (a copy).

    Parameters
    ----------
    source_array : RowSparseNDArray, CSRNDArray or scipy.sparse matrix
    ctx : Context, optional
        Defaults to the current context.
    dtype : str or numpy.dtype, optional
        Defaults to the source's dtype.
    """
    ctx = as_context(ctx)
    if isinstance(source_array, NDArray):
        if source_array.stype == 'default':
            raise MXNetError('use tostype to make a RowSparseNDArray or CSRNDArray from a dense '
                             'NDArray')
        dtype = _default_dtype(source_array, dtype)
        out = empty(source_array.stype, source_array.shape, ctx=ctx, dtype=dtype)
        out[:] = source_array
        return out
    if _is_scipy(source_array):
        csr = source_array.tocsr().sorted_indices()
        csr.sum_duplicates()
        return csr_matrix((csr.data, csr.indices, csr.indptr), shape=csr.shape,
                          dtype=_default_dtype(source_array, dtype), ctx=ctx)
    if isinstance(source_array, (np.ndarray, np.generic)):
        raise ValueError('Please use mx.nd.array to create an NDArray with source_array of type %s'
                         % type(source_array))
    raise ValueError('Unexpected source_array type: %s' % type(source_array))


# ---- arithmetic ------------------------------------------------------------------------------
def _binary(lhs, rhs, same_op, broadcast_op, scalar_op, reflected_op):
    """Array-array (elementwise when the shapes agree, else broadcasting) or array-scalar."""
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
        op = same_op if tuple(lhs.shape) == tuple(rhs.shape) else broadcast_op
        return invoke(op, (lhs, rhs), {})
    if isinstance(lhs, NDArray) and isinstance(rhs, numeric_types):
        return invoke(scalar_op, (lhs,), {'scalar': float(rhs)})
    if isinstance(rhs, NDArray) and isinstance(lhs, numeric_types):
        return invoke(reflected_op or scalar_op, (rhs,), {'scalar': float(lhs)})
    raise TypeError('expected NDArrays or numbers, got %s and %s'
                    % (type(lhs).__name__, type(rhs).__name__))


def add(lhs, rhs):
    """``lhs + rhs`` (elemwise_add for equal shapes, broadcast_add otherwise, _plus_scalar)."""
    return _binary(lhs, rhs, 'elemwise_add', 'broadcast_add', '_plus_scalar', None)


def subtract(lhs, rhs):
    """``lhs - rhs`` (elemwise_sub, broadcast_sub, _minus_scalar / _rminus_scalar)."""
    return _binary(lhs, rhs, 'elemwise_sub', 'broadcast_sub', '_minus_scalar', '_rminus_scalar')


def multiply(lhs, rhs):
    """``lhs * rhs`` (elemwise_mul, broadcast_mul, _mul_scalar)."""
    return _binary(lhs, rhs, 'elemwise_mul', 'broadcast_mul', '_mul_scalar', None)


def divide(lhs, rhs):
    """``lhs / rhs`` (elemwise_div, broadcast_div, _div_scalar / _rdiv_scalar)."""
    return _binary(lhs, rhs, 'elemwise_div', 'broadcast_div', '_div_scalar', '_rdiv_scalar')


def _dense_fn(name):
    from . import dispatch  # pylint: disable=import-outside-toplevel
    return dispatch.FUNCTIONS[name]


def _install_arithmetic(cls):
    """The Python operators of the sparse classes, as MXNet defines them."""
    cls.__add__ = add
    cls.__radd__ = lambda self, other: add(other, self)
    cls.__sub__ = subtract
    cls.__rsub__ = lambda self, other: subtract(other, self)
    cls.__mul__ = multiply
    cls.__rmul__ = lambda self, other: multiply(other, self)
    cls.__truediv__ = cls.__div__ = lambda self, other: _dense_fn('divide')(self, other)
    cls.__rtruediv__ = lambda self, other: _dense_fn('divide')(other, self)
    cls.__pow__ = lambda self, other: _dense_fn('power')(self, other)
    cls.__rpow__ = lambda self, other: _dense_fn('power')(other, self)
    cls.__neg__ = lambda self: invoke('negative', (self,), {})
    cls.__abs__ = lambda self: invoke('abs', (self,), {})
    for name, fn in (('eq', 'equal'), ('ne', 'not_equal'), ('gt', 'greater'),
                     ('ge', 'greater_equal'), ('lt', 'lesser'), ('le', 'lesser_equal')):
        setattr(cls, '__%s__' % name, (lambda f: lambda self, other: _dense_fn(f)(self, other))(fn))
    for name, fn in (('add', add), ('sub', subtract), ('mul', multiply), ('truediv', None),
                     ('div', None)):
        setattr(cls, '__i%s__' % name, _in_place(fn))
    cls.__hash__ = lambda self: id(self)


def _in_place(fn):
    def method(self, other):
        result = fn(self, other) if fn is not None else _dense_fn('divide')(self, other)
        result.copyto(self)
        return self
    return method


_install_arithmetic(BaseSparseNDArray)


def _install_ops(namespace):
    from ..ops.base import OPS  # pylint: disable=import-outside-toplevel
    for public, op_name in SPARSE_NAMESPACE.items():
        if public not in namespace and op_name in OPS:
            namespace[public] = make_function(op_name)


_install_ops(globals())

