"""Hybrid training (row_sparse tables on server ranks, dense values all-reduced) and the embedding
cache with bounded staleness, under real MPI jobs: equality with one process and with the run
without a cache at bound 0, the staleness bound on reads and writes measured against the
servers' row versions, checkpoints that hold every update (loaded by one process and by MXNet
1.9.1), and the argument checks."""
import re
import subprocess

import numpy as np
import pytest

from mxmod_tests.conftest import ORACLE_PYTHON, oracle_available
from .dist_scripts.runner import launch_ok, require_mpi


@pytest.fixture(autouse=True)
def _mpi():
    require_mpi()


def _ranks(path):
    return [dict(np.load(path.replace('.npz', '.rank%d.npz' % r))) for r in range(2)]


def _params(result, names):
    return {k: result[k] for k in names}


@pytest.mark.parametrize('kvtype', ['dist_sync', 'dist_device_sync'])
def test_hybrid_matches_one_process(kvtype, sparse_single, tmp_path):
    """The table on a server updated in synchronous rounds, the dense parameters all-reduced:
    both workers end equal to one process on the whole batch."""
    path = str(tmp_path / 'h.npz')
    launch_ok('sparse_fit.py', [kvtype, path], servers=1)
    ranks = _ranks(path)
    for name, ref in sparse_single.items():
        np.testing.assert_array_equal(ranks[0][name], ranks[1][name])
        np.testing.assert_allclose(ranks[0][name], ref, rtol=1e-5, atol=1e-6, err_msg=name)
    assert ranks[0]['stat_rows_transferred'] > 0


def test_bound_zero_gives_the_run_without_cache(sparse_single, tmp_path):
    """bound=0: the same parameters, bit for bit, as the hybrid run without a cache (the cache
    serves a row only while the servers have not changed it; every row a batch reads is updated
    in its round, so here each read fetches it again)."""
    plain, cached = str(tmp_path / 'plain.npz'), str(tmp_path / 'cached.npz')
    launch_ok('sparse_fit.py', ['dist_sync', plain], servers=1)
    launch_ok('sparse_fit.py', ['dist_sync', cached], servers=1,
              env={'SPARSE_FIT_CACHE': 'lfu:0.1:0:1'})
    without, with_cache = _ranks(plain)[0], _ranks(cached)[0]
    for name in sparse_single:
        np.testing.assert_array_equal(with_cache[name], without[name], err_msg=name)
    assert with_cache['stat_cache_misses'] > 0
    assert with_cache['stat_pushes_deferred'] == 0 and with_cache['stat_max_staleness'] == 0


def test_bounded_cache_trains_and_defers(sparse_single, tmp_path):
    """bound=5 with prefetch: updates are held back and rows served stale (at most 5 updates),
    and the model still ends near the exact run."""
    path = str(tmp_path / 'b5.npz')
    launch_ok('sparse_fit.py', ['dist_sync', path], servers=1,
              env={'SPARSE_FIT_CACHE': 'lru:0.2:5:1'})
    ranks = _ranks(path)
    stats = ranks[0]
    assert stats['stat_pushes_deferred'] > 0 and stats['stat_cache_hits'] > 0
    assert 0 < stats['stat_max_staleness'] <= 5
    for name in sparse_single:
        np.testing.assert_array_equal(ranks[0][name], ranks[1][name])
        assert np.all(np.isfinite(ranks[0][name]))
    drift = np.abs(ranks[0]['embed_weight'] - sparse_single['embed_weight']).max()
    assert drift < 0.5 * np.abs(sparse_single['embed_weight']).max()


def test_cache_set_on_the_store_before_its_tables(tmp_path):
    """kv.set_embedding_cache before the Module puts its parameters in the store (the
    ``fit(..., kvstore=kv)`` path) caches the tables as they arrive: the same run, bit for bit,
    as with init_optimizer(embedding_cache=...)."""
    first, later = str(tmp_path / 'first.npz'), str(tmp_path / 'later.npz')
    cache = {'SPARSE_FIT_CACHE': 'lfu:0.2:4:1'}
    launch_ok('sparse_fit.py', ['dist_sync', first], servers=1,
              env=dict(cache, SPARSE_FIT_CACHE_FIRST='1'))
    launch_ok('sparse_fit.py', ['dist_sync', later], servers=1, env=cache)
    a, b = _ranks(first)[0], _ranks(later)[0]
    for name in ('embed_weight', 'fc_weight', 'fc_bias'):
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert a['stat_cache_hits'] == b['stat_cache_hits'] > 0


