"""``python -m mxmod.tools.scaling``: will more machines help, and how should they talk?

Profile one process, then predict::

    python -m mxmod.tools.scaling profile --network resnet20 -o resnet20.json
    python -m mxmod.tools.scaling profile --symbol net-symbol.json --data-shape 64,3,32,32 -o p.json
    python -m mxmod.tools.scaling predict --profile resnet20.json --bandwidth 25Gbit/s \\
        --latency 20us --ranks-per-host 8 --plot scaling.png

``predict`` prints, for 1 to 1024 workers, the predicted step time and scaling efficiency with
ring all-reduce, hierarchical all-reduce and parameter servers (with an embedding cache when
``--cache-data-rate`` is given), and recommends a fusion bucket size (``MXMOD_KVSTORE_BUCKET_MB``)."""
import argparse
import json
import sys

import numpy as np

from ...base import MXNetError
from ...kvstore.net_emulation import parse_rate, parse_time
from . import model, profile, zoo

WORKERS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def _shape(text):
    try:
        return tuple(int(v) for v in text.split(','))
    except ValueError:
        raise argparse.ArgumentTypeError('expected comma-separated integers, got %r' % text) \
            from None


def cmd_profile(args):
    """Bind the network on one CPU, train a few steps on random data, write the profile."""
    import mxmod as mx  # pylint: disable=import-outside-toplevel
    if args.symbol:
        net = mx.sym.load(args.symbol)
        if not args.data_shape:
            raise MXNetError('--symbol needs --data-shape (with the batch size first)')
        data_shape, name = args.data_shape, args.symbol
    else:
        net, shape, batch = zoo.build(args.network)
        data_shape = args.data_shape or (args.batch_size or batch,) + shape
        name = args.network
    batch = data_shape[0]
    label_name = [n for n in net.list_arguments() if n.endswith('label')]
    mod = mx.mod.Module(net, label_names=label_name, context=mx.cpu())
    label_shapes = [(label_name[0], (batch,))] if label_name else None
    mod.bind([('data', data_shape)], label_shapes)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.01,
                                                          'momentum': 0.9})
    rs = np.random.RandomState(0)
    classes = mod.output_shapes[0][1][-1]
    labels = [mx.nd.array(rs.randint(0, classes, size=(batch,)))] if label_name else None
    data_batch = mx.io.DataBatch([mx.nd.array(rs.rand(*data_shape))], labels)
    result = profile.profile_module(mod, data_batch, steps=args.steps, name=name,
                                    threads=args.threads)
    profile.save_profile(result, args.output)
    total = sum(p['bytes'] for p in result['params'])
    print('%s: forward %.1f ms, backward %.1f ms, update %.1f ms, %d parameters, %.1f MB of '
          'gradients -> %s' % (name, 1e3 * result['forward_s'], 1e3 * result['backward_s'],
                               1e3 * result['update_s'], len(result['params']), total / 1e6,
                               args.output))


def _network(args):
    return model.Network(parse_rate(args.bandwidth), parse_time(args.latency),
                         ranks_per_host=args.ranks_per_host, cores_per_host=args.cores_per_host,
                         intra_bandwidth=parse_rate(args.intra_bandwidth))


def _scale(prof, args):
    if args.step_time:
        base = prof['forward_s'] + prof['backward_s'] + prof['update_s']
        return args.step_time / base
    return 1.0


def cmd_predict(args):
    """Print (and plot) the predictions."""
    prof = profile.load_profile(args.profile)
    net = _network(args)
    modes = args.modes.split(',')
    options = dict(overlap=not args.no_overlap, compute_scale=_scale(prof, args),
                   update_on_kvstore=not args.local_update)
    rows = {}
    for mode in modes:
        extra = dict(options, servers=args.servers, cache_data_rate=args.cache_data_rate)
        rows[mode] = [model.predict(prof, n, net, mode, _bucket(args), **extra)
                      for n in args.workers]
    _print_table(prof, args, rows)
    for mode in modes:
        size, best = model.recommend_bucket(prof, args.workers[-1], net, mode, **dict(
            options, servers=args.servers, cache_data_rate=args.cache_data_rate))
        print('%s at %d workers: bucket %.2f MB gives %.1f ms per step (efficiency %.2f); '
              'set MXMOD_KVSTORE_BUCKET_MB=%g' % (mode, args.workers[-1], size / 1048576.,
                                                  1e3 * best['step_s'], best['efficiency'],
                                                  size / 1048576.))
    if args.json:
        with open(args.json, 'w') as out:
            json.dump(rows, out, indent=1)
    if args.plot:
        _plot(prof, rows, args.plot)


