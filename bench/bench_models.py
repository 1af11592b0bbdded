"""Whole-model training speed and peak memory: mxmod against MXNet 1.9.1 and PyTorch, side by
side in one run.

Workloads (bench/workloads.py): ``mlp``, ``lenet``, ``resnet`` (ResNet-20, 3x32x32, batch 64)
and ``lstm`` (BucketingModule language model); the MXNet program runs unchanged on mxmod.

Each implementation runs in its own worker process, started afresh for each workload (so that
its peak resident memory is that workload's); after one untimed warm-up epoch the driver asks the
workers in turn for one timed epoch each, round after round, and reports medians, per-round
ratios and peak RSS. ``--env`` chooses the thread settings the workers see: ``pinned`` (one
thread: OMP/OPENBLAS/MKL_NUM_THREADS=1, the default), ``default`` (no thread variable at all:
each library's own default), or ``both``; ``--load N`` keeps N other processes busy meanwhile.
bench/README.md describes the options.

    python bench/bench_models.py                  # all workloads, all implementations found
    python bench/bench_models.py --quick          # small epochs, 3 rounds
    python bench/bench_models.py --workloads resnet --env both --load 1    # defaults under load
    python bench/bench_models.py --workloads lenet --baseline /tmp/base   # before/after
"""
import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time

import workloads as wl

HERE = os.path.dirname(os.path.abspath(__file__))
IMPLS = ('mxmod', 'mxnet', 'torch')
THREAD_VARS = ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS', 'MXMOD_NUM_THREADS')
PINNED = '@1t'          # label suffix of a pinned worker when --env both


def memory_kib():
    """(resident now, peak resident) of this process in KiB, from /proc/self/status."""
    found = {}
    try:
        with open('/proc/self/status') as handle:
            for line in handle:
                if line.startswith(('VmRSS:', 'VmHWM:')):
                    found[line[:5]] = int(line.split()[1])
    except OSError:
        pass
    return found.get('VmRSS'), found.get('VmHWM')


def machine_busy():
    """CPU seconds all processes used since boot (/proc/stat), or None where unreadable: with
    the worker's own CPU time it gives what other processes used meanwhile."""
    try:
        with open('/proc/stat', 'rb') as handle:
            ticks = [int(f) for f in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf('SC_CLK_TCK')


def worker_main(args):
    """Answer JSON command lines on stdin, one JSON line each on stdout:
    {"setup": workload, "size": n, "batch": b} builds a model and trains the warm-up epoch,
    {"run": 1} trains one timed epoch, {"finite": 1} checks the parameters and reports memory,
    anything else ends."""
    reply = os.fdopen(os.dup(1), 'w')
    os.dup2(2, 1)               # whatever the frameworks print goes to stderr, not the protocol
    logging.basicConfig(level=logging.ERROR)
    worker = None
    for line in sys.stdin:
        cmd = json.loads(line)
        if 'setup' in cmd:
            tic = time.perf_counter()
            if args.worker == 'torch':
                worker = wl.TorchWorker(cmd['setup'], cmd['size'], cmd['batch'], args.threads)
            else:
                worker = wl.MXWorker(args.worker, cmd['setup'], cmd['size'], cmd['batch'])
            setup_s = time.perf_counter() - tic
            worker.run_epoch()
            out = {'units': worker.units, 'warmup_s': time.perf_counter() - tic,
                   'setup_s': setup_s, 'rss_after_setup_kib': memory_kib()[0]}
        elif 'run' in cmd:
            cpu, busy = time.process_time(), machine_busy()
            seconds, metric = worker.run_epoch()
            cpu = time.process_time() - cpu
            out = {'seconds': seconds, 'cpu_seconds': cpu, 'units': worker.units,
                   'metric': metric}
            if busy is not None:
                out['others_cores'] = ((machine_busy() - busy) - cpu) / seconds
        elif 'finite' in cmd:
            out = {'params_finite': worker.finite(), 'peak_rss_kib': memory_kib()[1]}
        else:
            break
        reply.write(json.dumps(out) + '\n')
        reply.flush()


# ---- driver ------------------------------------------------------------------------------------
class WorkerProcess:
    """A worker subprocess speaking the protocol of :func:`worker_main`. ``threads`` None runs it
    with no thread variable set (each library's default)."""

    def __init__(self, label, impl, python, threads, baseline=None):
        self.impl = label
        env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
        env['BENCH_MXMOD_ROOT'] = baseline or ''
        if threads:
            env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                       MKL_NUM_THREADS=str(threads))
        self.log = tempfile.TemporaryFile(mode='w+')
        cmd = [python, os.path.abspath(__file__), '--worker', impl,
               '--threads', str(threads or 0)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, env=env, text=True, cwd=HERE)

    def send(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + '\n')
        self.proc.stdin.flush()

    def receive(self):
        """The next JSON reply; RuntimeError with the worker's stderr if it died."""
        answer = self.proc.stdout.readline()
        if not answer:
            self.proc.wait()
            self.log.seek(0)
            raise RuntimeError('%s worker exited with status %s:\n%s' % (
                self.impl, self.proc.returncode, self.log.read()[-3000:]))
        return json.loads(answer)

    def request(self, **cmd):
        try:
            self.send(**cmd)
        except (BrokenPipeError, OSError):
            pass                # receive() reports why
        return self.receive()

    def close(self):
        try:
            self.send(quit=1)
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        self.proc.wait()
        self.log.close()


