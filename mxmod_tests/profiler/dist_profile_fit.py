"""A profiled data-parallel ``Module.fit`` (run under ``python -m mxmod.launch -n 2``): every
rank writes its trace to ``TRACE`` with ``{rank}`` replaced (or ``.rank<r>`` inserted when the
name has no ``{rank}``).

Usage: dist_profile_fit.py TRACE KVSTORE"""
import sys

import numpy as np

import mxmod as mx


def main(trace, kvstore):
    rng = np.random.RandomState(0)
    data = rng.randn(64, 6).astype(np.float32)
    label = (data[:, 0] > 0).astype(np.float32)
    train = mx.io.NDArrayIter(data, label, batch_size=8)
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2,
                                                     name='fc'), name='softmax')
    mx.profiler.set_config(profile_all=True, filename=trace, aggregate_stats=True,
                           continuous_dump=False)
    mx.profiler.set_state('run')
    mod = mx.mod.Module(net, context=[mx.cpu(0), mx.cpu(1)])
    mod.fit(train, num_epoch=1, kvstore=kvstore, optimizer_params={'learning_rate': 0.1})
    mx.profiler.set_state('stop')
    mx.profiler.dump()


if __name__ == '__main__':
    main(*sys.argv[1:])
