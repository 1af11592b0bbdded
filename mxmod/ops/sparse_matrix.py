"""Sparse matrix products and sparse gradients: the storage rules of ``dot``, ``Embedding`` /
``_contrib_SparseEmbedding`` and ``add_n`` (MXNet's FInferStorageType and FComputeEx for them).

dot (MXNet 1.9.1's table, CPU): csr x dns/rsp -> dns; csr.T x dns/rsp -> rsp (or dns with
``forward_stype='default'``); dns x csr -> csr (dns with forward_stype 'default' or transpose_b);
anything else is a dense product cast to ``forward_stype``. Its backward gives the rhs of
``dot(csr, x)`` a row_sparse gradient over the columns the CSR matrix uses."""
import numpy as np

from ..base import MXNetError
from ..context import scipy_module
from ..sparse_storage import RowSparseStorage, INDEX_DTYPE, rsp_gather, stype_of, to_dense
from .sparse_elemwise import csr_canonical
from .sparse_registry import StorageRule, register_rule

__all__ = ['scipy_csr', 'csr_matmul', 'csr_t_matmul_rsp', 'sum_rows', 'rows_of']


def scipy_csr(csr, cols=None):
    """A scipy (cupyx on GPU) csr_matrix sharing the storage's arrays."""
    sp = scipy_module(csr.xp, 'sparse')
    shape = (csr.shape[0], cols if cols is not None else csr.shape[1])
    return sp.csr_matrix((csr.data, csr.indices, csr.indptr), shape=shape)


def _rhs_rows(rhs, rows):
    """Dense values of ``rows`` of a dense or row_sparse right operand."""
    if stype_of(rhs) == 'row_sparse':
        return rsp_gather(rhs, rows)
    return rhs[rows]


def csr_matmul(csr, rhs):
    """dot(csr, rhs) as a dense array; rhs dense or row_sparse (only the rows used are read)."""
    xp = csr.xp
    if stype_of(rhs) == 'row_sparse' and not rhs.is_full:
        used, inverse = xp.unique(csr.indices, return_inverse=True)
        compact = scipy_csr(type(csr)(csr.data, inverse.astype(INDEX_DTYPE), csr.indptr,
                                      (csr.shape[0], used.shape[0])))
        dense_rows = _rhs_rows(rhs, used.astype(INDEX_DTYPE))
    else:
        compact = scipy_csr(csr)
        dense_rows = rhs.data if stype_of(rhs) == 'row_sparse' else rhs
    matrix = dense_rows.reshape(dense_rows.shape[0], -1)
    out = xp.asarray(compact @ matrix).astype(csr.dtype, copy=False)
    return out.reshape((csr.shape[0],) + tuple(rhs.shape[1:]))


def csr_t_matmul_rsp(csr, rhs):
    """dot(csr.T, rhs) as a row_sparse storage over the columns ``csr`` uses."""
    xp = csr.xp
    rhs = to_dense(rhs)
    used, inverse = xp.unique(csr.indices, return_inverse=True)
    compact = scipy_csr(type(csr)(csr.data, inverse.astype(INDEX_DTYPE), csr.indptr,
                                  (csr.shape[0], used.shape[0])))
    matrix = rhs.reshape(rhs.shape[0], -1)
    values = xp.asarray(compact.T @ matrix).astype(csr.dtype, copy=False)
    values = values.reshape((used.shape[0],) + tuple(rhs.shape[1:]))
    return RowSparseStorage(values, used.astype(INDEX_DTYPE), (csr.shape[1],) + rhs.shape[1:])


def _dns_csr(lhs, csr, transpose_b):
    """dot(dns, csr) or dot(dns, csr.T) as a dense array."""
    xp = csr.xp
    matrix = scipy_csr(csr)
    if transpose_b:
        return xp.asarray((matrix @ lhs.T).T).astype(lhs.dtype, copy=False)
    return xp.asarray((matrix.T @ lhs.T).T).astype(lhs.dtype, copy=False)


