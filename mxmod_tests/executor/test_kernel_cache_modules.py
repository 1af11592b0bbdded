"""The fused elementwise kernels' numba cache survives code that drops their generated module
from ``sys.modules`` (``mock.patch.dict(sys.modules)`` restores the dict it copied): numba would
otherwise compile them as "dynamic" and cache machine code that no later process can load
(``No module named '<dynamic>'``); a cache written that way is emptied and compiled afresh. Each
run is a new process on one fresh cache, checked against the unfused graph."""
import json
import os
import subprocess
import sys

import pytest

SCRIPT = r'''
import json, sys
import numpy as np
from mxmod_tests.executor.fusion_helpers import ELEMWISE, NONE, run
from mxmod_tests.executor.test_fuse_elemwise import _graph
from mxmod.executor import kernel_modules

mode = sys.argv[1]
sym, values, req = _graph('unary_math')
plain = run(sym, {}, NONE, values=values, grad_req=req)
if mode == 'dropped':
    # the graph runs, then its generated modules leave sys.modules (as code restoring an
    # earlier copy of sys.modules drops them), then its kernels meet new argument types
    # (Fortran-ordered arrays: numba compiles them now)
    fused = run(sym, {}, ELEMWISE, values=values, grad_req=req)
    for name in [n for n in sys.modules if n.startswith('mxmod_fused_')]:
        del sys.modules[name]
    rs = np.random.RandomState(0)
    outs = plain.outs
    for g in fused.ops('_fused_elemwise'):
        inputs = [rs.uniform(-1, 1, g.shapes[s]).astype(np.float32) for s in g.input_slots]
        want = g._compiled.forward(inputs)[0]
        got = g._compiled.forward([np.asfortranarray(x) for x in inputs])[0]
        assert all(np.array_equal(a, b) for a, b in zip(want, got))
elif mode == 'poison':
    # what earlier versions cached when that happened: kernels compiled without their module
    def call(self, *args):
        sys.modules.pop(self.name, None)
        return self.fn(*args)
    kernel_modules.Registered.__call__ = call
    fused = run(sym, {}, ELEMWISE, values=values, grad_req=req)
    outs = fused.outs
else:
    fused = run(sym, {}, ELEMWISE, values=values, grad_req=req)
    outs = fused.outs
same = all(np.array_equal(a, b) for a, b in zip(plain.outs, outs))
print(json.dumps({'same': same, 'compiled': [g._compiled is not None
                                             for g in fused.ops('_fused_elemwise')]}))
'''


def _run(mode, cache):
    env = dict(os.environ, MXMOD_KERNEL_CACHE=cache, PYTHONPATH=os.getcwd())
    env.pop('NUMBA_CACHE_DIR', None)
    proc = subprocess.run([sys.executable, '-c', SCRIPT, mode], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _poisoned(cache):
    """Cache files that name numba's stand-in module for functions it could not find."""
    found = []
    for root, _, files in os.walk(cache):
        for name in files:
            if name.endswith('.nbc'):
                with open(os.path.join(root, name), 'rb') as handle:
                    if b'<dynamic>' in handle.read():
                        found.append(name)
    return found


@pytest.mark.parametrize('first', ['dropped', 'poison'])
def test_kernels_load_in_later_processes(tmp_path, first):
    pytest.importorskip('numba')
    cache = str(tmp_path / 'kernels')
    result = _run(first, cache)
    assert result['same'] and result['compiled'] == [True, True]
    assert bool(_poisoned(cache)) == (first == 'poison')
    for _ in range(2):
        result = _run('plain', cache)
        assert result['same'] and result['compiled'] == [True, True]
    assert not _poisoned(cache)
