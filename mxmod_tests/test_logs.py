"""What a script that logs at DEBUG sees: mxmod's own lines and nothing of the libraries it uses
(numba's compiler writes ~70,000 lines while mxmod's kernels compile), one INFO line when the
kernels really compile (a cold numba cache) and none when they load from the cache, and
``python -m mxmod.tools.precompile`` filling the cache ahead.

Each run is a subprocess with its own numba cache folder (``NUMBA_CACHE_DIR``); the reference is
the same script with the compiled kernels off (``MXMOD_NUMBA=0``), which compiles nothing."""
import logging
import os
import re
import subprocess
import sys

import pytest

from mxmod.library_logs import QUIETED_LIBRARIES, quiet_library_loggers
from mxmod.ops.jit import COMPILE_NOTICE, COMPILE_SECONDS

NOTICE = COMPILE_NOTICE.split('(')[0]

# a conv + BatchNorm + pooling network trained for one epoch with the root logger at DEBUG
TRAIN = r'''
import logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout,
                    format='%(levelname)s:%(name)s:%(message)s')
import numpy as np
import mxmod as mx
x = mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), pad=(1, 1), num_filter=16)
x = mx.sym.Activation(mx.sym.BatchNorm(x), act_type='relu')
x = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type='max')
x = mx.sym.FullyConnected(mx.sym.flatten(x), num_hidden=3)
net = mx.sym.SoftmaxOutput(x, name='softmax')
rs = np.random.RandomState(0)
it = mx.io.NDArrayIter(rs.rand(32, 16, 8, 8).astype('float32'),
                       rs.randint(0, 3, 32).astype('float32'), batch_size=8)
mx.mod.Module(net).fit(it, num_epoch=1)
'''


