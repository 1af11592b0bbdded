"""The scaling model (mxmod.tools.scaling): its cost formulas against hand computations, the
overlap schedule, the profile of a real module, and the command line."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mxmod as mx
from mxmod.base import MXNetError
from mxmod.tools.scaling import model, profile


def _profile(ready, nbytes, fwd=0.1, bwd=0.3, upd=0.02):
    return {'forward_s': fwd, 'backward_s': bwd, 'update_s': upd, 'name': 'toy',
            'params': [{'name': 'p%d' % i, 'bytes': b, 'ready_s': r, 'sparse': False}
                       for i, (r, b) in enumerate(zip(ready, nbytes))]}


def test_bucket_costs_by_hand():
    net = model.Network(bandwidth=1e9, latency=1e-5, ranks_per_host=4)
    # ring: 2 (N-1)/N b / B + 2 (N-1) a
    assert model.bucket_cost(8e6, 4, net, 'ring') == pytest.approx(2 * 3 / 4. * 8e-3 + 6e-5)
    assert model.bucket_cost(8e6, 1, net, 'ring') == 0.0
    # hierarchical: ring inside the host (4 ranks) + ring among 2 hosts
    inside = 2 * 3 / 4. * 8e6 / 5e9 + 6 * 1e-6
    assert model.bucket_cost(8e6, 8, net, 'hierarchical') == pytest.approx(
        inside + 2 * 1 / 2. * 8e-3 + 2e-5)
    # parameter servers: the servers' links carry N b / S
    assert model.bucket_cost(8e6, 8, net, 'ps', servers=2) == pytest.approx(2 * 4 * 8e-3 + 2e-5)
    assert model.bucket_cost(8e6, 8, net, 'ps') == pytest.approx(2 * 8e-3 + 2e-5)
    with pytest.raises(MXNetError, match="unknown mode 'tree'"):
        model.bucket_cost(1, 2, net, 'tree')


def test_overlap_schedule():
    # three buckets of 1 MB ready at 0.1, 0.2 and 0.3 s; each takes 0.05 s on 2 workers
    prof = _profile([0.1, 0.2, 0.3], [1 << 20] * 3)
    net = model.Network(bandwidth=(1 << 20) / 0.05)
    on = model.predict(prof, 2, net, bucket_bytes=1 << 20, update_on_kvstore=False)
    off = model.predict(prof, 2, net, bucket_bytes=1 << 20, overlap=False,
                        update_on_kvstore=False)
    # overlap: the last bucket starts at 0.3 (end of backward): 0.1 + 0.35 + 0.02
    assert on['step_s'] == pytest.approx(0.47)
    assert off['step_s'] == pytest.approx(0.1 + 0.3 + 0.15 + 0.02)
    assert on['buckets'] == 3 and on['comm_s'] == pytest.approx(0.15)
    assert model.predict(prof, 1, net)['efficiency'] == pytest.approx(1.0)
    assert on['efficiency'] == pytest.approx(0.42 / 0.47)
    # a link slower than backward: communication dominates
    slow = model.Network(bandwidth=(1 << 20) / 0.2)
    assert model.predict(prof, 2, slow, bucket_bytes=1 << 20,
                         update_on_kvstore=False)['step_s'] == pytest.approx(0.1 + 0.7 + 0.02)
    # the bound from ready times: compute 0.4, comm 0.15 -> best step 0.45
    assert model.overlap_bound(prof, 0.4, 0.15, 1 << 20) == pytest.approx((0.55 - 0.45) / 0.15)


def test_shared_cores_and_bucket_recommendation():
    prof = _profile(np.linspace(0.03, 0.3, 10), [1 << 20] * 10)
    net = model.Network(bandwidth=1e8, latency=1e-3, ranks_per_host=4, cores_per_host=2)
    assert net.slowdown(4) == 2.0 and net.slowdown(1) == 1.0
    four = model.predict(prof, 4, net)
    assert four['compute_s'] == pytest.approx(2 * 0.42)
    size, best = model.recommend_bucket(prof, 4, net)
    assert size in [int(m * (1 << 20)) for m in model.BUCKET_CANDIDATES_MB]
    for megabytes in model.BUCKET_CANDIDATES_MB:
        other = model.predict(prof, 4, net, bucket_bytes=int(megabytes * (1 << 20)))
        assert best['step_s'] <= other['step_s'] + 1e-12


def test_profile_of_a_module(tmp_path):
    net = mx.sym.Variable('data')
    for i in range(3):
        net = mx.sym.Activation(mx.sym.FullyConnected(net, num_hidden=32, name='fc%d' % i),
                                act_type='relu')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=4, name='out'),
                               name='softmax')
    mod = mx.mod.Module(net)
    mod.bind([('data', (16, 8))], [('softmax_label', (16,))])
    mod.init_params()
    mod.init_optimizer()
    batch = mx.io.DataBatch([mx.nd.ones((16, 8))], [mx.nd.zeros((16,))])
    prof = profile.profile_module(mod, batch, steps=3, warmup=1)
    names = [p['name'] for p in prof['params']]
    # backward finishes the last layer first
    assert names.index('out_weight') < names.index('fc0_weight')
    ready = [p['ready_s'] for p in prof['params']]
    assert ready == sorted(ready) and 0 < ready[-1] <= prof['backward_s']
    assert {p['name']: p['bytes'] for p in prof['params']}['fc1_weight'] == 32 * 32 * 4
    path = str(tmp_path / 'p.json')
    profile.save_profile(prof, path)
    assert profile.load_profile(path)['params'] == prof['params']
    with open(path, 'w') as out:
        json.dump({'forward_s': 1}, out)
    with pytest.raises(MXNetError, match='is not a scaling profile'):
        profile.load_profile(path)


def test_profile_runs_at_the_given_thread_count_and_restores_it(monkeypatch):
    """A profile is taken at the thread count one rank will have; the setting before it comes
    back afterwards."""
    from mxmod import threads
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(mx.sym.FullyConnected(
        mx.sym.Variable('data'), num_hidden=4, name='fc'), name='softmax'))
    mod.bind([('data', (8, 6))], [('softmax_label', (8,))])
    mod.init_params()
    mod.init_optimizer()
    batch = mx.io.DataBatch([mx.nd.ones((8, 6))], [mx.nd.zeros((8,))])
    seen = []
    real_update = mod.update
    monkeypatch.setattr(mod, 'update', lambda: (seen.append(threads.get_num_threads()),
                                                real_update()))
    restore = profile._fix_threads(2)     # pylint: disable=protected-access
    try:
        prof = profile.profile_module(mod, batch, steps=2, warmup=1, threads=1)
        assert seen == [1, 1, 1] and prof['threads'] == 1
        assert threads.GOVERNOR.mode == 'fixed' and threads.get_num_threads() == 2
        seen.clear()
        assert profile.profile_module(mod, batch, steps=1, warmup=1)['threads'] == 2
        assert seen == [2, 2]
    finally:
        restore()


def test_command_line(tmp_path):
    prof = _profile(np.linspace(0.01, 0.3, 20), [200000] * 20)
    path = str(tmp_path / 'p.json')
    profile.save_profile(prof, path)
    plot = str(tmp_path / 'scaling.png')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, '-m', 'mxmod.tools.scaling', 'predict', '--profile',
                          path, '--bandwidth', '10Gbit/s', '--latency', '20us', '--workers',
                          '1,2,64', '--ranks-per-host', '8', '--plot', plot, '--json',
                          str(tmp_path / 'r.json')],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert 'ring step ms / eff' in out.stdout and 'MXMOD_KVSTORE_BUCKET_MB=' in out.stdout
    rows = json.load(open(str(tmp_path / 'r.json')))
    assert set(rows) == {'ring', 'hierarchical', 'ps'}
    assert rows['ring'][0]['efficiency'] == pytest.approx(1.0)
    try:
        import matplotlib  # noqa: F401  pylint: disable=unused-import,import-outside-toplevel
    except ImportError:
        assert 'needs matplotlib' in out.stderr
    else:
        assert open(plot, 'rb').read(8) == b'\x89PNG\r\n\x1a\n'
    bad = subprocess.run([sys.executable, '-m', 'mxmod.tools.scaling', 'predict', '--profile',
                          str(tmp_path / 'missing.json')], capture_output=True, text=True,
                         env=env, timeout=60)
    assert bad.returncode == 2 and 'cannot read the scaling profile' in bad.stderr
