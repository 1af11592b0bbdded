"""A program that runs the profiler and ends without dump() still leaves its trace, as MXNet
1.9.1's profiler writes on destruction (example/profiler/profiler_ndarray.py relies on it: on
MXNet it leaves profile_ndarray.json); a final dump() is not written over, and a process that
never ran the profiler writes nothing."""
import os
import subprocess
import sys

import pytest

from .tracing import load_trace, names

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MXNET = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')

PROGRAM = '''
import sys
import {module} as mx
mx.profiler.set_config(profile_all=True, filename='trace.json', continuous_dump={continuous})
mx.profiler.set_state('run')
mx.nd.ones((2,)).wait_to_read()
if '{stop}' == 'stop':
    mx.profiler.set_state('stop')
if '{dump}' == 'dump':
    mx.profiler.dump()
    mx.nd.zeros((2,)).wait_to_read()        # after the final dump: not recorded
'''


def _run(python, module, folder, **switches):
    env = dict(os.environ, PYTHONPATH=ROOT)
    for name in ('MXNET_PROFILER_AUTOSTART', 'MXMOD_RANK', 'PMI_RANK', 'OMPI_COMM_WORLD_RANK'):
        env.pop(name, None)
    code = PROGRAM.format(module=module, **switches)
    subprocess.run([python, '-c', code], cwd=str(folder), env=env, check=True, timeout=300,
                   capture_output=True)
    path = folder / 'trace.json'
    return names(load_trace(str(path))[0], 'operator') if path.exists() else None


CASES = [dict(continuous=c, stop=s, dump=d) for c in ('True', 'False')
         for s, d in (('stop', '-'), ('-', '-'), ('stop', 'dump'))]


@pytest.mark.parametrize('switches', CASES, ids=lambda c: '-'.join(c.values()))
def test_trace_written_at_exit(tmp_path, switches):
    ops = _run(sys.executable, 'mxmod', tmp_path, **switches)
    assert ops is not None and '_ones' in ops and '_zeros' not in ops


@pytest.mark.skipif(not os.path.exists(MXNET), reason='needs MXNet 1.9.1 (the oracle)')
@pytest.mark.parametrize('switches', CASES[:3], ids=lambda c: '-'.join(c.values()))
def test_mxnet_writes_the_same(tmp_path, switches):
    ops = _run(MXNET, 'mxnet', tmp_path, **switches)
    assert ops is not None and '_ones' in ops and '_zeros' not in ops


def test_no_trace_without_running_the_profiler(tmp_path):
    code = 'import mxmod as mx\nmx.profiler.set_config(filename="trace.json")\nmx.nd.ones(2)\n'
    subprocess.run([sys.executable, '-c', code], cwd=str(tmp_path), check=True, timeout=300,
                   env=dict(os.environ, PYTHONPATH=ROOT))
    assert not (tmp_path / 'trace.json').exists()
