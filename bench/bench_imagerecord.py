"""ImageRecordIter against MXNet 1.9.1: decoded-batch equality and throughput, side by side.

    python bench/bench_imagerecord.py [--images 3000] [--rounds 5] [--threads 2] [--dir DIR]

Generates a .rec of JPEGs (random sizes 256-420 px, smooth colour fields with texture, quality
90) with mxmod.recordio, then

1. equality: the first batches of a deterministic setting (resize 256, centre crop 224, mean/std)
   from mxmod and MXNet, compared element-wise (max |difference|, share of differing values);
2. throughput: 3x224x224, batch 64, rand_crop + rand_mirror, ``--threads`` preprocess threads;
   each implementation runs in its own long-lived worker, one untimed warm-up epoch, then one
   timed epoch per worker per round in rotating order; prints images/s medians and the median
   of the per-round ratio mxmod / MXNet.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MXNET_PY = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')

SETTINGS = {
    'equal': dict(data_shape=(3, 224, 224), batch_size=16, resize=256, mean_r=123.68,
                  mean_g=116.28, mean_b=103.53, std_r=58.395, std_g=57.12, std_b=57.375,
                  preprocess_threads=2),
    'speed': dict(data_shape=(3, 224, 224), batch_size=64, rand_crop=True, rand_mirror=True),
}


def make_rec(path, count, seed=0):
    """Write ``count`` JPEG records (and an .idx) to ``path``."""
    import numpy as np
    sys.path.insert(0, ROOT)
    from mxmod import recordio
    from mxmod.image.codec import require_cv2
    cv2 = require_cv2()
    rng = np.random.RandomState(seed)
    writer = recordio.MXIndexedRecordIO(path[:-4] + '.idx', path, 'w')
    for i in range(count):
        h, w = rng.randint(256, 421, size=2)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        base = rng.uniform(0, 255, 3) + np.stack(
            [np.sin(xx / rng.uniform(10, 60)) * 60, np.cos(yy / rng.uniform(10, 60)) * 60,
             (xx + yy) / (h + w) * 80], -1)
        noise = cv2.GaussianBlur(rng.normal(0, 30, (h, w, 3)).astype(np.float32), (0, 0), 1.5)
        img = np.clip(base + noise, 0, 255).astype(np.uint8)
        writer.write_idx(i, recordio.pack_img((0, float(i % 10), i, 0), img, quality=90))
    writer.close()


WORKER = r'''
import json, os, sys, time
import numpy as np
impl, rec, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
if impl == 'mxmod':
    sys.path.insert(0, sys.argv[4])
    import mxmod as mx
else:
    import mxnet as mx
settings = json.loads(sys.argv[5])
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == 'dump':
        cfg = dict(settings['equal'])
        it = mx.io.ImageRecordIter(path_imgrec=rec, **cfg)
        batches = [next(it).data[0].asnumpy() for _ in range(int(cmd[2]))]
        np.save(cmd[1], np.concatenate(batches))
        print('done', flush=True)
    elif cmd[0] == 'make':
        cfg = dict(settings['speed'], preprocess_threads=threads)
        it = mx.io.ImageRecordIter(path_imgrec=rec, **cfg)
        for _ in it:
            pass
        print('done', flush=True)
    elif cmd[0] == 'epoch':
        it.reset()
        wall, cpu, n = time.perf_counter(), time.process_time(), 0
        for batch in it:
            n += batch.data[0].shape[0] - batch.pad
        print(json.dumps([n, time.perf_counter() - wall, time.process_time() - cpu]), flush=True)
'''


class Worker(object):
    """One implementation in a subprocess that answers commands on stdin."""

    def __init__(self, impl, python, rec, threads):
        env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1',
                   MXNET_CPU_WORKER_NTHREADS='1')
        self.impl = impl
        self.proc = subprocess.Popen(
            [python, '-c', WORKER, impl, rec, str(threads), ROOT,
             json.dumps(SETTINGS)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env, text=True)

    def ask(self, line):
        self.proc.stdin.write(line + '\n')
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError('%s worker died on %r' % (self.impl, line))
        return answer.strip()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def compare(workers, tmp, nbatch):
    """Max |difference| and share of differing values between the dumped batches."""
    import numpy as np
    arrays = {}
    for w in workers:
        path = os.path.join(tmp, 'dump_%s.npy' % w.impl)
        w.ask('dump %s %d' % (path, nbatch))
        arrays[w.impl] = np.load(path)
    if len(arrays) < 2:
        return None
    a, b = arrays['mxmod'].astype(np.float64), arrays['mxnet'].astype(np.float64)
    diff = np.abs(a - b)
    std = np.array(SETTINGS['equal']['std_r'])
    return {'values': int(a.size), 'max_abs_diff': float(diff.max()),
            'max_diff_in_pixel_levels': float(diff.max() * std),
            'share_differing': float((diff > 0).mean()),
            'mean_abs_diff': float(diff.mean())}


def throughput(workers, rounds):
    """Per-round images/s (wall and CPU) of each worker, interleaved in rotating order."""
    for w in workers:
        w.ask('make')
    rates = {w.impl: [] for w in workers}
    cpu = {w.impl: [] for w in workers}
    for r in range(rounds):
        order = workers[r % len(workers):] + workers[:r % len(workers)]
        for w in order:
            n, wall, proc = json.loads(w.ask('epoch'))
            rates[w.impl].append(n / wall)
            cpu[w.impl].append(proc / n * 1e3)
    return rates, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--images', type=int, default=3000)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--dir', help='where to keep the generated .rec (default: a temp dir)')
    ap.add_argument('--json', help='write the figures here')
    args = ap.parse_args()
    tmp = args.dir or tempfile.mkdtemp(prefix='bench_imagerecord_')
    rec = os.path.join(tmp, 'bench_%d.rec' % args.images)
    if not os.path.exists(rec):
        t0 = time.time()
        make_rec(rec, args.images)
        print('generated %s (%d images, %.1f MB) in %.0f s'
              % (rec, args.images, os.path.getsize(rec) / 2**20, time.time() - t0))
    impls = [('mxmod', sys.executable)]
    if os.path.exists(MXNET_PY):
        impls.append(('mxnet', MXNET_PY))
    else:
        print('no MXNet at %s: mxmod only' % MXNET_PY)
    workers = [Worker(name, py, rec, args.threads) for name, py in impls]
    try:
        equal = compare(workers, tmp, 4)
        print('equality (deterministic resize 256 + centre crop 224 + mean/std):', equal)
        rates, cpu = throughput(workers, args.rounds)
    finally:
        for w in workers:
            w.close()
    report = {'equality': equal, 'images_per_s': rates, 'cpu_ms_per_image': cpu}
    for name in rates:
        print('%-6s images/s median %.0f (min %.0f max %.0f); CPU ms/image median %.2f'
              % (name, statistics.median(rates[name]), min(rates[name]), max(rates[name]),
                 statistics.median(cpu[name])))
    if 'mxnet' in rates:
        ratios = [a / b for a, b in zip(rates['mxmod'], rates['mxnet'])]
        report['ratio_mxmod_over_mxnet'] = ratios
        print('throughput ratio mxmod / MXNet: median %.2f (per round: %s)'
              % (statistics.median(ratios), ', '.join('%.2f' % r for r in ratios)))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(report, f, indent=1)


if __name__ == '__main__':
    main()