class Load:
    """``count`` busy processes (each spins one core) for the lifetime of the context."""

    def __init__(self, count):
        self.count = count
        self.procs = []

    def __enter__(self):
        code = 'import time\nwhile True:\n    time.perf_counter()\n'
        self.procs = [subprocess.Popen([sys.executable, '-c', code]) for _ in range(self.count)]
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
            proc.wait()
        return False


def interpreters(args):
    """[(label, impl, python, threads)] for the requested implementations that are available,
    and notes for the rest."""
    found, notes = [], []
    paths = {'mxmod': sys.executable, 'mxnet': args.mxnet_python, 'torch': args.torch_python,
             'baseline': sys.executable}
    if args.baseline:
        if not os.path.isdir(os.path.join(args.baseline, 'mxmod')):
            raise SystemExit('--baseline: no mxmod package in %s' % args.baseline)
        args.baseline = os.path.abspath(args.baseline)
        args.impls.insert(1, 'baseline')
    for impl in args.impls:
        if not os.path.exists(paths[impl]):
            notes.append('%s skipped: %s not found' % (impl, paths[impl]))
            continue
        if args.env in ('default', 'both'):
            found.append((impl, impl, paths[impl], None))
        if args.env in ('pinned', 'both'):
            label = impl + PINNED if args.env == 'both' else impl
            found.append((label, impl, paths[impl], args.threads))
    return found, notes


def start_workers(args, workload, pythons, notes):
    """Fresh workers for ``workload``, set up one after another: ({label: worker},
    {label: ready reply}). Each warm-up runs alone, so that a runtime that adapts its threads to
    the machine's load warms up the paths its timed epochs take (with overlapping warm-ups, an
    adaptive worker warmed up on one thread and compiled its multi-thread paths in its first
    timed epoch)."""
    workers = {label: WorkerProcess(label, impl, python, threads, args.baseline)
               for label, impl, python, threads in pythons}
    ready = {}
    for label, proc in list(workers.items()):
        try:
            proc.send(setup=workload, size=args.size[workload], batch=args.batch[workload])
            ready[label] = proc.receive()
        except RuntimeError as err:
            notes.append('%s %s failed to start: %s' % (workload, label, err))
            del workers[label]
    return workers, ready


def timed_rounds(args, workload, workers, records, notes):
    """Interleaved timed epochs, the order rotating every round."""
    for rnd in range(args.rounds):
        order = list(workers)
        order = order[rnd % len(order):] + order[:rnd % len(order)] if order else order
        for label in order:
            try:
                res = workers[label].request(run=1)
            except RuntimeError as err:
                notes.append('%s %s failed in round %d: %s' % (workload, label, rnd, err))
                del workers[label]
                continue
            records[label]['per_round'].append(res['units'] / res['seconds'])
            records[label]['others_per_round'].append(res.get('others_cores'))
            records[label]['cpu_per_round'].append(res['units'] / res['cpu_seconds'])
            records[label]['metric'] = res['metric']


def bench_workload(args, workload, pythons, notes):
    """Start workers, run the interleaved rounds, collect memory; {label: record}."""
    workers, ready = start_workers(args, workload, pythons, notes)
    records = {label: {'warmup_s': r['warmup_s'], 'setup_s': r['setup_s'],
                       'rss_after_setup_kib': r['rss_after_setup_kib'],
                       'units_per_epoch': r['units'], 'per_round': [], 'cpu_per_round': [],
                       'others_per_round': [],
                       'metric': None} for label, r in ready.items()}
    try:
        timed_rounds(args, workload, workers, records, notes)
        for label, proc in list(workers.items()):
            try:
                records[label].update(proc.request(finite=1))
            except RuntimeError as err:
                notes.append('%s %s failed: %s' % (workload, label, err))
    finally:
        for proc in workers.values():
            proc.close()
    return {label: rec for label, rec in records.items() if rec['per_round']}


def summarise(workload, records):
    """Median throughputs (wall clock and process CPU time) and per-round ratios, paired by
    round: mxmod / every other worker, and each implementation / its own pinned worker."""
    out = {'workload': workload, 'unit': wl.UNITS[workload], 'impls': {}, 'ratios': {}}
    for label, rec in records.items():
        rates = rec['per_round']
        out['impls'][label] = dict(rec, median=statistics.median(rates), min=min(rates),
                                   max=max(rates),
                                   cpu_median=statistics.median(rec['cpu_per_round']))
    pairs = [('mxmod', label) for label in records if label != 'mxmod']
    pairs += [(label, label + PINNED) for label in records if label + PINNED in records
              and label != 'mxmod']
    for num, den in pairs:
        if num not in records:
            continue
        a, b = records[num], records[den]
        wall = [x / y for x, y in zip(a['per_round'], b['per_round'])]
        cpu = [x / y for x, y in zip(a['cpu_per_round'], b['cpu_per_round'])]
        out['ratios']['%s/%s' % (num, den)] = {
            'median': statistics.median(wall), 'min': min(wall), 'max': max(wall),
            'cpu_median': statistics.median(cpu)}
    return out