@pytest.mark.parametrize('policy,bound', [('lfu', 3), ('lru', 2)])
def test_staleness_never_exceeds_the_bound(policy, bound, tmp_path):
    """Every read of every step checked against the servers' row versions, with a cache of 40
    rows (hundreds of evictions), prefetch, epoch ends and a checkpoint mid-epoch: no row is
    read more than ``bound`` updates behind, none holds back more than ``bound`` updates, and the
    bound is reached (the check can fail)."""
    prefix = str(tmp_path / 'ckpt')
    out, _ = launch_ok('cache_staleness.py', [policy, bound, prefix], servers=1, timeout=120)
    found = re.findall(r'OK (\d) (\d+) (\d+)', out)      # ranks' lines may interleave
    assert sorted(int(r) for r, _, _ in found) == [0, 1], out
    for _, worst, evictions in found:
        assert int(worst) == bound and int(evictions) > 100, out


def test_checkpoint_with_cache_loads_in_one_process_and_in_mxnet(tmp_path):
    """The checkpoint saved mid-run with the cache (every held-back update flushed first, as
    cache_staleness.py checks against the servers) loads into a one-process Module, and MXNet
    1.9.1 reads the same row_sparse values from it."""
    import mxmod as mx
    prefix = str(tmp_path / 'ckpt')
    launch_ok('cache_staleness.py', ['lfu', 3, prefix], servers=1, timeout=120)
    sym, args, auxs = mx.model.load_checkpoint(prefix + '-r0', 1)
    assert args['embed_weight'].stype == 'row_sparse'
    mod = mx.mod.Module(sym)
    mod.bind(data_shapes=[('data', (4, 6))], label_shapes=[('softmax_label', (4,))],
             for_training=False)
    mod.set_params(args, auxs)
    probs = mod.predict(mx.io.NDArrayIter(np.arange(24).reshape(4, 6).astype(np.float32),
                                          batch_size=4)).asnumpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1, rtol=1e-5)
    if not oracle_available():
        pytest.skip('no MXNet 1.9.1 oracle at %s' % ORACLE_PYTHON)
    dump = str(tmp_path / 'mxnet_view.npz')
    code = ('import mxnet as mx, numpy as np; s, a, x = mx.model.load_checkpoint(%r, 1); '
            'np.savez(%r, stype=a["embed_weight"].stype, **{k: v.asnumpy() for k, v in '
            'a.items()})' % (prefix + '-r0', dump))
    subprocess.run([ORACLE_PYTHON, '-c', code], check=True, timeout=120, capture_output=True)
    theirs = np.load(dump)
    assert str(theirs['stype']) == 'row_sparse'
    for name, value in args.items():
        np.testing.assert_array_equal(theirs[name], value.asnumpy(), err_msg=name)


@pytest.mark.parametrize('servers', [0, 1])
def test_bad_arguments_name_what_is_allowed(servers):
    out, _ = launch_ok('cache_errors.py', servers=servers)
    assert 'OK 0' in out and 'OK 1' in out


def test_async_store_with_cache(sparse_single, tmp_path):
    """dist_async keeps everything on the servers; with the cache its reads are checked against
    the servers' versions every time (no rounds to count on) and training still works."""
    path = str(tmp_path / 'a.npz')
    launch_ok('sparse_fit.py', ['dist_async', path], servers=1,
              env={'SPARSE_FIT_CACHE': 'lfu:0.1:5:1'})
    stats = _ranks(path)[0]
    assert stats['stat_cache_hits'] > 0 and stats['stat_max_staleness'] <= 5
    assert np.all(np.isfinite(stats['embed_weight']))
