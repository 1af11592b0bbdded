"""dist_sync and dist_device_sync with (emulated) GPUs in each of 2 MPI processes: the gradients
are staged through host memory for the allreduce; the result equals one process on the whole
batch, as on CPUs."""
import os
import sys

import numpy as np
import pytest

from ..kvstore.dist_scripts.runner import require_mpi, run, script

EPOCHS, LR = 4, 0.1
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize('kvtype,on_kvstore', [('dist_device_sync', '1'), ('dist_sync', '0')])
def test_fit_on_two_gpus_per_process_matches_one_process(kvtype, on_kvstore, tmp_path):
    require_mpi()
    ref = str(tmp_path / 'single.npz')
    code, _, err, _ = run([sys.executable, script('module_fit.py'), 'single', '1', ref,
                           str(EPOCHS), str(LR)])
    assert code == 0, err
    path = str(tmp_path / 'p.npz')
    code, out, err, _ = run([sys.executable, '-m', 'mxmod.launch', '-n', '2', 'python',
                             os.path.join(HERE, 'dist_gpu_fit.py'), kvtype, '2', path, str(EPOCHS),
                             str(LR)], timeout=120, env={'MXNET_UPDATE_ON_KVSTORE': on_kvstore})
    assert code == 0, out + err[-4000:]
    want = dict(np.load(ref))
    ranks = [dict(np.load(path.replace('.npz', '.rank%d.npz' % r))) for r in range(2)]
    for name in ranks[0]:
        np.testing.assert_array_equal(ranks[0][name], ranks[1][name])
        np.testing.assert_allclose(ranks[0][name], want[name], rtol=1e-4, atol=1e-5, err_msg=name)