@register_rule('dot')
class DotRule(StorageRule):
    """Storage types and sparse kernels of dot (see the module docstring)."""

    def forward_stypes(self, op, in_stypes):
        lhs, rhs = in_stypes
        ta, tb, hint = op.p.transpose_a, op.p.transpose_b, op.p.forward_stype
        rhs_ok = rhs in ('default', 'row_sparse')
        if lhs == rhs == 'default':
            return [hint or 'default']
        if lhs == 'csr' and ta and not tb and rhs_ok and hint in (None, 'row_sparse', 'default'):
            return [hint or 'row_sparse']
        if lhs == 'csr' and not ta and not tb and rhs_ok and hint in (None, 'default'):
            return ['default']
        if lhs == 'default' and rhs == 'csr' and not ta:
            if (hint or 'csr') == 'csr' and not tb:
                return ['csr']
            if hint == 'default' or (hint is None and tb):
                return ['default']
        return [hint or 'default']

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        lhs, rhs = inputs
        sl, sr = stype_of(lhs), stype_of(rhs)
        if sl == 'csr' and not op.p.transpose_b and sr in ('default', 'row_sparse'):
            if op.p.transpose_a:
                return [csr_t_matmul_rsp(csr_canonical(lhs), rhs)]
            return [csr_matmul(lhs, rhs)]
        if sl == 'default' and sr == 'csr' and not op.p.transpose_a and lhs.ndim == 2:
            return [_dns_csr(lhs, rhs, op.p.transpose_b)]
        octx.out = None
        return op.forward(octx, [to_dense(lhs), to_dense(rhs)], [])

    def backward_stypes(self, op, in_stypes, out_stypes, ograd_stypes):
        lhs, rhs = in_stypes[:2]
        ograd = ograd_stypes[0]
        no_t = not op.p.transpose_a and not op.p.transpose_b
        if lhs == 'csr' and ograd in ('default', 'row_sparse'):
            if no_t:
                return ['default', 'row_sparse']
            if op.p.transpose_a and not op.p.transpose_b:
                return ['default', 'default']
        if lhs == 'default' and rhs == 'csr' and ograd == 'default' and not op.p.transpose_a:
            return ['default', 'default']
        return None

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        lhs, rhs = inputs
        dy = to_dense(out_grads[0])
        need = octx.need_grad or (True, True)
        if stype_of(lhs) == 'csr':
            canon = csr_canonical(lhs)
            if op.p.transpose_a:
                rhs_grad = csr_matmul(canon, dy) if need[1] else None
                lhs_grad = (to_dense(rhs) @ dy.T).T if need[0] else None
            else:
                rhs_grad = csr_t_matmul_rsp(canon, dy) if need[1] else None
                lhs_grad = dy @ to_dense(rhs).T if need[0] else None
            return [lhs_grad, rhs_grad]
        lhs_grad = _dns_csr(dy, rhs, not op.p.transpose_b) if need[0] else None
        rhs_grad = None
        if need[1]:
            full = lhs.T @ dy
            rhs_grad = full.T if op.p.transpose_b else full
        return [lhs_grad, rhs_grad]


# ---- embedding -------------------------------------------------------------------------------
def rows_of(xp, indices, nrows):
    """Clipped int64 row numbers of the (float) indices of an embedding lookup."""
    return xp.clip(indices, 0, nrows - 1).astype(np.int64).reshape(-1)


