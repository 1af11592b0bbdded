"""Storage rules of the elementwise operators (MXNet's FInferStorageType / FComputeEx for them).

* Zero-preserving unary operators (relu, square, sqrt, sin, abs, ...) map row_sparse to row_sparse
  and CSR to CSR, computing on the stored values only; the others (exp, cos, sigmoid, ...) have no
  rule and give dense results by fallback.
* elemwise_add / elemwise_sub / _maximum / _minimum / _hypot: rsp, rsp -> rsp and csr, csr ->
  csr on the union of the stored positions; elemwise_mul also keeps a sparse operand's layout
  against a dense one. Everything else is dense.
* Scalar operators: _mul_scalar / _div_scalar keep the storage type; _plus_scalar /
  _minus_scalar keep it when the scalar is 0; the comparisons keep it when ``op(0, scalar)`` is 0.
"""
import numpy as np

from ..sparse_storage import (CSRStorage, RowSparseStorage, INDEX_DTYPE, array_module,
                              csr_row_ids, rsp_align, rsp_gather, stype_of, to_dense)
from .sparse_registry import StorageRule, register_rule

SPARSE_STYPES = ('row_sparse', 'csr')

_ZERO_PRESERVING = ('relu', 'negative', 'abs', 'sign', 'round', 'rint', 'ceil', 'floor', 'trunc',
                    'fix', 'square', 'sqrt', 'cbrt', 'log1p', 'expm1', 'sin', 'tan', 'arcsin',
                    'arctan', 'degrees', 'radians', 'sinh', 'tanh', 'arcsinh', 'arctanh',
                    'identity', 'BlockGrad', 'make_loss', '_contrib_gradientmultiplier',
                    '_contrib_round_ste', '_contrib_sign_ste')


def with_values(storage, values):
    """A storage of the same layout as ``storage`` holding ``values`` (index arrays shared)."""
    if storage.stype == 'row_sparse':
        return RowSparseStorage(values, storage.indices, storage.shape)
    return CSRStorage(values, storage.indices, storage.indptr, storage.shape)


def csr_canonical(csr):
    """The same matrix with sorted column indices in every row (and no explicit duplicates)."""
    xp = csr.xp
    rows = csr_row_ids(csr)
    keys = rows * csr.shape[1] + csr.indices
    if keys.shape[0] < 2 or bool(xp.all(keys[1:] > keys[:-1])):
        return csr
    uniq, inverse = xp.unique(keys, return_inverse=True)
    values = xp.zeros(uniq.shape[0], dtype=csr.dtype)
    np_add_at(xp, values, inverse, csr.data)
    return csr_from_keys(xp, uniq, values, csr.shape)


def np_add_at(xp, target, index, values):
    """target[index] += values with repeated indices summed (numpy or cupy)."""
    if xp is np:
        np.add.at(target, index, values)
    else:
        xp.add.at(target, index, values)


def csr_from_keys(xp, keys, values, shape):
    """A CSR storage from sorted flat keys ``row * cols + col`` and their values."""
    rows = keys // shape[1]
    counts = xp.bincount(rows, minlength=shape[0]) if rows.shape[0] else \
        xp.zeros(shape[0], dtype=INDEX_DTYPE)
    indptr = xp.concatenate([xp.zeros(1, dtype=INDEX_DTYPE), xp.cumsum(counts).astype(INDEX_DTYPE)])
    return CSRStorage(values, (keys % shape[1]).astype(INDEX_DTYPE), indptr, shape)


def csr_align(a, b):
    """Union of the stored positions of two CSR storages and both values there."""
    xp = a.xp
    a, b = csr_canonical(a), csr_canonical(b)
    ka = csr_row_ids(a) * a.shape[1] + a.indices
    kb = csr_row_ids(b) * b.shape[1] + b.indices
    keys = xp.union1d(ka, kb).astype(INDEX_DTYPE)
    va = xp.zeros(keys.shape[0], dtype=a.dtype)
    vb = xp.zeros(keys.shape[0], dtype=b.dtype)
    if ka.shape[0]:
        va[xp.searchsorted(keys, ka)] = a.data
    if kb.shape[0]:
        vb[xp.searchsorted(keys, kb)] = b.data
    return keys, va, vb


def dense_at(dense, storage):
    """The values of a dense array at the stored positions of a sparse storage."""
    if storage.stype == 'row_sparse':
        return dense[storage.indices]
    return dense[csr_row_ids(storage), storage.indices]


def _sparse_in(stypes):
    return len(stypes) == 1 and stypes[0] in SPARSE_STYPES


# ---- unary -----------------------------------------------------------------------------------
@register_rule(*_ZERO_PRESERVING)
class ZeroPreservingUnary(StorageRule):
    """f(0) = 0: the result has the input's layout and f of the stored values."""

    def forward_stypes(self, op, in_stypes):
        return [in_stypes[0]] if _sparse_in(in_stypes) else None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        x = inputs[0]
        if getattr(op, 'fn', None) is None:
            # elementwise operators without a value function (make_loss, identity...): their own
            # forward applied to the stored values
            return [with_values(x, op.forward(octx, [x.data], aux)[0])]
        return [with_values(x, op.fn(octx.xp, x.data))]


@register_rule('zeros_like')
class ZerosLikeRule(StorageRule):
    """zeros_like keeps the storage type (an empty sparse array)."""

    def forward_stypes(self, op, in_stypes):
        return [in_stypes[0]] if _sparse_in(in_stypes) else None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        from ..sparse_storage import empty_storage  # pylint: disable=import-outside-toplevel
        x = inputs[0]
        return [empty_storage(octx.xp, x.stype, x.shape, x.dtype)]


