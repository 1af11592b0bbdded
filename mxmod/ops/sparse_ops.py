"""Operators that exist for sparse arrays: cast_storage, _sparse_retain, _contrib_SparseEmbedding,
_contrib_getnnz, _contrib_quadratic and the scatter operators (_scatter_elemwise_div,
_scatter_plus_scalar, _scatter_minus_scalar).

Each class computes on storages itself (it is its own :class:`StorageRule`)."""
import numpy as np

from ..base import MXNetError
from ..sparse_storage import (RowSparseStorage, STYPES, INDEX_DTYPE, rsp_positions, stype_of,
                              sorted_unique,
                              to_dense, to_stype)
from .base import Operator, Param, register
from .elemwise import Unary
from .embedding import Embedding
from .sparse_elemwise import dense_at, with_values
from .sparse_registry import StorageRule

_SPARSE = ('row_sparse', 'csr')


class _SelfRule(Operator, StorageRule):
    """An operator that is its own storage rule; ``forward`` / ``backward`` (dense inputs) run
    the same code as the sparse entry points."""

    def forward(self, octx, inputs, aux):
        return self.sparse_forward(self, octx, inputs, aux, None)

    def backward(self, octx, out_grads, inputs, outputs, aux):
        return self.sparse_backward(self, octx, out_grads, inputs, outputs, aux, None)


@register
class CastStorage(_SelfRule):
    """The input in storage type ``stype``; the gradient keeps the output gradient's type."""
    op_name = 'cast_storage'
    params = {'stype': Param('str', None, STYPES)}
    backward_uses = ()

    def forward_stypes(self, op, in_stypes):
        if {in_stypes[0], self.p.stype} == {'row_sparse', 'csr'}:
            raise MXNetError('cast_storage from %s to %s is not supported'
                             % (in_stypes[0], self.p.stype))
        return [self.p.stype]

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        value = to_stype(inputs[0], self.p.stype)
        return [value.copy() if value is inputs[0] else value]

    def backward_stypes(self, op, in_stypes, out_stypes, ograd_stypes):
        return [ograd_stypes[0]]

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        return [out_grads[0]]


def _unique_rows(xp, indices, nrows):
    flat = indices.reshape(-1).astype(INDEX_DTYPE)
    # row ids that already increase (e.g. every row, for a pull before evaluation) need no sort
    ordered = flat.shape[0] < 2 or bool((flat[1:] > flat[:-1]).all())
    rows = flat if ordered else sorted_unique(xp, flat)
    if rows.shape[0] and (int(rows[0]) < 0 or int(rows[-1]) >= nrows):
        raise MXNetError('_sparse_retain: row indices must lie in [0, %d), got %s..%s'
                         % (nrows, int(rows[0]), int(rows[-1])))
    return rows


def retain_rows(xp, value, indices):
    """The rows ``indices`` of a row_sparse (or dense) value as a row_sparse storage holding
    every requested row (zeros where ``value`` has none)."""
    rows = _unique_rows(xp, indices, value.shape[0])
    if stype_of(value) == 'row_sparse':
        pos, found = rsp_positions(value, rows)
        data = xp.zeros((rows.shape[0],) + tuple(value.shape[1:]), dtype=value.dtype)
        if rows.shape[0] and value.indices.shape[0]:
            data[found] = value.data[pos[found]]
    else:
        data = to_dense(value)[rows]
    return RowSparseStorage(data, rows, value.shape)


@register
class SparseRetain(_SelfRule):
    """The rows ``indices`` of a row_sparse array (``mx.nd.sparse.retain``)."""
    op_name = '_sparse_retain'
    arguments = ('data', 'indices')
    backward_uses = ('inputs',)

    def infer_shape(self, in_shapes, out_shapes):
        return [in_shapes[0], in_shapes[1]], [in_shapes[0] or out_shapes[0]]

    def infer_type(self, in_types, out_types):
        if in_types[1] is None:     # MXNet raises (see indexing.typed_like_first)
            return list(in_types), list(out_types)
        return [in_types[0] or out_types[0], in_types[1]], [in_types[0] or out_types[0]]

    def forward_stypes(self, op, in_stypes):
        if in_stypes[0] != 'row_sparse' or in_stypes[1] != 'default':
            raise MXNetError('_sparse_retain: data must be row_sparse and indices dense, got %s'
                             % (in_stypes[:2],))
        return ['row_sparse']

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        return [retain_rows(octx.xp, inputs[0], inputs[1])]

    def backward_stypes(self, op, in_stypes, out_stypes, ograd_stypes):
        return ['row_sparse', 'default']

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        return [retain_rows(octx.xp, out_grads[0], inputs[1]), None]