def _run(code, cache, timeout=300, **env):
    full = dict(os.environ, NUMBA_CACHE_DIR=str(cache), OMP_NUM_THREADS='1',
                OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1', **env)
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          env=full, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.splitlines()


def _shape(lines):
    """The log lines with their numbers blanked (times, accuracies)."""
    return [re.sub(r'[0-9.]+', '#', line) for line in lines]


def test_debug_log_holds_mxmod_lines_only_cold_and_warm(tmp_path):
    reference = _run(TRAIN, tmp_path / 'unused', MXMOD_NUMBA='0')
    assert reference and all(line.startswith('INFO:root:Epoch[0]') for line in reference)
    cold = _run(TRAIN, tmp_path / 'cache')
    assert not any(':numba' in line for line in cold), cold[:20]
    assert len(cold) == len(reference) + 1      # no line but the levels' (no multi-line dumps)
    notices = [line for line in cold if NOTICE in line]
    assert notices == ['INFO:mxmod:' + COMPILE_NOTICE % COMPILE_SECONDS]
    assert _shape([line for line in cold if NOTICE not in line]) == _shape(reference)
    warm = _run(TRAIN, tmp_path / 'cache')     # everything loads from the cache: no notice
    assert _shape(warm) == _shape(reference)


USER_NUMBA = r'''
import logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format='%(name)s:%(message)s')
{before}
import mxmod
{after}
import numba
@numba.njit
def twice(v):
    return 2 * v
assert twice(3) == 6
'''


@pytest.mark.parametrize('where', ['before', 'after'])
def test_level_the_user_gave_numba_is_kept(tmp_path, where):
    """A user who sets numba's logger to DEBUG (before or after importing mxmod) gets its lines;
    without it, compiling a function of the user's own prints none either."""
    setting = "logging.getLogger('numba').setLevel(logging.DEBUG)"
    code = USER_NUMBA.format(before=setting if where == 'before' else '',
                             after=setting if where == 'after' else '')
    lines = _run(code, tmp_path / 'cache')
    assert sum(line.startswith('numba.') for line in lines) > 10
    quiet = _run(USER_NUMBA.format(before='', after=''), tmp_path / 'cache2')
    assert not any(line.startswith('numba.') for line in quiet), quiet[:10]


def test_quiet_library_loggers_leaves_configured_loggers():
    names = ('mxmod_test_lib_a', 'mxmod_test_lib_b', 'mxmod_test_lib_b.child')
    logging.getLogger(names[1]).setLevel(logging.DEBUG)
    try:
        assert quiet_library_loggers(names) == [names[0], names[2]]
        assert logging.getLogger(names[0]).level == logging.WARNING
        assert logging.getLogger(names[1]).level == logging.DEBUG
        assert quiet_library_loggers(names) == []        # now all set: nothing changes
    finally:
        for name in names:
            logging.getLogger(name).setLevel(logging.NOTSET)


def test_libraries_mxmod_uses_stay_quiet_at_debug(tmp_path):
    """matplotlib (the metric history's plot) and Pillow log at DEBUG; after ``import mxmod``
    their loggers are at WARNING, and a history plot adds no line to a DEBUG log."""
    pytest.importorskip('matplotlib')
    code = r'''
import logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format='%(name)s:%(message)s')
import mxmod as mx
for name in {names!r}:
    assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING, name
history = mx.callback.MetricHistory({prefix!r})
history.epoch_begin(0, True)
history.epoch_end(0, None, {{}}, {{}})
'''.format(names=QUIETED_LIBRARIES, prefix=str(tmp_path / 'run'))
    lines = _run(code, tmp_path / 'cache')
    assert lines == [], lines[:10]


def test_kernel_inventory_lists_every_kernel_module():
    pytest.importorskip('numba')
    from mxmod.tools.precompile import KERNEL_MODULES, kernel_inventory
    modules = {name.split('.')[0] for name in kernel_inventory()}
    assert modules == set(KERNEL_MODULES)


@pytest.mark.slow
def test_precompile_fills_the_cache(tmp_path):
    """From an empty cache: the tool compiles every kernel (exit 0, with the notice); a training
    run afterwards compiles nothing."""
    pytest.importorskip('numba')
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / 'cache'), OMP_NUM_THREADS='1',
               OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1')
    proc = subprocess.run([sys.executable, '-m', 'mxmod.tools.precompile'], capture_output=True,
                          text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert NOTICE in proc.stderr
    assert re.search(r'(\d+) of \1 kernels compiled', proc.stdout), proc.stdout
    lines = _run(TRAIN, tmp_path / 'cache')
    assert not any(NOTICE in line for line in lines), lines


FLOATS = r'''
import sys, warnings
warnings.simplefilter('default')
import numpy as np
import mxmod as mx
a = mx.nd.array([1.0, 0.0, -1.0])
outs = [a / 0, mx.nd.log(a), mx.nd.sqrt(a), mx.nd.exp(a * 1000), 1 / a, a.log()]
xs = [mx.sym.Variable('x%d' % k) for k in range(3)]
cells = [mx.sym.log(x * 2) * mx.sym.sqrt(x - 1) / (x - 1) for x in xs]
for fuse in ('0', '1'):
    import os
    os.environ['MXMOD_FUSE_ELEMWISE'] = fuse
    exe = mx.sym.Group(cells).simple_bind(mx.cpu(), **{'x%d' % k: (2, 3) for k in range(3)})
    for k in range(3):
        exe.arg_dict['x%d' % k][:] = np.array([[0, 1, -1], [2, 0, 1]])
    outs += exe.forward(is_train=True)
    fused = sum(s.op.op_name == '_fused_elemwise' for s in exe._plan.steps)
    assert fused == (3 if fuse == '1' else 0), fused
    exe.backward([mx.nd.ones((2, 3))] * 3)
    outs += [g for g in exe.grad_arrays]
values = np.concatenate([o.asnumpy().ravel() for o in outs])
print(int(np.isinf(values).sum()), int(np.isnan(values).sum()))
np.log(np.zeros(1))     # the user's own numpy still warns
'''


@pytest.mark.parametrize('numba', ['1', '0'])
def test_inf_and_nan_from_operators_come_silently(tmp_path, numba):
    """MXNet computes inf and nan without a word; mxmod's operators (imperative, bound, fused,
    compiled or numpy) do too, while numpy's warnings from the user's own code still show."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), MXMOD_NUMBA=numba)
    proc = subprocess.run([sys.executable, '-c', FLOATS], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    infs, nans = map(int, proc.stdout.split())
    assert infs > 5 and nans > 5
    warned = [line for line in proc.stderr.splitlines() if 'RuntimeWarning' in line]
    assert len(warned) == 1 and warned[0].startswith('<string>:') and \
        warned[0].endswith('RuntimeWarning: divide by zero encountered in log'), proc.stderr[-3000:]
