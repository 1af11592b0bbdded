"""Row_sparse values in the key-value stores: summing per-device row_sparse gradients over the
union of their rows, and answering ``row_sparse_pull`` with only the requested rows (MXNet's
``_sparse_retain``). Every operation costs in proportion to the rows involved, not the table."""
from ..context import device_scope
from ..ndarray.ndarray import NDArray, from_xp
from ..ndarray.sparse_ndarray import storage_on
from ..ops.sparse_ops import retain_rows
from ..sparse_storage import add_values

__all__ = ['is_row_sparse', 'merge_rows', 'retain', 'stored_copy']


def is_row_sparse(arr):
    """Whether an NDArray is row_sparse."""
    return getattr(arr, 'stype', 'default') == 'row_sparse'


def stored_copy(value, ctx):
    """The store's own copy of an initial value on ``ctx`` (row_sparse stays row_sparse; CSR
    values are kept dense)."""
    if value.stype == 'csr':
        value = value.tostype('default')
    return value.copyto(ctx)


def merge_rows(values, ctx):
    """The sum of row_sparse NDArrays on ``ctx`` (rows: the union of theirs)."""
    with device_scope(ctx):
        total = None
        for val in values:
            storage = val._data if val.context == ctx else storage_on(val._data, ctx)
            total = storage.copy() if total is None else add_values(total, storage)
    return from_xp(total, ctx)


def retain(stored, row_ids, ctx):
    """Rows ``row_ids`` of ``stored`` (row_sparse or dense) as a row_sparse NDArray on ``ctx``
    holding exactly those rows."""
    # the row ids go to the stored value's device (they may live on another GPU or on a CPU)
    ids = row_ids.as_in_context(stored.context)._data if isinstance(row_ids, NDArray) \
        else row_ids
    xp = stored.context.xp
    with device_scope(stored.context):
        storage = retain_rows(xp, stored._data, xp.asarray(ids))
    if ctx != stored.context:
        storage = storage_on(storage, ctx)
    return from_xp(storage, ctx)
