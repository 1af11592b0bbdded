"""Row_sparse values in dist_sync / dist_device_sync (2+ workers), checked against numpy.

Usage: sparse_sync.py KVSTORE
Every worker builds every worker's gradients from the same seeds, so each can compute the
expected sums itself. Checks: rank 0's row_sparse init wins; pushes of rows that differ between
workers (one worker pushing no row at all) sum over the union of rows; a row_sparse and a dense
key in one push; lazy SGD with momentum on the store touches only pushed rows; the byte counters
equal the rows that travelled. Under ``mxmod.launch -s S`` the tables live on the servers
(hybrid) and the same values must come out. Prints 'OK <kvstore> <rank>'."""
import os
import sys

import numpy as np

import mxmod as mx

ROWS, DIM = 1000, 4
# launched with server ranks: the row_sparse tables live on the servers (hybrid dist_sync)
HYBRID = int(os.environ.get('MXMOD_NUM_SERVERS', '0') or 0) > 0


def grad_rows(rank, step):
    """Rows and values worker ``rank`` pushes at ``step`` (worker 1 pushes none at step 1)."""
    rs = np.random.RandomState(100 * step + rank)
    if rank == 1 and step == 1:
        return np.zeros(0, np.int64), np.zeros((0, DIM), np.float32)
    ids = np.unique(rs.randint(0, ROWS, size=20 + 5 * rank))
    return ids, rs.randn(len(ids), DIM).astype(np.float32)


def rsp(ids, vals, ctx):
    return mx.nd.sparse.row_sparse_array((vals, ids), shape=(ROWS, DIM), ctx=ctx)


def dense_sum(step, nworkers):
    total = np.zeros((ROWS, DIM), np.float32)
    for r in range(nworkers):
        ids, vals = grad_rows(r, step)
        total[ids] += vals
    return total


def pushed(rank, step, ndev):
    """This worker's per-device gradients (the rows split between its devices)."""
    ids, vals = grad_rows(rank, step)
    parts = np.array_split(np.arange(len(ids)), ndev)
    return [rsp(ids[p], vals[p], mx.cpu(d)) for d, p in enumerate(parts)]


def pull_all(kv, key):
    out = mx.nd.sparse.zeros('row_sparse', (ROWS, DIM))
    kv.row_sparse_pull(key, out=out, row_ids=mx.nd.arange(ROWS, dtype='int64'))
    return out.tostype('default').asnumpy()


def main(kvtype):
    kv = mx.kv.create(kvtype)
    rank, n = kv.rank, kv.num_workers
    ndev = 2 if 'device' in kvtype else 1
    # init: rank 0's value everywhere (a row_sparse table of 3 rows)
    init = rsp(np.array([2, 5, 9]), np.full((3, DIM), rank + 1, np.float32), mx.cpu())
    kv.init('emb', init)
    kv.init('dense', mx.nd.ones((3, 2)) * (rank + 1))
    got = pull_all(kv, 'emb')
    want = np.zeros((ROWS, DIM), np.float32)
    want[[2, 5, 9]] = 1
    np.testing.assert_array_equal(got, want)

    # no updater: the store takes the sum over the union of the workers' rows
    for step in (0, 1):
        before = kv.comm_stats()
        kv.push(['emb', 'dense'], [pushed(rank, step, ndev),
                                   [mx.nd.ones((3, 2), ctx=mx.cpu(d)) for d in range(ndev)]])
        np.testing.assert_allclose(pull_all(kv, 'emb'), dense_sum(step, n), rtol=1e-6,
                                   atol=1e-6)
        dense = mx.nd.zeros((3, 2))
        kv.pull('dense', out=dense)
        np.testing.assert_array_equal(dense.asnumpy(), np.full((3, 2), n * ndev))
        after = kv.comm_stats()
        per_row = 8 + DIM * 4
        mine = len(grad_rows(rank, step)[0])
        others = sum(len(grad_rows(r, step)[0]) for r in range(n) if r != rank)
        grew = {k: after[k] - before[k] for k in after}
        if HYBRID:
            # this worker's rows to the servers; a pull of every row: ids out, rows back
            assert grew['sparse_bytes_sent'] == mine * per_row + ROWS * 8, grew
            assert grew['sparse_bytes_received'] == ROWS * DIM * 4, grew
            assert grew['rows_transferred'] == ROWS, grew
        else:
            assert grew['sparse_bytes_received'] == others * per_row, grew
            assert grew['sparse_bytes_sent'] == mine * per_row * (n - 1), grew
            assert grew['rows_transferred'] == others, grew
        assert after['dense_bytes_sent'] > before['dense_bytes_sent']

    # lazy SGD with momentum on the store: only rows pushed at a step change at that step
    kv2 = mx.kv.create(kvtype)
    table = np.random.RandomState(5).randn(ROWS, DIM).astype(np.float32)
    kv2.init(0, mx.nd.array(table).tostype('row_sparse'))
    kv2.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01,
                                       rescale_grad=0.5))
    weight, mom = table.copy(), np.zeros_like(table)
    for step in (0, 1, 2):
        kv2.push(0, pushed(rank, step, ndev))
        grad = dense_sum(step, n)
        rows = np.unique(np.concatenate([grad_rows(r, step)[0] for r in range(n)]))
        g = 0.5 * grad[rows] + 0.01 * weight[rows]
        mom[rows] = 0.9 * mom[rows] - 0.1 * g
        weight[rows] += mom[rows]
        np.testing.assert_allclose(pull_all(kv2, 0), weight, rtol=1e-5, atol=1e-6)
    # every worker holds bit-identical values
    mine = pull_all(kv2, 0)
    everyone = kv2._coll.comm.allgather(mine)
    for theirs in everyone:
        np.testing.assert_array_equal(theirs, mine)
    kv.barrier()
    print('OK %s %d' % (kvtype, rank))


if __name__ == '__main__':
    main(sys.argv[1])
