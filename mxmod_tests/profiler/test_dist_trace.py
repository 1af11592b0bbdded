"""A profiled 2-rank ``python -m mxmod.launch`` fit: each rank's trace has that rank's process
with operator events on both of its devices, kvstore calls with their MPI collectives, and data
loading; the merged trace keeps the ranks apart."""
import os
import sys

import pytest

from mxmod.profiler import merge
from mxmod.profiler.trace import rank_filename

from ..kvstore.dist_scripts.runner import require_mpi, run
from .tracing import load_trace, names

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'dist_profile_fit.py')


def test_rank_filename():
    assert rank_filename('p.json', 0, 1) == 'p.json'
    assert rank_filename('out/p.json', 1, 2) == 'out/p.rank1.json'
    assert rank_filename('p-{rank}.trace', 3, 4) == 'p-3.trace'


@pytest.mark.parametrize('kvstore', ['dist_sync'])
def test_two_rank_fit_trace(tmp_path, kvstore):
    require_mpi()
    trace = str(tmp_path / 'fit.json')
    cmd = [sys.executable, '-m', 'mxmod.launch', '-n', '2', 'python', SCRIPT, trace, kvstore]
    code, _, err, _ = run(cmd, timeout=120)
    assert code == 0, err[-3000:]
    paths = [rank_filename(trace, rank, 2) for rank in (0, 1)]
    for rank, path in enumerate(paths):
        events, threads, processes = load_trace(path)
        assert list(processes) == [rank] and processes[rank].startswith('rank %d (' % rank)
        assert {e['pid'] for e in events} == {rank}
        for tid, device in ((100, 'cpu(0)'), (101, 'cpu(1)')):
            assert threads[(rank, tid)] == device
            ops = names(events, 'operator', tid)
            assert ops.count('FullyConnected') == 8 and ops.count('_backward_FullyConnected') == 8
        kvstore_calls = names(events, 'KVStore')
        # one bucket per step: pushed during backward (overlap, the weights pulled after it) or
        # pushpulled in update
        assert kvstore_calls.count('KVStore.pushpull') + kvstore_calls.count('KVStore.push') == 8
        assert kvstore_calls.count('KVStore.pull') == kvstore_calls.count('KVStore.push')
        assert 'MPI_Allreduce' in kvstore_calls and 'MPI_Bcast' in kvstore_calls
        assert names(events, 'Data').count('NDArrayIter.next') == 9
        assert names(events, 'Optimizer')
    merged = str(tmp_path / 'merged.json')
    assert merge(merged, paths) > 0
    events, threads, processes = load_trace(merged)
    assert sorted(processes) == [0, 1]
    assert {e['pid'] for e in events if e['cat'] == 'KVStore'} == {0, 1}
