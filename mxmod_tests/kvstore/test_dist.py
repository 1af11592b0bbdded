"""Distributed kvstores under real MPI jobs (2 processes): the dist_sync / dist_device_sync API
against numpy sums, data-parallel Module.fit against one process on the whole batch, and
dist_async training against the sync run. Each job runs in a subprocess with a timeout."""
import sys

import numpy as np
import pytest

from .dist_scripts.runner import launch_ok, require_mpi, run, script

EPOCHS, LR = 10, 0.1


@pytest.fixture(autouse=True)
def _mpi():
    require_mpi()


@pytest.mark.parametrize('kvtype', ['dist_sync', 'dist_device_sync'])
def test_sync_api(kvtype):
    out, _ = launch_ok('sync_api.py', [kvtype])
    assert 'OK %s 0' % kvtype in out and 'OK %s 1' % kvtype in out


def test_sync_api_three_workers():
    out, _ = launch_ok('sync_api.py', ['dist_sync_device'], workers=3)
    assert all('OK dist_sync_device %d' % r in out for r in range(3))


@pytest.fixture(scope='module')
def single_run(tmp_path_factory):
    """One process, whole batches, no kvstore: the reference parameters."""
    path = str(tmp_path_factory.mktemp('single') / 'single.npz')
    code, out, err, _ = run([sys.executable, script('module_fit.py'), 'single', '1', path,
                             str(EPOCHS), str(LR)])
    assert code == 0, err
    return dict(np.load(path))


def _params(path):
    return {k: v for k, v in np.load(path).items()}


@pytest.mark.parametrize('kvtype,ndev,on_kvstore', [('dist_sync', 1, '1'),
                                                     ('dist_device_sync', 2, '1'),
                                                     ('dist_sync', 1, '0')])
def test_module_fit_matches_single_process(kvtype, ndev, on_kvstore, single_run, tmp_path):
    """update_on_kvstore (the optimizer on every replica of the store) and, with
    MXNET_UPDATE_ON_KVSTORE=0, local updates after an in-place allreduce of the gradients."""
    path = str(tmp_path / 'p.npz')
    launch_ok('module_fit.py', [kvtype, ndev, path, EPOCHS, LR],
              env={'MXNET_UPDATE_ON_KVSTORE': on_kvstore})
    ranks = [_params(path.replace('.npz', '.rank%d.npz' % r)) for r in range(2)]
    for name, ref in single_run.items():
        if name == 'accuracy':
            continue
        # both workers hold bit-identical parameters after the last step
        np.testing.assert_array_equal(ranks[0][name], ranks[1][name])
        np.testing.assert_allclose(ranks[0][name], ref, rtol=1e-4, atol=1e-5, err_msg=name)


def test_async_reaches_sync_accuracy(single_run, tmp_path):
    path = str(tmp_path / 'a.npz')
    # stale gradients: async gets twice the sync run's epochs (with the same count it ended at
    # 0.94-1.0 over repeated runs, at twice 0.99-1.0 on a quiet machine and once 0.953 with other
    # jobs running beside it); pushes interleave differently in every run, so allow 8 of the 128
    # samples
    launch_ok('module_fit.py', ['dist_async', 1, path, 2 * EPOCHS, LR], servers=1)
    for rank in range(2):
        acc = float(_params(path.replace('.npz', '.rank%d.npz' % rank))['accuracy'])
        assert acc >= float(single_run['accuracy']) - 0.0625, (acc, single_run['accuracy'])


def test_async_api():
    out, _ = launch_ok('async_api.py', servers=2)
    assert 'OK dist_async 0' in out and 'OK dist_async 1' in out


def test_compressed_sync_sequence_matches_mxnet(tmp_path):
    """2-bit compression + 'test' optimizer + rank-0 init, two workers with two devices each:
    every pulled value equals what MXNet 1.9.1's ps-lite dist_sync returned (frozen fixture)."""
    import json
    import os
    fixture = os.path.join(os.path.dirname(__file__), 'fixtures', 'dist_sync_2bit_oracle.json')
    with open(fixture) as fin:
        expected = json.load(fin)
    path = str(tmp_path / 'seq.json')
    launch_ok('oracle_sequence.py', [path])
    for rank in range(2):
        with open(path.replace('.json', '.rank%d.json' % rank)) as fin:
            got = json.load(fin)
        assert got['num_workers'] == expected['num_workers'] == 2
        for key in ('a', 'b'):
            np.testing.assert_array_equal(np.array(got[key]), np.array(expected[key]), err_msg=key)


