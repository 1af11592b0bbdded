"""Sharded optimizer updates of dist_sync (mxmod.kvstore.shard_update): the summation order is
MPICH's all-reduce order, and training with sharding is bit-identical to training without it
(parameters and saved optimizer states; SGD, NAG and Adam; 2, 3 and 4 workers; two devices per
worker; gradient communication overlapped with backward or not). An error in a sharded update on
the communication thread reaches ``update`` naming the rank and the key."""
import os

import numpy as np
import pytest

from mxmod.kvstore.shard_update import shard_bounds, tree_sum

from .dist_scripts.runner import launch_ok, require_mpi

CASE = 'shard_update_case.py'


def _parts(count, seed=0):
    rs = np.random.RandomState(seed)
    return [(rs.randn(257) * 10.0 ** rs.randint(-4, 4, 257)).astype(np.float32)
            for _ in range(count)]


@pytest.mark.parametrize('count,expected', [
    (1, lambda a: a[0]),
    (2, lambda a: a[0] + a[1]),
    (3, lambda a: (a[0] + a[1]) + a[2]),
    (4, lambda a: (a[0] + a[1]) + (a[2] + a[3])),
    (5, lambda a: ((a[0] + a[1]) + a[2]) + (a[3] + a[4])),
    (6, lambda a: ((a[0] + a[1]) + (a[2] + a[3])) + (a[4] + a[5])),
    (8, lambda a: ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))),
])
def test_tree_sum_order(count, expected):
    parts = _parts(count)
    out = np.empty_like(parts[0])
    tree_sum(parts, out)
    np.testing.assert_array_equal(out, expected(parts))
    if count >= 3:      # the order matters for these values: a plain running sum differs
        running = parts[0].copy()
        for part in parts[1:]:
            running += part
        assert not np.array_equal(running, out) or count == 3


@pytest.mark.parametrize('size,workers', [(10, 3), (7, 4), (3, 4), (100, 2), (0, 2)])
def test_shard_bounds_cover_in_order(size, workers):
    bounds = shard_bounds(size, workers)
    assert len(bounds) == workers and bounds[0][0] == 0 and bounds[-1][1] == size
    for (_, end), (begin, _) in zip(bounds, bounds[1:]):
        assert end == begin
    assert max(e - b for b, e in bounds) - min(e - b for b, e in bounds) <= -(-size // workers)


def _run(tmp_path, tag, workers, optimizer, ndev, env):
    path = str(tmp_path / ('%s.npz' % tag))
    launch_ok(CASE, [optimizer, ndev, path], workers=workers, env=env, timeout=150)
    return [dict(np.load(path.replace('.npz', '.rank%d.npz' % r))) for r in range(workers)]


@pytest.mark.parametrize('workers,optimizer,ndev', [
    (2, 'sgd', 1), (4, 'adam', 1), (3, 'sgd', 1), (2, 'nag', 2),
])
def test_bit_identical_with_and_without_sharding(tmp_path, workers, optimizer, ndev):
    require_mpi()
    off = _run(tmp_path, 'off', workers, optimizer, ndev, {'MXMOD_KVSTORE_SHARD_MB': 'off'})
    runs = [_run(tmp_path, 'on%s' % flag, workers, optimizer, ndev,
                 {'MXMOD_KVSTORE_SHARD_MB': '0.01', 'MXMOD_OVERLAP_COMM': flag,
                  'MXMOD_NET_EMULATION': 'bandwidth=500Mbit/s,latency=50us'})
            for flag in ('0', '1')]
    for rank in range(workers):
        assert int(off[rank].pop('sharded_calls')) == 0
    for on in runs:
        for rank in range(workers):
            # fc1 and fc2 weights (50 KB, 30 KB) sharded in each of the 4 steps
            assert int(on[rank].pop('sharded_calls')) == 8
            assert sorted(off[rank]) == sorted(on[rank])
            for name in off[rank]:
                np.testing.assert_array_equal(off[rank][name], on[rank][name],
                                              err_msg='rank %d %s' % (rank, name))
                np.testing.assert_array_equal(on[0][name], on[rank][name], err_msg=name)


def test_error_in_sharded_update_names_rank_and_key(tmp_path):
    require_mpi()
    path = str(tmp_path / 'fail.npz')
    launch_ok(CASE, ['sgd', 1, path, '--fail'], workers=2, timeout=120,
              env={'MXMOD_KVSTORE_SHARD_MB': '0.01', 'MXMOD_OVERLAP_COMM': '1'})
    for rank in range(2):
        with open(path.replace('.npz', '.rank%d.txt' % rank)) as handle:
            message = handle.read()
        assert 'worker rank %d' % rank in message, message
        assert 'fc1_weight' in message and 'shard update broken' in message, message
