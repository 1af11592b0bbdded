"""Row_sparse values between processes: (row ids, row values) on the wire instead of the table.

``dist_sync`` all-gathers each worker's rows (variable length: the counts first, then every
worker's row ids and values in one ``Allgatherv`` of bytes) and every worker sums them in rank
order, so all replicas get bit-identical sums. The parameter servers of ``dist_async`` receive
pushes and answer pulls as (row ids, values) too, for the rows of their shard only. Everything
here costs in proportion to the rows that travel, never to the table."""
import numpy as np

from ..ops.sparse_matrix import sum_rows as sum_by_row
from ..sparse_storage import INDEX_DTYPE, RowSparseStorage

__all__ = ['host_rows', 'pack_rows', 'unpack_rows', 'pack_counted_rows', 'unpack_counted_rows',
           'sum_rows', 'allgather_rows', 'row_bytes', 'shard_bounds', 'split_rows', 'COUNT_BYTES']

COUNT_BYTES = 8     # an int64 per row: how many updates a pushed row holds


def _host(arr):
    return arr if isinstance(arr, np.ndarray) else arr.get()


def host_rows(storage):
    """(row ids int64, values) of a row_sparse storage as C-contiguous host arrays."""
    ids = np.ascontiguousarray(_host(storage.indices), dtype=INDEX_DTYPE)
    return ids, np.ascontiguousarray(_host(storage.data))


def row_bytes(shape, dtype):
    """Bytes one row of a table of ``shape`` takes on the wire, row id included."""
    per_row = int(np.prod(shape[1:], dtype=np.int64)) * np.dtype(dtype).itemsize
    return per_row + np.dtype(INDEX_DTYPE).itemsize


def pack_rows(ids, values):
    """One uint8 buffer: the row ids then the row values."""
    out = np.empty(ids.nbytes + values.nbytes, dtype=np.uint8)
    out[:ids.nbytes] = ids.view(np.uint8)
    out[ids.nbytes:] = values.reshape(-1).view(np.uint8)
    return out


def pack_counted_rows(ids, counts, values):
    """One uint8 buffer: the row ids, how many updates each row holds, then the row values."""
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    out = np.empty(ids.nbytes + counts.nbytes + values.nbytes, dtype=np.uint8)
    out[:ids.nbytes] = ids.view(np.uint8)
    out[ids.nbytes:ids.nbytes + counts.nbytes] = counts.view(np.uint8)
    out[ids.nbytes + counts.nbytes:] = values.reshape(-1).view(np.uint8)
    return out


def unpack_counted_rows(buf, nrows, shape, dtype):
    """Inverse of :func:`pack_counted_rows`: (ids, counts, values), views into ``buf``."""
    id_bytes = nrows * np.dtype(INDEX_DTYPE).itemsize
    ids = buf[:id_bytes].view(INDEX_DTYPE)
    counts = buf[id_bytes:id_bytes + nrows * COUNT_BYTES].view(np.int64)
    values = buf[id_bytes + nrows * COUNT_BYTES:].view(np.dtype(dtype)).reshape(
        (nrows,) + tuple(shape[1:]))
    return ids, counts, values


def unpack_rows(buf, nrows, shape, dtype):
    """Inverse of :func:`pack_rows` for ``nrows`` rows of a table of ``shape`` (views into buf)."""
    id_bytes = nrows * np.dtype(INDEX_DTYPE).itemsize
    ids = buf[:id_bytes].view(INDEX_DTYPE)
    values = buf[id_bytes:].view(np.dtype(dtype)).reshape((nrows,) + tuple(shape[1:]))
    return ids, values


def sum_rows(parts, shape, dtype):
    """Sum of ``[(ids, values), ...]`` (each with unique ids) as a RowSparseStorage over the union
    of their rows; parts are added in the order given, so every process that sums the same parts
    gets the same bits."""
    parts = [(ids, vals) for ids, vals in parts if ids.shape[0]]
    if not parts:
        return RowSparseStorage(np.zeros((0,) + tuple(shape[1:]), dtype=dtype),
                                np.zeros(0, dtype=INDEX_DTYPE), shape)
    # the stable sort in sum_by_row keeps each row's contributions in part order
    uniq, total = sum_by_row(np, np.concatenate([p[0] for p in parts]),
                             np.concatenate([p[1] for p in parts]))
    return RowSparseStorage(total.astype(dtype, copy=False), uniq, shape)


def allgather_rows(coll, ids, values, shape, dtype):
    """All-gather every worker's (ids, values) of one table over the watched communicator
    ``coll``; returns (list of every worker's (ids, values) in rank order, bytes this worker
    contributed, bytes it received from the others)."""
    size = coll.Get_size()
    counts = np.empty(size, dtype=np.int64)
    coll.Allgather(np.array([ids.shape[0]], dtype=np.int64), counts)
    per_row = row_bytes(shape, dtype)
    nbytes = counts * per_row
    recv = np.empty(int(nbytes.sum()), dtype=np.uint8)
    displs = np.concatenate(([0], np.cumsum(nbytes)[:-1]))
    coll.Allgatherv(pack_rows(ids, values), [recv, (nbytes.tolist(), displs.tolist())])
    parts = [unpack_rows(recv[int(d):int(d + n)], int(c), shape, dtype)
             for d, n, c in zip(displs, nbytes, counts)]
    mine = int(nbytes[coll.Get_rank()])
    return parts, mine, int(nbytes.sum()) - mine


def shard_bounds(rows, num_shards):
    """First row of every shard and the end: shard ``s`` holds rows [b[s], b[s+1]) (contiguous
    ranges of near-equal size, the first shards one row longer)."""
    base, extra = divmod(int(rows), int(num_shards))
    sizes = [base + (1 if s < extra else 0) for s in range(num_shards)]
    return np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)


def split_rows(ids, bounds):
    """Positions in the sorted ``ids`` where each shard's rows start and end."""
    return np.searchsorted(ids, bounds)
