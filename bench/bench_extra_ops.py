"""Operators added for MXNet's full library, timed side by side with MXNet 1.9.1: ROIAlign,
ROIPooling, box_nms, MultiBoxDetection, CTCLoss (forward with gradient), BilinearResize2D,
Correlation, GridGenerator + BilinearSampler, linalg potrf/gelqf, erf/gammaln.

Each round runs one worker process per implementation (MXNet first, then mxmod, alternating the
order every round), single-threaded; a worker times every workload (imperative ``mx.nd`` calls,
results waited for) as process CPU time per call. Printed: medians over rounds and the ratio
mxmod / MXNet (below 1: mxmod faster).

    python bench/bench_extra_ops.py [--rounds 5] [--mxnet-python /tmp/mxnet-ref/bin/python]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def workloads(mx):
    """name -> (function of no arguments, calls per timing)."""
    rng = np.random.RandomState(0)
    nd = mx.nd
    feat = nd.array(rng.uniform(-1, 1, (1, 256, 38, 38)))
    lo = rng.uniform(0, 200, (128, 2))
    rois = nd.array(np.concatenate([np.zeros((128, 1)), lo, lo + rng.uniform(20, 100, (128, 2))], 1))
    dets = np.concatenate([rng.randint(0, 20, (4, 1000, 1)), rng.uniform(0, 1, (4, 1000, 1)),
                           np.sort(rng.uniform(0, 1, (4, 1000, 2, 2)), 2).reshape(4, 1000, 4)], -1)
    dets = nd.array(dets)
    anchors = nd.array(np.sort(rng.uniform(0, 1, (1, 2000, 2, 2)), 2).reshape(1, 2000, 4))
    probs = nd.softmax(nd.array(rng.uniform(-2, 2, (2, 21, 2000))), axis=1)
    locs = nd.array(rng.uniform(-0.5, 0.5, (2, 8000)))
    acts = nd.array(rng.uniform(-2, 2, (50, 16, 30)))
    labels = nd.array(rng.randint(1, 30, (16, 10)))
    img = nd.array(rng.uniform(-1, 1, (4, 64, 32, 32)))
    flow1, flow2 = (nd.array(rng.uniform(-1, 1, (1, 64, 24, 32))) for _ in range(2))
    theta = nd.array(np.tile([[0.9, 0.1, 0.05, -0.1, 0.95, 0.02]], (4, 1)))
    pic = nd.array(rng.uniform(-1, 1, (4, 32, 64, 64)))
    spd = rng.uniform(-1, 1, (64, 32, 32))
    spd = nd.array(spd @ spd.transpose(0, 2, 1) + 32 * np.eye(32))
    wide = nd.array(rng.uniform(-1, 1, (64, 16, 32)))
    values = nd.array(rng.uniform(0.1, 4, (256, 1024)))

    def grid_sample():
        grid = nd.GridGenerator(theta, transform_type='affine', target_shape=(64, 64))
        return nd.BilinearSampler(pic, grid)

    ctc = mx.sym.ctc_loss(mx.sym.var('data'), mx.sym.var('label'))
    ctc_exe = ctc.bind(mx.cpu(), {'data': acts, 'label': labels},
                       args_grad={'data': nd.zeros(acts.shape)},
                       grad_req={'data': 'write', 'label': 'null'})

    def ctc_with_gradient():
        ctc_exe.forward(is_train=True)
        ctc_exe.backward([nd.ones((16,))])
        return ctc_exe.grad_dict['data']

    return {
        'ROIAlign 128x256x7x7': (lambda: nd.contrib.ROIAlign(feat, rois, pooled_size=(7, 7),
                                                             spatial_scale=1 / 16.), 3),
        'ROIPooling 128x256x7x7': (lambda: nd.ROIPooling(feat, rois, pooled_size=(7, 7),
                                                         spatial_scale=1 / 16.), 3),
        'box_nms 4x1000': (lambda: nd.contrib.box_nms(dets, overlap_thresh=0.5, topk=400,
                                                      id_index=0), 3),
        'MultiBoxDetection 2x21x2000': (lambda: nd.contrib.MultiBoxDetection(
            probs, locs, anchors, nms_topk=400), 3),
        'CTCLoss+grad T50 B16 A30': (ctc_with_gradient, 3),
        'BilinearResize2D 4x64 32->64': (lambda: nd.contrib.BilinearResize2D(
            img, height=64, width=64), 10),
        'Correlation 64ch 24x32 d4': (lambda: nd.Correlation(
            flow1, flow2, kernel_size=1, max_displacement=4, stride2=1, pad_size=4), 3),
        'GridGenerator+BilinearSampler': (grid_sample, 5),
        'linalg.potrf 64x32x32': (lambda: nd.linalg.potrf(spd), 20),
        'linalg.gelqf 64x16x32': (lambda: nd.linalg.gelqf(wide)[0], 20),
        'erf+gammaln 256x1024': (lambda: nd.erf(values) + nd.gammaln(values), 10),
    }


def worker(name):
    """Time every workload in this process; print {workload: seconds per call} as JSON."""
    if name == 'mxmod':
        sys.path.insert(0, os.path.dirname(HERE))
        import mxmod as mx
    else:
        import mxnet as mx
    out = {}
    for key, (fn, calls) in workloads(mx).items():
        fn().wait_to_read()                       # warm up (and allocate)
        best = []
        for _ in range(3):
            start = time.process_time()
            for _ in range(calls):
                fn().wait_to_read()
            best.append((time.process_time() - start) / calls)
        out[key] = min(best)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--mxnet-python', default='/tmp/mxnet-ref/bin/python')
    ap.add_argument('--worker')
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1',
               MXNET_ENGINE_TYPE='NaiveEngine', MXNET_CPU_WORKER_NTHREADS='1')
    runs = {'mxnet': [], 'mxmod': []}
    for r in range(args.rounds):
        order = ['mxnet', 'mxmod'] if r % 2 == 0 else ['mxmod', 'mxnet']
        for name in order:
            python = args.mxnet_python if name == 'mxnet' else sys.executable
            proc = subprocess.run([python, __file__, '--worker', name], env=env,
                                  capture_output=True, text=True, check=True)
            runs[name].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print('%-32s %12s %12s %8s' % ('workload', 'MXNet ms', 'mxmod ms', 'ratio'))
    for key in runs['mxnet'][0]:
        ref = np.median([run[key] for run in runs['mxnet']]) * 1e3
        ours = np.median([run[key] for run in runs['mxmod']]) * 1e3
        print('%-32s %12.3f %12.3f %8.2f' % (key, ref, ours, ours / ref))


if __name__ == '__main__':
    main()