def sum_rows(xp, rows, values):
    """Sum the rows of ``values`` (k, d...) that share a row number: (unique sorted rows, sums)."""
    order = xp.argsort(rows, kind='stable')
    ordered = rows[order]
    if not ordered.shape[0]:
        return ordered.astype(INDEX_DTYPE), values[:0]
    starts = xp.concatenate([xp.zeros(1, dtype=bool), ordered[1:] != ordered[:-1]])
    first = xp.nonzero(starts)[0]
    first = xp.concatenate([xp.zeros(1, dtype=first.dtype), first])
    uniq = ordered[first]
    gathered = values[order]
    if xp is np:
        sums = np.add.reduceat(gathered, first, axis=0)
    else:
        group = xp.cumsum(starts.astype(INDEX_DTYPE))
        sums = xp.zeros((uniq.shape[0],) + values.shape[1:], dtype=values.dtype)
        xp.add.at(sums, group, gathered)
    return uniq.astype(INDEX_DTYPE), sums.astype(values.dtype, copy=False)


@register_rule('Embedding', '_contrib_SparseEmbedding')
class EmbeddingRule(StorageRule):
    """Lookups in a row_sparse weight, and the row_sparse weight gradient of ``sparse_grad=True``
    (always for ``_contrib_SparseEmbedding``): only the looked-up rows, summed per row."""

    @staticmethod
    def _sparse_grad(op):
        return op.p.sparse_grad or getattr(op, '_sparse_always', False)

    def forward_stypes(self, op, in_stypes):
        if in_stypes[0] == 'default' and in_stypes[1] in ('default', 'row_sparse'):
            return ['default']
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        data, weight = inputs
        rows = rows_of(octx.xp, data, op.p.input_dim)
        values = rsp_gather(weight, rows) if stype_of(weight) == 'row_sparse' else weight[rows]
        return [values.reshape(tuple(data.shape) + (op.p.output_dim,))]

    def backward_stypes(self, op, in_stypes, out_stypes, ograd_stypes):
        if in_stypes[0] != 'default' or in_stypes[1] not in ('default', 'row_sparse'):
            return None
        if self._sparse_grad(op) and ograd_stypes[0] == 'default':
            return ['default', 'row_sparse']
        if in_stypes[1] == 'default' and ograd_stypes[0] == 'default':
            return ['default', 'default']
        return None

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        need = octx.need_grad or (False, True)
        if need[0]:
            raise MXNetError("Embedding layer doesn't support calculate data gradient "
                             "(bind the data with grad_req='null')")
        if not need[1]:
            return [None, None]
        xp = octx.xp
        data, weight = inputs
        rows = rows_of(xp, data, op.p.input_dim)
        dy = out_grads[0].reshape(rows.shape[0], op.p.output_dim)
        uniq, sums = sum_rows(xp, rows, dy)
        shape = (op.p.input_dim, op.p.output_dim)
        return [None, RowSparseStorage(sums.astype(weight.dtype, copy=False), uniq, shape)]


# ---- add_n -----------------------------------------------------------------------------------
@register_rule('add_n')
class AddNRule(StorageRule):
    """add_n: all row_sparse -> row_sparse; (dns, csr, dns) or more than four inputs with a dense
    one -> dense; its gradient is the output gradient for every input."""

    def forward_stypes(self, op, in_stypes):
        if all(s == 'row_sparse' for s in in_stypes):
            return ['row_sparse']
        if in_stypes == ['default', 'csr', 'default'] or \
                (len(in_stypes) > 4 and 'default' in in_stypes):
            return ['default']
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        if out_stypes[0] == 'row_sparse':
            xp = octx.xp
            rows = xp.unique(xp.concatenate([x.indices for x in inputs])).astype(INDEX_DTYPE)
            total = rsp_gather(inputs[0], rows)
            for x in inputs[1:]:
                total += rsp_gather(x, rows)
            return [RowSparseStorage(total, rows, inputs[0].shape)]
        total = to_dense(inputs[0]).copy()
        for x in inputs[1:]:
            total = total + to_dense(x)
        return [total]

    def backward_stypes(self, op, in_stypes, out_stypes, ograd_stypes):
        return [ograd_stypes[0]] * op.p.num_args

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        return [out_grads[0]] * op.p.num_args