@pytest.mark.parametrize('kvtype,workers', [('dist_sync', 2), ('dist_device_sync', 2),
                                            ('dist_sync', 3)])
def test_row_sparse_allgather_api(kvtype, workers):
    """Row_sparse pushes of different rows per worker (one worker pushing none) sum over the
    union, beside a dense key in the same call; lazy momentum SGD on the store; byte counters
    equal the rows that travelled (sparse_sync.py checks against numpy)."""
    out, _ = launch_ok('sparse_sync.py', [kvtype], workers=workers)
    assert all('OK %s %d' % (kvtype, r) in out for r in range(workers)), out


@pytest.mark.parametrize('kvtype', ['dist_sync', 'dist_device_sync'])
def test_sparse_embedding_fit_matches_single_process(kvtype, sparse_single, tmp_path):
    """Embedding(sparse_grad=True) with a row_sparse weight: gradients all-gathered as rows, the
    dense ones all-reduced; both workers end bit-identical and equal to one process on the whole
    batch; the embedding gradient's bytes follow the touched rows, not the table."""
    path = str(tmp_path / 's.npz')
    launch_ok('sparse_fit.py', [kvtype, path])
    ranks = [dict(np.load(path.replace('.npz', '.rank%d.npz' % r))) for r in range(2)]
    for name, ref in sparse_single.items():
        np.testing.assert_array_equal(ranks[0][name], ranks[1][name])
        np.testing.assert_allclose(ranks[0][name], ref, rtol=1e-5, atol=1e-6, err_msg=name)
    stats, steps = ranks[0], ranks[0]['steps']
    table_bytes = sparse_single['embed_weight'].nbytes
    per_row = 8 + sparse_single['embed_weight'].shape[1] * 4
    # each worker sends its own rows of a batch (at most the batch's touched rows)
    assert stats['stat_sparse_bytes_sent'] / steps <= stats['touched_rows'] * per_row
    assert stats['stat_sparse_bytes_sent'] / steps < 0.02 * table_bytes
    assert stats['stat_rows_transferred'] / steps <= stats['touched_rows']
    assert stats['stat_rows_requested'] > 0


def test_row_sparse_tables_sharded_on_async_servers():
    """dist_async with 2 servers: a row_sparse table is split by rows between the servers,
    pushes and row_sparse_pull move only the rows involved, lazy (momentum) SGD on the servers,
    optimizer states saved from and loaded into the shards (sparse_async.py checks numpy)."""
    out, _ = launch_ok('sparse_async.py', servers=2)
    assert 'OK 0' in out and 'OK 1' in out, out


def test_sparse_embedding_fit_async_pulls_only_batch_rows(tmp_path):
    """Module.fit with dist_async on the embedding model: per step each worker asks the servers
    for its batch's rows only (the table is fetched whole by get_params at each epoch end), and
    no row_sparse pull falls back to fetching the table."""
    path = str(tmp_path / 'a.npz')
    launch_ok('sparse_fit.py', ['dist_async', path], servers=2)
    stats = dict(np.load(path.replace('.npz', '.rank0.npz')))
    rows, dim = stats['embed_weight'].shape
    steps, touched = stats['steps'], stats['touched_rows']
    # fit pulls the whole table at each of the 2 epoch ends (get_params)
    per_step_rows = (stats['stat_rows_transferred'] - 2 * rows) / steps
    assert 0 < per_step_rows <= touched
    assert stats['stat_sparse_bytes_received'] == stats['stat_rows_transferred'] * dim * 4
    # dense traffic: the fc parameters only, never the table
    assert stats['stat_dense_bytes_received'] < 0.1 * stats['embed_weight'].nbytes
