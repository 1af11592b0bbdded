"""Executor benchmarks: per-operator Python overhead, and backward mirroring's memory/time trade.

    python bench/bench_executor.py            # mxmod, and MXNet 1.9.1 side by side when
                                              # /tmp/mxnet-ref/bin/python (or $MXNET_ORACLE_PYTHON) exists

1. overhead: a chain of 200 scalar-sized elementwise operators, forward(is_train=True) + backward;
   time per operator, against the same arithmetic done by numpy directly (the floor).
2. mirroring: 20 blocks of FullyConnected(512) + BatchNorm + relu, batch 64; planned memory of
   intermediate values and time per forward+backward, with and without MXNET_BACKWARD_DO_MIRROR.
Run single-threaded (OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1) for comparable numbers.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ORACLE = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')


def _import(impl):
    if impl == 'mxnet':
        import mxnet as mx  # pylint: disable=import-outside-toplevel
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
        import mxmod as mx  # pylint: disable=import-outside-toplevel
    return mx


def _best(fn, repeat=5, number=20):
    best = float('inf')
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def overhead(mx, length=200):
    """Seconds per operator (forward + backward) on a chain of tiny elementwise operators."""
    x = mx.sym.var('x')
    net = x
    for i in range(length // 2):
        net = mx.sym.tanh(net * 0.5)
    exe = net.simple_bind(mx.cpu(), x=(1,))
    head = mx.nd.ones((1,))

    def step():
        exe.forward(is_train=True)
        exe.backward(head)
        exe.grad_arrays[0].asnumpy()
    per_op = _best(step) / length
    arr = np.ones((1,), np.float32)

    def floor():
        v = arr
        for _ in range(length // 2):
            v = np.tanh(v * 0.5)
        g = np.ones_like(v)
        for _ in range(length // 2):
            g = g * (1 - v * v) * 0.5
    return per_op, _best(floor) / length


def deep_net(mx, blocks=20, hidden=512):
    net = mx.sym.var('data')
    for i in range(blocks):
        net = mx.sym.FullyConnected(net, num_hidden=hidden, name='fc%d' % i)
        net = mx.sym.BatchNorm(net, name='bn%d' % i)
        net = mx.sym.Activation(net, act_type='relu', name='relu%d' % i)
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=10, name='out'), name='softmax')


def mirroring(mx, batch=64, hidden=512):
    """Planned bytes and seconds per forward+backward, without and with mirroring."""
    out = {}
    for mode in ('0', '1'):
        os.environ['MXNET_BACKWARD_DO_MIRROR'] = mode
        exe = deep_net(mx, hidden=hidden).simple_bind(mx.cpu(), data=(batch, hidden))
        for arr in exe.arg_arrays:
            arr[:] = np.random.uniform(-0.05, 0.05, arr.shape)

        def step():
            exe.forward(is_train=True)
            exe.backward()
            exe.grad_arrays[1].asnumpy()
        seconds = _best(step, repeat=5, number=3)
        plan = exe.memory_plan() if hasattr(exe, 'memory_plan') else None
        out[mode] = {'seconds': seconds, 'internal_bytes': plan['internal'] if plan else None,
                     'debug_total_mb': _debug_total(exe)}
    os.environ.pop('MXNET_BACKWARD_DO_MIRROR', None)
    return out


def _debug_total(exe):
    import re  # pylint: disable=import-outside-toplevel
    found = re.search(r'Total (\d+) MB allocated', exe.debug_str())
    return int(found.group(1)) if found else None


def run(impl):
    mx = _import(impl)
    per_op, floor = overhead(mx)
    return {'impl': impl, 'us_per_op': per_op * 1e6, 'numpy_floor_us_per_op': floor * 1e6,
            'mirroring': mirroring(mx)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--impl', choices=['mxmod', 'mxnet'], default='mxmod')
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args()
    if args.json:
        print(json.dumps(run(args.impl)))
        return
    results = [run('mxmod')]
    if os.path.exists(ORACLE):
        proc = subprocess.run([ORACLE, os.path.abspath(__file__), '--impl', 'mxnet', '--json'],
                              capture_output=True, text=True, timeout=900)
        if proc.returncode == 0:
            results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        else:
            print('MXNet run failed:', proc.stderr[-2000:], file=sys.stderr)
    for res in results:
        mir = res['mirroring']
        print('%-6s per-op overhead %.1f us (numpy floor %.1f us)' % (
            res['impl'], res['us_per_op'], res['numpy_floor_us_per_op']))
        print('%-6s 20x(FC512+BN+relu) b64: plain %.1f ms, mirrored %.1f ms (x%.2f); '
              'memory plan plain %s MB, mirrored %s MB' % (
                  res['impl'], mir['0']['seconds'] * 1e3, mir['1']['seconds'] * 1e3,
                  mir['1']['seconds'] / mir['0']['seconds'], mir['0']['debug_total_mb'],
                  mir['1']['debug_total_mb']))
        if mir['0']['internal_bytes']:
            print('%-6s mirroring cuts planned intermediate memory by %.0f%%' % (
                res['impl'], 100 * (1 - mir['1']['internal_bytes'] / mir['0']['internal_bytes'])))
    if len(results) == 2:
        print('per-op overhead ratio mxmod/mxnet: %.2f' % (results[0]['us_per_op'] / results[1]['us_per_op']))


if __name__ == '__main__':
    main()
