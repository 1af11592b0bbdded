"""The scaling model checked against measurement: predictions from one profiled process against
step times measured with 2 and 4 local ranks (dist_sync, overlap on) under two emulated networks.

    python bench/bench_scaling_model.py [--workload resnet20] [--networks 20Mbit/s,200Mbit/s]

Each rank runs one BLAS thread; with more ranks than cores the ranks share them, which the model
is told (``cores_per_host``). Prints measured and predicted step times and their ratio."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import mxmod as mx  # noqa: E402
from mxmod.threads import available_cores  # noqa: E402
from mxmod.kvstore.net_emulation import parse  # noqa: E402
from mxmod.tools.scaling import model as scaling, profile as profiling  # noqa: E402
from mxmod.module.overlap_policy import fit_step  # noqa: E402
from bench_overlap import make_module  # noqa: E402


def worker(args):
    kv = mx.kv.create('dist_sync')
    mod, batch = make_module(args.workload, kv)
    times = []
    for step in range(args.warmup + args.steps):
        kv.barrier()
        tic = time.perf_counter()
        with fit_step(mod):         # as fit runs a step (its backward may overlap)
            mod.forward_backward(batch)
        mod.update()
        mod._drain_comm()
        if step >= args.warmup:
            times.append(time.perf_counter() - tic)
    if kv.rank == 0:
        with open(args.out, 'w') as out:
            json.dump({'step_s': float(np.median(times))}, out)
    kv.barrier()


def measure(args, workers, link):
    out = tempfile.mktemp(suffix='.json')
    env = dict(os.environ, MXMOD_NET_EMULATION=link, OMP_NUM_THREADS='1',
               OPENBLAS_NUM_THREADS='1', PYTHONPATH=os.path.dirname(HERE))
    cmd = [sys.executable, '-m', 'mxmod.launch', '-n', str(workers), 'python',
           os.path.abspath(__file__), '--worker', '--workload', args.workload, '--out', out,
           '--steps', str(args.steps), '--warmup', str(args.warmup)]
    subprocess.run(cmd, env=env, check=True, timeout=3600)
    with open(out) as handle:
        return json.load(handle)['step_s']


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--workload', default='resnet20')
    parser.add_argument('--networks', default='20Mbit/s,200Mbit/s')
    parser.add_argument('--latency', default='50us')
    parser.add_argument('--ranks', default='2,4')
    parser.add_argument('--steps', type=int, default=6)
    parser.add_argument('--warmup', type=int, default=2)
    parser.add_argument('--json')
    parser.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--out', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    mod, batch = make_module(args.workload, None)
    prof = profiling.profile_module(mod, batch, steps=args.steps, name=args.workload, threads=1)
    cores = available_cores()
    rows = []
    print('%-10s %6s %12s %12s %8s' % ('network', 'ranks', 'measured ms', 'predicted ms', 'ratio'))
    for bandwidth in args.networks.split(','):
        link = 'bandwidth=%s,latency=%s' % (bandwidth, args.latency)
        emulated = parse(link)
        for workers in [int(n) for n in args.ranks.split(',')]:
            net = scaling.Network(emulated.bandwidth, emulated.latency, ranks_per_host=workers,
                                  cores_per_host=cores)
            predicted = scaling.predict(prof, workers, net, 'ring')['step_s']
            measured = measure(args, workers, link)
            rows.append({'network': bandwidth, 'ranks': workers, 'measured_s': measured,
                         'predicted_s': predicted})
            print('%-10s %6d %12.1f %12.1f %8.3f' % (bandwidth, workers, 1e3 * measured,
                                                     1e3 * predicted, predicted / measured))
    if args.json:
        with open(args.json, 'w') as out:
            json.dump({'profile': prof, 'rows': rows}, out, indent=1)


if __name__ == '__main__':
    main()
