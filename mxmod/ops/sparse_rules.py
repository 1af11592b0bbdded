"""Storage rules of dense operators that MXNet also runs on sparse inputs: _square_sum on
row_sparse, slice / take / concat on CSR, and BatchNorm's refusal of sparse inputs with
``fix_gamma=True`` (everything else with sparse inputs falls back to dense)."""
from ..base import MXNetError
from ..sparse_storage import (CSRStorage, RowSparseStorage, INDEX_DTYPE, csr_row_ids, rsp_gather,
                              stype_of, to_dense)
from .shape import norm_axis
from .sparse_elemwise import csr_from_keys, csr_canonical
from .sparse_registry import StorageRule, register_rule


@register_rule('_square_sum')
class SquareSumRule(StorageRule):
    """Sum of squares of a row_sparse array over axis 0 (dense) or 1 (row_sparse with keepdims,
    else dense), reading only the stored rows; its gradient is row_sparse on those rows."""

    @staticmethod
    def _axis(op, in_stypes):
        axis = op.p.axis
        if in_stypes[0] != 'row_sparse' or not axis or len(axis) != 1 or op.p.exclude:
            return None
        return axis[0]

    def forward_stypes(self, op, in_stypes):
        axis = self._axis(op, in_stypes)
        if axis == 1 and op.p.keepdims:
            return ['row_sparse']
        if axis in (0, 1):
            return ['default']
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        xp, x = octx.xp, inputs[0]
        width = 1
        for d in x.shape[1:]:
            width *= d
        squares = (x.data * x.data).reshape(x.data.shape[0], width)
        if op.p.axis[0] == 0:
            out = squares.sum(axis=0).astype(x.dtype, copy=False)
            shape = (1, x.shape[1]) if op.p.keepdims else (x.shape[1],)
            return [out.reshape(shape)]
        per_row = squares.sum(axis=1).astype(x.dtype, copy=False)
        if op.p.keepdims:
            return [RowSparseStorage(per_row.reshape(-1, 1), x.indices, (x.shape[0], 1))]
        out = xp.zeros((x.shape[0],), dtype=x.dtype)
        out[x.indices] = per_row
        return [out]

    def backward_stypes(self, op, in_stypes, out_stypes, ograd_stypes):
        if in_stypes[0] == 'row_sparse' and ograd_stypes[0] in ('default', 'row_sparse'):
            return ['row_sparse']
        return None

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        x, dy = inputs[0], out_grads[0]
        if op.p.axis and op.p.axis[0] == 1 and stype_of(dy) == 'row_sparse':
            scale = rsp_gather(dy, x.indices).reshape(-1, 1)
        elif op.p.axis and op.p.axis[0] == 1:
            scale = to_dense(dy).reshape(-1)[x.indices].reshape(-1, 1)
        else:
            scale = to_dense(dy).reshape(1, -1)
        return [RowSparseStorage((2 * x.data * scale).astype(x.dtype, copy=False), x.indices,
                                 x.shape)]


def _csr_rows(csr, begin, end):
    """Rows [begin, end) of a CSR storage."""
    lo, hi = int(csr.indptr[begin]), int(csr.indptr[end])
    indptr = csr.indptr[begin:end + 1] - lo
    return CSRStorage(csr.data[lo:hi].copy(), csr.indices[lo:hi].copy(), indptr,
                      (end - begin, csr.shape[1]))


def _csr_cols(xp, csr, begin, end):
    """Columns [begin, end) of a CSR storage."""
    canon = csr_canonical(csr)
    keep = (canon.indices >= begin) & (canon.indices < end)
    rows = csr_row_ids(canon)[keep]
    keys = rows * (end - begin) + (canon.indices[keep] - begin)
    return csr_from_keys(xp, keys.astype(INDEX_DTYPE), canon.data[keep], (csr.shape[0], end - begin))


@register_rule('slice')
class SliceRule(StorageRule):
    """slice of a CSR matrix with unit steps stays CSR."""

    def forward_stypes(self, op, in_stypes):
        if in_stypes[0] == 'csr' and all(s in (None, 1) for s in (op.p.step or ())):
            return ['csr']
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        csr = inputs[0]
        bounds = op._slices(csr.shape)
        rows = bounds[0].indices(csr.shape[0])
        out = _csr_rows(csr, rows[0], max(rows[0], rows[1]))
        if len(bounds) > 1:
            cols = bounds[1].indices(csr.shape[1])
            out = _csr_cols(octx.xp, out, cols[0], max(cols[0], cols[1]))
        return [out]


@register_rule('take')
class TakeRule(StorageRule):
    """take of rows of a CSR matrix (axis 0) gives a CSR matrix."""

    def forward_stypes(self, op, in_stypes):
        if in_stypes[0] == 'csr' and in_stypes[1] == 'default' and op.p.axis == 0:
            return ['csr']
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        xp = octx.xp
        csr, idx = inputs
        rows = op._index(xp, idx, csr.shape[0]).reshape(-1).astype(INDEX_DTYPE)
        counts = (csr.indptr[1:] - csr.indptr[:-1])[rows]
        indptr = xp.concatenate([xp.zeros(1, dtype=INDEX_DTYPE), xp.cumsum(counts)])
        starts = csr.indptr[rows]
        offsets = xp.arange(int(indptr[-1]), dtype=INDEX_DTYPE) - xp.repeat(indptr[:-1], counts)
        pick = xp.repeat(starts, counts) + offsets
        return [CSRStorage(csr.data[pick], csr.indices[pick], indptr.astype(INDEX_DTYPE),
                           (rows.shape[0], csr.shape[1]))]


@register_rule('Concat')
class ConcatRule(StorageRule):
    """Concat of CSR matrices along dim 0 gives a CSR matrix."""

    def forward_stypes(self, op, in_stypes):
        if all(s == 'csr' for s in in_stypes) and norm_axis('Concat', op.p.dim, 2, 'dim') == 0:
            return ['csr']
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        xp = octx.xp
        data, indices, indptrs, offset = [], [], [xp.zeros(1, dtype=INDEX_DTYPE)], 0
        for csr in inputs:
            data.append(csr.data)
            indices.append(csr.indices)
            indptrs.append(csr.indptr[1:] + offset)
            offset += int(csr.indptr[-1])
        rows = sum(c.shape[0] for c in inputs)
        return [CSRStorage(xp.concatenate(data), xp.concatenate(indices),
                           xp.concatenate(indptrs).astype(INDEX_DTYPE),
                           (rows, inputs[0].shape[1]))]


@register_rule('BatchNorm')
class BatchNormRule(StorageRule):
    """BatchNorm runs on sparse inputs by dense fallback, except with ``fix_gamma=True``, which
    MXNet refuses for sparse arrays."""

    def forward_stypes(self, op, in_stypes):
        if op.p.fix_gamma and any(s != 'default' for s in in_stypes):
            raise MXNetError('BatchNorm: fix_gamma=True is not supported for sparse ndarrays '
                             '(inputs have storage types %s)' % (in_stypes,))
        return None