def report(summary, args):
    workload, unit = summary['workload'], summary['unit']
    print('%s (batch %d, %d %s per epoch, %d rounds, env %s, load %d) [%s; cpu: per second of '
          'process CPU time; rss: peak resident MiB]'
          % (workload, args.batch[workload], args.size[workload],
             'sentences generated' if workload == 'lstm' else 'samples', args.rounds, args.env,
             args.load, unit))
    others = [o for rec in summary['impls'].values() for o in rec.get('others_per_round', [])
              if o is not None]
    if others:
        print('  other processes meanwhile: %.2f cores at most, %.2f median (per timed epoch)'
              % (max(others), statistics.median(others)))
    for label, rec in summary['impls'].items():
        peak = rec.get('peak_rss_kib')
        print('  %-11s median %8.1f  min %8.1f  max %8.1f  cpu %8.1f  warm-up %5.1f s  rss %6s  '
              'finite=%s  %s' % (label, rec['median'], rec['min'], rec['max'], rec['cpu_median'],
                                 rec['warmup_s'], '%.0f' % (peak / 1024.0) if peak else '?',
                                 rec.get('params_finite'), rec['metric']))
    for name, ratio in summary['ratios'].items():
        print('  ratio %-22s %.3f  (rounds %.3f .. %.3f)  cpu %.3f' % (
            name, ratio['median'], ratio['min'], ratio['max'], ratio['cpu_median']))
    sys.stdout.flush()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--workloads', default=','.join(wl.WORKLOADS),
                   help='comma-separated subset of %s' % ','.join(wl.WORKLOADS))
    p.add_argument('--impls', default=','.join(IMPLS),
                   help='comma-separated subset of %s' % ','.join(IMPLS))
    p.add_argument('--rounds', type=int, default=None, help='timed epochs per implementation '
                   '(default 5, 3 with --quick)')
    p.add_argument('--quick', action='store_true', help='small epochs and 3 rounds')
    for name in wl.WORKLOADS:
        p.add_argument('--%s-%s' % (name, 'sentences' if name == 'lstm' else 'samples'),
                       type=int, dest='%s_size' % name, default=None,
                       help='epoch size (default %d, %d with --quick)' % (wl.SIZE[name],
                                                                          wl.QUICK_SIZE[name]))
        p.add_argument('--%s-batch' % name, type=int, default=wl.BATCH[name],
                       dest='%s_batch' % name)
    p.add_argument('--threads', type=int, default=1, help='threads of a pinned worker (1)')
    p.add_argument('--env', choices=('pinned', 'default', 'both'), default='pinned',
                   help='thread variables of the workers: pinned to --threads, unset, or both')
    p.add_argument('--load', type=int, default=0, help='busy processes to run meanwhile (0)')
    p.add_argument('--mxnet-python', default=os.environ.get('MXNET_ORACLE_PYTHON',
                                                            '/tmp/mxnet-ref/bin/python'))
    p.add_argument('--torch-python', default='/tmp/venv_torch/bin/python')
    p.add_argument('--json', default=None, help='also write the results to this file')
    p.add_argument('--baseline', default=None, metavar='DIR',
                   help="also run the mxmod of another checkout DIR as 'baseline' (before/after: "
                        "git worktree add /tmp/base HEAD~1)")
    p.add_argument('--worker', choices=IMPLS + ('baseline',), help=argparse.SUPPRESS)  # internal
    return p.parse_args(argv)


def _checked(text, allowed, what):
    items = [t.strip() for t in text.split(',') if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise SystemExit('--%s: expected a comma-separated subset of %s, got %r'
                         % (what, ','.join(allowed), text))
    return items


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        args.threads = args.threads or None
        worker_main(args)
        return
    workloads = _checked(args.workloads, wl.WORKLOADS, 'workloads')
    args.impls = _checked(args.impls, IMPLS, 'impls')
    args.rounds = args.rounds or (3 if args.quick else 5)
    sizes = wl.QUICK_SIZE if args.quick else wl.SIZE
    args.size = {w: getattr(args, '%s_size' % w) or sizes[w] for w in wl.WORKLOADS}
    args.batch = {w: getattr(args, '%s_batch' % w) for w in wl.WORKLOADS}
    pythons, notes = interpreters(args)
    for note in notes:
        print('note:', note)
    early = len(notes)
    results = []
    with Load(args.load):
        for workload in workloads:
            results.append(summarise(workload, bench_workload(args, workload, pythons, notes)))
            report(results[-1], args)
    for note in notes[early:]:
        print('note:', note)
    if args.json:
        with open(args.json, 'w') as handle:
            json.dump({'results': results, 'notes': notes, 'threads': args.threads,
                       'env': args.env, 'load': args.load, 'rounds': args.rounds,
                       'loadavg_end': os.getloadavg()}, handle, indent=1)


if __name__ == '__main__':
    main()
