"""MXMOD_NET_EMULATION: parsing, the cost of each collective, the link queue, and MPI stores that
really take (at least) the emulated time."""
import time

import pytest

from mxmod.base import MXNetError
from mxmod.kvstore import net_emulation
from mxmod.kvstore.net_emulation import Link, collective_cost, parse

from .dist_scripts.runner import launch_ok, require_mpi


@pytest.mark.parametrize('spec,bandwidth,latency', [
    ('bandwidth=10Gbit/s,latency=50us', 10e9 / 8, 50e-6),
    ('latency=2ms, bandwidth=100Mbit/s', 100e6 / 8, 2e-3),
    ('bandwidth=1.5GB/s', 1.5e9, 0.0),
    ('bandwidth=800kbit/s,latency=1e-1s', 800e3 / 8, 0.1),
    ('bandwidth=1e3bit/s,latency=500ns', 125.0, 5e-7),
])
def test_parse_units(spec, bandwidth, latency):
    link = parse(spec)
    assert link.bandwidth == pytest.approx(bandwidth) and link.latency == pytest.approx(latency)


@pytest.mark.parametrize('spec,message', [
    ('latency=5us', 'names no bandwidth'),
    ('bandwidth=10', "cannot read the bandwidth '10'"),
    ('bandwidth=10Gbps', "cannot read the bandwidth '10Gbps'"),
    ('bandwidth=1Gbit/s,latency=3 days', "cannot read the latency"),
    ('speed=1Gbit/s', "cannot read 'speed=1Gbit/s'"),
    ('bandwidth=0Gbit/s', 'must be > 0'),
])
def test_bad_specs_say_what_is_expected(spec, message):
    with pytest.raises(MXNetError, match=message):
        parse(spec)


def test_collective_costs():
    assert collective_cost('allreduce', 1000, 2) == (1000.0, 2)
    assert collective_cost('allreduce', 1000, 4) == (1500.0, 6)
    assert collective_cost('allgather', 100, 4) == (300.0, 3)
    assert collective_cost('bcast', 100, 5) == (100.0, 3)
    assert collective_cost('barrier', 0, 8) == (0.0, 6)
    assert collective_cost('allreduce', 1000, 1) == (0, 0)


def test_link_queues_messages_and_sleeps():
    link = Link(bandwidth=1e6, latency=1e-3)           # 1 MB/s
    assert link.transfer_time(20000, 2) == pytest.approx(0.022)
    tic = time.perf_counter()
    link.hold(10000)                                   # 10 ms + 1 ms
    link.hold(10000)                                   # queued behind the first
    assert time.perf_counter() - tic >= 0.021
    # a transfer that really took its time is not charged twice
    started = time.perf_counter() - 0.05
    tic = time.perf_counter()
    link.hold(10000, started=started)
    assert time.perf_counter() - tic < 0.03


def test_off_by_default(monkeypatch):
    monkeypatch.delenv(net_emulation.ENV_NET_EMULATION, raising=False)
    net_emulation.reset()
    sentinel = object()
    assert net_emulation.link() is None and net_emulation.wrap(sentinel) is sentinel
    assert net_emulation.now() is None
    monkeypatch.setenv(net_emulation.ENV_NET_EMULATION, 'bandwidth=1Gbit/s')
    net_emulation.reset()
    assert net_emulation.link().bandwidth == pytest.approx(1.25e8)
    assert net_emulation.wrap(sentinel) is not sentinel
    net_emulation.reset()
    monkeypatch.delenv(net_emulation.ENV_NET_EMULATION)


def test_stores_take_the_emulated_time():
    """dist_sync pushpulls and dist_async pushes/pulls of 4 MB on an emulated 1 Gbit/s link take
    at least what the link needs (the loopback alone is about ten times faster)."""
    require_mpi()
    env = {'MXMOD_NET_EMULATION': 'bandwidth=1Gbit/s,latency=100us'}
    out, _ = launch_ok('emulated_net.py', ['dist_sync'], env=env)
    assert 'OK dist_sync' in out
    out, _ = launch_ok('emulated_net.py', ['dist_async'], servers=1, env=env)
    assert 'OK dist_async' in out