@register_rule('clip')
class ClipRule(StorageRule):
    """clip keeps a sparse layout when 0 lies in [a_min, a_max]."""

    def forward_stypes(self, op, in_stypes):
        if _sparse_in(in_stypes) and op.p.a_min <= 0 <= op.p.a_max:
            return [in_stypes[0]]
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        x = inputs[0]
        return [with_values(x, op.forward(octx, [x.data], [])[0])]


# ---- binary ----------------------------------------------------------------------------------
def _binary_sparse(op, xp, a, b):
    """op.fn on the union of the stored positions of two storages of one type."""
    if a.stype == 'row_sparse':
        rows, da, db = rsp_align(a, b)
        return RowSparseStorage(op.fn(xp, da, db).astype(a.dtype, copy=False), rows, a.shape)
    keys, va, vb = csr_align(a, b)
    return csr_from_keys(xp, keys, op.fn(xp, va, vb).astype(a.dtype, copy=False), a.shape)


@register_rule('elemwise_add', 'elemwise_sub', '_maximum', '_minimum', '_hypot')
class SameLayoutBinary(StorageRule):
    """rsp, rsp -> rsp and csr, csr -> csr; mixed storage types are dense (fallback)."""

    def forward_stypes(self, op, in_stypes):
        if in_stypes[0] == in_stypes[1] and in_stypes[0] in SPARSE_STYPES:
            return [in_stypes[0]]
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        return [_binary_sparse(op, octx.xp, inputs[0], inputs[1])]

    def backward_stypes(self, op, in_stypes, out_stypes, ograd_stypes):
        if op.op_name in ('elemwise_add', 'elemwise_sub') and ograd_stypes[0] in SPARSE_STYPES:
            return [ograd_stypes[0]] * 2
        return None

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        dy = out_grads[0]
        other = with_values(dy, -dy.data) if op.op_name == 'elemwise_sub' else dy
        need = octx.need_grad or (True, True)
        return [dy if need[0] else None, other if need[1] else None]


@register_rule('elemwise_mul')
class ElemwiseMulRule(StorageRule):
    """Like :class:`SameLayoutBinary`, and a sparse operand's layout against a dense one."""

    def forward_stypes(self, op, in_stypes):
        a, b = in_stypes
        if a == b and a in SPARSE_STYPES:
            return [a]
        if {a, b} in ({'default', 'row_sparse'}, {'default', 'csr'}):
            return [a if a != 'default' else b]
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        a, b = inputs
        sa, sb = stype_of(a), stype_of(b)
        if sa == sb:
            return [_binary_sparse(op, octx.xp, a, b)]
        if sa == 'default':
            return [with_values(b, op.fn(octx.xp, dense_at(a, b), b.data).astype(b.dtype))]
        return [with_values(a, op.fn(octx.xp, a.data, dense_at(b, a)).astype(a.dtype))]


# ---- with a scalar ---------------------------------------------------------------------------
def _scalar_keeps(op):
    """Whether a scalar operator maps 0 to 0 for its scalar (MXNet's rule per operator)."""
    name = op.op_name
    if name in ('_mul_scalar', '_div_scalar'):
        return True
    if name in ('_plus_scalar', '_minus_scalar'):
        return op.p.scalar == 0
    with np.errstate(all='ignore'):
        return bool(op.fn(np, np.zeros(1, dtype=np.float64), np.float64(op.p.scalar))[0] == 0)


@register_rule('_mul_scalar', '_div_scalar', '_plus_scalar', '_minus_scalar', '_equal_scalar',
               '_not_equal_scalar', '_greater_scalar', '_greater_equal_scalar', '_lesser_scalar',
               '_lesser_equal_scalar')
class ScalarRule(StorageRule):
    """op(0, scalar) = 0: the result keeps the input's layout."""

    def forward_stypes(self, op, in_stypes):
        if _sparse_in(in_stypes) and _scalar_keeps(op):
            return [in_stypes[0]]
        return None

    def sparse_forward(self, op, octx, inputs, aux, out_stypes):
        x = inputs[0]
        values = op.fn(octx.xp, x.data, x.dtype.type(op.p.scalar))
        return [with_values(x, values.astype(x.dtype, copy=False))]

    def backward_stypes(self, op, in_stypes, out_stypes, ograd_stypes):
        if op.op_name in ('_mul_scalar', '_div_scalar') and ograd_stypes[0] in SPARSE_STYPES:
            return [ograd_stypes[0]]
        return None

    def sparse_backward(self, op, octx, out_grads, inputs, outputs, aux, grad_stypes):
        dy = out_grads[0]
        factor = op.p.scalar if op.op_name == '_mul_scalar' else 1.0 / op.p.scalar
        return [with_values(dy, (dy.data * factor).astype(dy.dtype, copy=False))]


def dense_values(value):
    """Dense array of a value that may be a storage (shared helper of the sparse rules)."""
    return to_dense(value)


def xp_of_value(value):
    """numpy or cupy for a dense array or storage."""
    return array_module(value.data if hasattr(value, 'stype') else value)


__all__ = ['with_values', 'csr_canonical', 'csr_from_keys', 'csr_align', 'dense_at',
           'np_add_at', 'rsp_gather', 'dense_values', 'xp_of_value']
