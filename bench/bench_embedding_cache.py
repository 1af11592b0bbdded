"""The embedding cache on the CTR workload (examples/train_ctr.py): data rate, bytes, time per
step and AUC with and without the cache, interleaved runs under ``mxmod.launch``.

    python bench/bench_embedding_cache.py [--samples 262144] [--rows-per-field 100000]
        [--epochs 3] [--net "bandwidth=1Gbit/s,latency=100us"] [--big] [--out DIR]

Cases (2 workers + 1 server, ``dist_sync`` hybrid: tables on the server, dense parameters
all-reduced): no cache; LFU with 10% of each table at bound 0, 10 and 100; LRU at bound 100;
LFU bound 100 without prefetch. The same no-cache / cache / no-prefetch trio again on the
emulated slower network, and once with 4 workers + 2 servers (oversubscribed: 6 processes on
this machine's 2 cores). Every run writes its per-epoch JSON (AUC, log-loss, counters of the
training steps of the epoch: rows asked, rows transferred, bytes, cache hits, waits) and its
training-loss curve into ``--out``; a summary table is printed, and with matplotlib a plot of
the loss curves is written beside them.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(os.path.dirname(HERE), 'examples', 'train_ctr.py')


def run(name, args, out_dir, cache='', workers=2, servers=1, net=None, extra=()):
    out = os.path.join(out_dir, name + '.json')
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    if net:
        env['MXMOD_NET_EMULATION'] = net
    cmd = [sys.executable, '-m', 'mxmod.launch', '-n', str(workers), '-s', str(servers),
           'python', EXAMPLE, '--kvstore', 'dist_sync', '--samples', str(args.samples),
           '--eval-samples', str(args.eval_samples), '--rows-per-field',
           str(args.rows_per_field), '--big-fields', str(args.big_fields), '--epochs',
           str(args.epochs), '--batch-size', str(args.batch_size), '--out', out,
           '--prefix', os.path.join(out_dir, name)] + list(extra)
    if cache:
        cmd += ['--cache', cache]
    tic = time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=7200)
    if proc.returncode:
        raise RuntimeError('%s failed:\n%s' % (name, proc.stderr[-4000:]))
    with open(out) as fin:
        result = json.load(fin)
    result['wall'] = time.time() - tic
    result['name'] = name
    return result


def summary(results):
    print('\n%-28s %7s %8s %9s %9s %10s %10s %8s %9s' % (
        'case (last epoch)', 'AUC', 'logloss', 'ms/step', 'rows/step', 'data rate',
        'KB/step', 'hit rate', 'wait ms'))
    for res in results:
        last = res['epochs'][-1]
        steps = max(last.get('steps', 1), 1)
        kbytes = sum(last.get(k, 0) for k in ('sparse_bytes_sent', 'sparse_bytes_received',
                                               'dense_bytes_sent', 'dense_bytes_received'))
        hits, misses = last.get('cache_hits', 0), last.get('cache_misses', 0)
        print('%-28s %7.4f %8.4f %9.1f %9.0f %10.3f %10.1f %8s %9.2f' % (
            res['name'], last['auc'], last['eval_logloss'],
            1e3 * last['seconds_train'] / last['steps_per_epoch'],
            last.get('rows_requested', 0) / steps, last.get('data_rate', float('nan')),
            kbytes / steps / 1024.,
            '%.3f' % (hits / float(hits + misses)) if hits + misses else '-',
            1e3 * last.get('row_wait_seconds', 0) / steps))


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for res in results:
        curve = res.get('train_curve') or []
        if curve:
            ax.plot([c[0] for c in curve], [c[1] for c in curve], label=res['name'])
    ax.set_xlabel('epoch')
    ax.set_ylabel('running training log-loss (worker 0)')
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--samples', type=int, default=262144)
    parser.add_argument('--eval-samples', type=int, default=32768)
    parser.add_argument('--rows-per-field', type=int, default=100000)
    parser.add_argument('--big-fields', type=int, default=0)
    parser.add_argument('--batch-size', type=int, default=512)
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--net', default='bandwidth=1Gbit/s,latency=100us')
    parser.add_argument('--skip-net', action='store_true')
    parser.add_argument('--skip-4x2', action='store_true')
    parser.add_argument('--out', default=os.path.join(HERE, 'embedding_cache_runs'))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    plan = [('no cache', ''), ('lfu 10% bound 0', 'lfu:0.1:0'),
            ('lfu 10% bound 10', 'lfu:0.1:10'), ('lfu 10% bound 100', 'lfu:0.1:100'),
            ('lru 10% bound 100', 'lru:0.1:100')]
    results = []
    for label, cache in plan:
        results.append(run(label.replace(' ', '_').replace('%', ''), args, args.out, cache))
        results[-1]['name'] = label
        print(label, json.dumps(results[-1]['epochs'][-1]), flush=True)
    results.append(run('lfu_bound_100_no_prefetch', args, args.out, 'lfu:0.1:100',
                       extra=['--no-prefetch']))
    results[-1]['name'] = 'lfu bound 100, no prefetch'
    if not args.skip_net:
        for label, cache, extra in (('net: no cache', '', ()),
                                    ('net: lfu bound 100', 'lfu:0.1:100', ()),
                                    ('net: lfu 100 no prefetch', 'lfu:0.1:100',
                                     ('--no-prefetch',))):
            results.append(run(label.replace(' ', '_').replace(':', ''), args, args.out, cache,
                               net=args.net, extra=extra))
            results[-1]['name'] = label
    if not args.skip_4x2:
        for label, cache in (('4w+2s: no cache', ''), ('4w+2s: lfu bound 100', 'lfu:0.1:100')):
            results.append(run(label.replace(' ', '_').replace(':', '').replace('+', ''), args,
                               args.out, cache, workers=4, servers=2))
            results[-1]['name'] = label
    with open(os.path.join(args.out, 'summary.json'), 'w') as fout:
        json.dump(results, fout, indent=1)
    summary(results)
    print('plot:', plot(results[:5], os.path.join(args.out, 'loss_curves.png')))


if __name__ == '__main__':
    main()
