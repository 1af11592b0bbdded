"""Freeze MXNet 1.9.1's optimizer trajectories into oracle_trajectories.npz / oracle_schedules.json.

Run from the repository root with the oracle's interpreter (it is skipped, not failed, without it):
    /tmp/mxnet-ref/bin/python -m mxmod_tests.optim.gen_oracle
It also writes oracle_adam_sched.states (an Updater pickle with the optimizer, after 3 steps of
case adam_default) and oracle_resume.npz (the weights then and after 2 more steps).
"""
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    import mxnet as mx  # pylint: disable=import-outside-toplevel
    from .driver import make_inputs, run_all, build_optimizer  # pylint: disable=import-outside-toplevel
    warnings.simplefilter('ignore')
    os.environ['MXNET_OPTIMIZER_AGGREGATION_SIZE'] = '4'
    inputs = make_inputs()
    arrays, schedules = run_all(mx, inputs)
    arrays.update({'input:' + k: v for k, v in inputs.items()})
    np.savez_compressed(os.path.join(HERE, 'oracle_trajectories.npz'), **arrays)
    with open(os.path.join(HERE, 'oracle_schedules.json'), 'w') as handle:
        json.dump(schedules, handle, indent=1, sort_keys=True)
    opt = build_optimizer(mx, 'adam_default')
    updater = mx.optimizer.get_updater(opt)
    weights = [mx.nd.array(inputs['adam_default:init%d' % i]) for i in range(2)]
    for k in range(3):
        updater([0, 1], [mx.nd.array(inputs['adam_default:grad%d_%d' % (i, k)]) for i in range(2)],
                weights)
    with open(os.path.join(HERE, 'oracle_adam_sched.states'), 'wb') as handle:
        handle.write(updater.get_states(dump_optimizer=True))
    resumed = {'resume:w%d_before' % i: w.asnumpy() for i, w in enumerate(weights)}
    for k in range(3, 5):
        updater([0, 1], [mx.nd.array(inputs['adam_default:grad%d_%d' % (i, k)]) for i in range(2)],
                weights)
    resumed.update({'resume:w%d_after' % i: w.asnumpy() for i, w in enumerate(weights)})
    np.savez_compressed(os.path.join(HERE, 'oracle_resume.npz'), **resumed)
    print('wrote %d arrays, %d schedules (python %s)' % (len(arrays), len(schedules),
                                                          sys.version.split()[0]))


if __name__ == '__main__':
    main()