@register
class SparseEmbedding(Embedding):
    """``_contrib_SparseEmbedding``: an Embedding whose weight gradient is always row_sparse."""
    op_name = '_contrib_SparseEmbedding'
    params = dict(Embedding.params, deterministic=Param('bool', False))
    params.pop('sparse_grad')
    _sparse_always = True

    def setup(self):
        self.p.sparse_grad = True


@register
class GetNNZ(_SelfRule):
    """Number of stored values of a CSR matrix (in all, or per column / row for axis 0 / 1)."""
    op_name = '_contrib_getnnz'
    params = {'axis': Param('int?', None)}
    differentiable = False

    def infer_shape(self, in_shapes, out_shapes):
        data = in_shapes[0]
        if data is None:
            return in_shapes, out_shapes
        out = (1,) if self.p.axis is None else (data[1 - self.p.axis],)
        return in_shapes, [out]

    def infer_type(self, in_types, out_types):
        return list(in_types), ['int64']

    def forward_stypes(self, op, in_stypes):
        if in_stypes[0] != 'csr':
            raise MXNetError('getnnz: the input must be csr, got %s' % in_stypes[0])
        return ['default']

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        csr = inputs[0]
        xp = octx.xp
        if self.p.axis is None:
            return [xp.asarray([csr.data.shape[0]], dtype=np.int64)]
        if self.p.axis == 1:
            return [xp.diff(csr.indptr).astype(np.int64)]
        if self.p.axis == 0:
            return [xp.bincount(csr.indices, minlength=csr.shape[1]).astype(np.int64)]
        raise MXNetError('getnnz: axis must be None, 0 or 1, got %s' % self.p.axis)


@register
class Quadratic(Unary, StorageRule):
    """``a * x**2 + b * x + c``; a CSR or row_sparse input keeps its layout when c is 0."""
    op_name = '_contrib_quadratic'
    params = {'a': Param('float', 0.0), 'b': Param('float', 0.0), 'c': Param('float', 0.0)}
    backward_uses = ('inputs',)

    def fn(self, xp, x):    # pylint: disable=arguments-differ
        t = x.dtype.type
        return (t(self.p.a) * x * x + t(self.p.b) * x + t(self.p.c)).astype(x.dtype, copy=False)

    def grad(self, xp, x, y, dy):   # pylint: disable=arguments-differ
        return dy * (2 * x.dtype.type(self.p.a) * x + x.dtype.type(self.p.b))

    def forward_stypes(self, op, in_stypes):
        if in_stypes[0] in _SPARSE and self.p.c == 0:
            return [in_stypes[0]]
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        x = inputs[0]
        return [with_values(x, self.fn(octx.xp, x.data))]


# ---- scatter operators: results only where the left operand stores values --------------------
class _Scatter(_SelfRule):
    """``f(lhs, ...)`` computed only at the stored positions of a sparse ``lhs``."""
    mirror_cheap = True

    def forward_stypes(self, op, in_stypes):
        return [in_stypes[0]]

    def _apply(self, xp, a, b):
        raise NotImplementedError

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        lhs = inputs[0]
        rhs = inputs[1] if len(inputs) > 1 else None
        if stype_of(lhs) == 'default':
            return [self._apply(octx.xp, lhs, None if rhs is None else to_dense(rhs))]
        other = None if rhs is None else dense_at(to_dense(rhs), lhs)
        values = self._apply(octx.xp, lhs.data, other)
        return [with_values(lhs, values.astype(lhs.dtype, copy=False))]

    def backward_stypes(self, op, in_stypes, out_stypes, ograd_stypes):
        return ['default'] * len(self.list_arguments())


@register
class ScatterElemwiseDiv(_Scatter):
    """``lhs / rhs`` at the stored positions of ``lhs``."""
    op_name = '_scatter_elemwise_div'
    arguments = ('lhs', 'rhs')
    backward_uses = ('inputs',)

    def _apply(self, xp, a, b):
        return a / b

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        a, b = to_dense(inputs[0]), to_dense(inputs[1])
        dy = to_dense(out_grads[0])
        return [dy / b, -dy * a / (b * b)]


class _ScatterScalar(_Scatter):
    params = {'scalar': Param('float', 1.0)}
    backward_uses = ()
    sign = 1.0

    def _apply(self, xp, a, b):
        return a + a.dtype.type(self.sign * self.p.scalar)

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        return [to_dense(out_grads[0])]


@register
class ScatterPlusScalar(_ScatterScalar):
    """``lhs + scalar`` at the stored positions of ``lhs``."""
    op_name = '_scatter_plus_scalar'


@register
class ScatterMinusScalar(_ScatterScalar):
    """``lhs - scalar`` at the stored positions of ``lhs``."""
    op_name = '_scatter_minus_scalar'
    sign = -1.0
