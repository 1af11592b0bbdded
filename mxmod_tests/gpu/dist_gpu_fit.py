"""MPI worker script: dist_sync / dist_device_sync Module.fit with two emulated GPUs per process.

Usage: dist_gpu_fit.py KVSTORE NUM_GPUS OUT.npz EPOCHS LEARNING_RATE (run under mxmod.launch).
The data, network and initial parameters are those of kvstore/dist_scripts/module_fit.py; each
rank writes its final parameters to OUT.npz with ``.rank<r>`` inserted."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import mxmod as mx  # noqa: E402
from mxmod_tests.gpu_emulation import emulated_gpus  # noqa: E402
from mxmod_tests.kvstore.dist_scripts import module_fit  # noqa: E402


def main(kvtype, ngpu, out, epochs, lr):
    X, y = module_fit.data()
    kv = mx.kv.create(kvtype)
    Xr, yr, batch = module_fit.shard(X, y, kv.rank, kv.num_workers)
    train = mx.io.NDArrayIter(Xr, yr, batch_size=batch, shuffle=False, label_name='softmax_label')
    mod = mx.mod.Module(module_fit.network(), context=[mx.gpu(i) for i in range(ngpu)])
    mod.fit(train, eval_metric='acc', kvstore=kv, optimizer='sgd',
            optimizer_params={'learning_rate': lr, 'momentum': 0.9, 'wd': 1e-3},
            arg_params=module_fit.initial_params(), num_epoch=epochs)
    args, _ = mod.get_params()
    devices = sorted({e.arg_dict['fc1_weight']._data.device.id for e in mod._exec_group.execs})
    assert devices == list(range(ngpu)), devices
    np.savez(out.replace('.npz', '.rank%d.npz' % kv.rank), **{k: v.asnumpy() for k, v in args.items()})
    kv.barrier()


if __name__ == '__main__':
    with emulated_gpus(2):
        main(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