def _bucket(args):
    return None if args.bucket_mb is None else int(args.bucket_mb * (1 << 20))


def _print_table(prof, args, rows):
    bucket = 'auto' if args.bucket_mb is None else '%.2f MB' % args.bucket_mb
    print('%s, %s link, %s latency, %d rank(s)/host, bucket %s, overlap %s'
          % (prof.get('name', 'model'), args.bandwidth, args.latency, args.ranks_per_host,
             bucket, 'off' if args.no_overlap else 'on'))
    header = '%8s' % 'workers' + ''.join('  %24s' % ('%s step ms / eff' % m) for m in rows)
    print(header)
    for i, workers in enumerate(args.workers):
        cells = ''.join('  %15.1f / %6.3f' % (1e3 * rows[m][i]['step_s'], rows[m][i]['efficiency'])
                        for m in rows)
        print('%8d%s' % (workers, cells))


def _plot(prof, rows, path):
    try:
        import matplotlib  # pylint: disable=import-outside-toplevel
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise MXNetError('--plot needs matplotlib: pip install mxmod[plot]') from None
    fig, ax = plt.subplots(figsize=(6, 4))
    for mode, results in rows.items():
        ax.plot([r['workers'] for r in results], [r['efficiency'] for r in results], 'o-',
                label=mode)
    ax.set_xscale('log', base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel('workers')
    ax.set_ylabel('scaling efficiency')
    ax.set_title('predicted scaling: %s' % prof.get('name', 'model'))
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print('plot written to %s' % path)


def _parser():
    parser = argparse.ArgumentParser(prog='python -m mxmod.tools.scaling',
                                     description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
    pro = sub.add_parser('profile', help='profile one process')
    pro.add_argument('--network', default='resnet20', choices=sorted(zoo.NAMES))
    pro.add_argument('--symbol', help='a -symbol.json file instead of a named network')
    pro.add_argument('--data-shape', type=_shape, help='input shape with the batch size first')
    pro.add_argument('--batch-size', type=int)
    pro.add_argument('--steps', type=int, default=5)
    pro.add_argument('--threads', type=int, default=1,
                     help='threads per rank to profile with (default 1: mxmod.launch gives each '
                          'of N ranks on a host cores // N)')
    pro.add_argument('-o', '--output', required=True)
    pre = sub.add_parser('predict', help='predict step times and efficiency')
    pre.add_argument('--profile', required=True)
    pre.add_argument('--bandwidth', default='25Gbit/s')
    pre.add_argument('--latency', default='20us')
    pre.add_argument('--ranks-per-host', type=int, default=1)
    pre.add_argument('--cores-per-host', type=int)
    pre.add_argument('--intra-bandwidth', default='40GB/s')
    pre.add_argument('--workers', type=_shape, default=WORKERS)
    pre.add_argument('--modes', default=','.join(model.MODES))
    pre.add_argument('--bucket-mb', type=float,
                     help='fusion bucket size (default: what mxmod picks for the model)')
    pre.add_argument('--servers', type=int, help='parameter servers (default: one per worker)')
    pre.add_argument('--cache-data-rate', type=float,
                     help='embedding cache: rows transferred per row requested (e.g. 0.15)')
    pre.add_argument('--no-overlap', action='store_true')
    pre.add_argument('--local-update', action='store_true',
                     help='the optimizer runs after the reduction, not on the kvstore')
    pre.add_argument('--step-time', type=float,
                     help='scale compute to this one-worker step time in seconds (e.g. a GPU)')
    pre.add_argument('--plot', help='write a PNG of efficiency against workers')
    pre.add_argument('--json', help='write every prediction as JSON')
    return parser


def main(argv=None):
    """Entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        (cmd_profile if args.command == 'profile' else cmd_predict)(args)
    except MXNetError as err:
        sys.stderr.write('mxmod.tools.scaling: %s\n' % err)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
