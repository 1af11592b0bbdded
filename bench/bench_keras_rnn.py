"""Unrolled LSTM and GRU layers built from primitive operators, trained on mxmod and on MXNet
1.9.1 side by side: seconds per epoch and ratios.

    python bench/bench_keras_rnn.py [--clients keras,sym] [--cases small,imdb64,...]
        [--rounds N] [--mxnet-python PY] [--json FILE]

Two clients build the same layers:

- ``keras``: keras-mxnet 2.2.4.3 (``Embedding`` + ``LSTM``/``GRU(unroll=True)`` + ``Dense``,
  Keras' defaults: hard_sigmoid gates, implementation 1, GRU reset_after=False) trained by
  ``model.fit`` with Adam. Keras must be installed in both interpreters
  (bench/keras_mxnet/harness.py --setup prints how); on mxmod ``import mxnet`` is mapped to
  mxmod in the worker.
- ``sym``: the same graph written with ``mx.sym`` directly (mxmod_tests/executor/primitive_rnn.py:
  dot products with slices of one kernel, broadcast_add / broadcast_mul, clip(0.2 x + 0.5)),
  an Embedding before it and a FullyConnected + LogisticRegressionOutput after it, trained by
  ``Module.forward_backward`` / ``update`` with Adam. Runs without keras.

The data are IMDB-like: random token sequences labelled by whether the first half's mean token
exceeds the second half's. Every (case, client) starts one worker process per implementation,
single-threaded (OMP/OPENBLAS/MKL_NUM_THREADS=1); each worker trains one untimed warm-up epoch
(binding and first-use costs, printed as ``first``), then the driver asks the workers in turn,
alternating which goes first, for one timed epoch each, ``--rounds`` times. Reported: the median
seconds per epoch by wall clock and by process CPU time (steadier on a shared machine) and the
median of the per-round ratios mxmod / MXNet."""
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

CASES = {
    # name: layer, units, time steps, batch, samples, vocabulary, embedding width
    'lstm_small': dict(layer='LSTM', units=32, steps=20, batch=32, samples=640, vocab=50, embed=16),
    'gru_small': dict(layer='GRU', units=32, steps=20, batch=32, samples=640, vocab=50, embed=16),
    'lstm64': dict(layer='LSTM', units=64, steps=80, batch=32, samples=1024, vocab=1000, embed=32),
    'gru64': dict(layer='GRU', units=64, steps=80, batch=32, samples=1024, vocab=1000, embed=32),
    'lstm128': dict(layer='LSTM', units=128, steps=40, batch=128, samples=2048, vocab=1000,
                    embed=32),
    'gru128': dict(layer='GRU', units=128, steps=40, batch=128, samples=2048, vocab=1000,
                   embed=32),
}
DEFAULT_CASES = 'lstm_small,gru_small,lstm64,gru64,lstm128,gru128'


# ---- worker -------------------------------------------------------------------------------
def _keras_shims():
    """Keras 2.2's Python 3.11 / numpy 2 shims (bench/keras_mxnet/shims.py)."""
    sys.path.insert(0, os.path.join(HERE, 'keras_mxnet'))
    from shims import apply  # pylint: disable=import-outside-toplevel
    apply()


def _data(case):
    import numpy as np  # pylint: disable=import-outside-toplevel
    rng = np.random.RandomState(1234)
    T = case['steps']
    x = rng.randint(1, case['vocab'], size=(case['samples'], T))
    y = (x[:, :T // 2].mean(1) > x[:, T // 2:].mean(1)).astype('float32')
    return x.astype('float32'), y


def _keras_epoch_fn(case):
    os.environ['KERAS_BACKEND'] = 'mxnet'
    _keras_shims()
    import keras  # pylint: disable=import-outside-toplevel
    from keras.layers import Dense, Embedding  # pylint: disable=import-outside-toplevel
    x, y = _data(case)
    model = keras.models.Sequential([
        Embedding(case['vocab'], case['embed'], input_length=case['steps']),
        getattr(keras.layers, case['layer'])(case['units'], unroll=True),
        Dense(1, activation='sigmoid')])
    model.compile(keras.optimizers.Adam(), 'binary_crossentropy', metrics=['accuracy'])

    def epoch():
        return model.fit(x, y, epochs=1, batch_size=case['batch'], verbose=0).history['loss'][-1]
    return epoch


def _sym_epoch_fn(case):
    import mxnet as mx  # pylint: disable=import-outside-toplevel
    sys.path.insert(0, os.path.join(ROOT, 'mxmod_tests', 'executor'))
    import primitive_rnn  # pylint: disable=import-outside-toplevel
    x, y = _data(case)
    T, B = case['steps'], case['batch']
    emb = mx.sym.Embedding(mx.sym.Variable('data'), input_dim=case['vocab'],
                           output_dim=case['embed'], name='embed')
    last = primitive_rnn.unrolled(mx, case['layer'].lower(), T, case['units'], data=emb,
                                  width=case['embed'], broadcast=True)
    out = mx.sym.FullyConnected(last, num_hidden=1, name='dense')
    net = mx.sym.LogisticRegressionOutput(out, mx.sym.Variable('label'), name='out')
    it = mx.io.NDArrayIter(x, y.reshape(-1, 1), B, shuffle=True, last_batch_handle='discard',
                           label_name='label')
    mod = mx.mod.Module(net, data_names=['data'], label_names=['label'], context=mx.cpu())
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='adam')

    def epoch():
        it.reset()
        for batch in it:
            mod.forward_backward(batch)
            mod.update()
        return float(mod.get_outputs()[0].asnumpy().mean())
    return epoch


def worker(args):
    """Train one warm-up epoch, then one timed epoch per 'epoch' line on stdin."""
    case = CASES[args.case]
    if args.impl == 'mxmod':
        sys.path.insert(0, ROOT)
        if args.client == 'keras':
            from mxnet_alias import install  # pylint: disable=import-outside-toplevel
            install()
        else:
            import mxmod  # pylint: disable=import-outside-toplevel
            sys.modules['mxnet'] = mxmod
    epoch = (_keras_epoch_fn if args.client == 'keras' else _sym_epoch_fn)(case)
    _timed(epoch)
    for line in sys.stdin:
        if line.strip() != 'epoch':
            break
        _timed(epoch)


def _timed(epoch):
    wall, cpu = time.perf_counter(), time.process_time()
    value = epoch()
    print(json.dumps({'wall': time.perf_counter() - wall, 'cpu': time.process_time() - cpu,
                      'value': float(value)}), flush=True)


# ---- driver -------------------------------------------------------------------------------
class Worker(object):
    """One worker process (one implementation, one case, one client)."""

    def __init__(self, impl, python, case, client):
        env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1',
                   MKL_NUM_THREADS='1', PYTHONWARNINGS='ignore')
        self.impl = impl
        self.log = tempfile.TemporaryFile('w+')      # a pipe could fill up and stall it
        self.proc = subprocess.Popen(
            [python, os.path.abspath(__file__), '--worker', '--impl', impl, '--case', case,
             '--client', client], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.log, text=True, env=env, cwd=ROOT)
        self.first = self._read()

    def _read(self):
        for line in self.proc.stdout:
            if line.startswith('{'):
                return json.loads(line)
        self.proc.wait()
        self.log.seek(0)
        raise RuntimeError('%s worker ended: %s' % (self.impl, self.log.read()[-3000:]))

    def epoch(self):
        self.proc.stdin.write('epoch\n')
        self.proc.stdin.flush()
        return self._read()

    def close(self):
        try:
            self.proc.stdin.write('quit\n')
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


def measure(case, client, pythons, rounds):
    """Figures of one (case, client): per implementation its first epoch and median epoch
    (wall, cpu), and the median of the per-round wall and cpu ratios."""
    workers = {impl: Worker(impl, py, case, client) for impl, py in pythons.items()}
    try:
        runs = {impl: [] for impl in workers}
        for r in range(rounds):
            order = list(workers) if r % 2 == 0 else list(reversed(list(workers)))
            for impl in order:
                runs[impl].append(workers[impl].epoch())
    finally:
        for w in workers.values():
            w.close()
    out = {}
    for impl, w in workers.items():
        out[impl] = {'first': w.first['wall'],
                     'wall': statistics.median(e['wall'] for e in runs[impl]),
                     'cpu': statistics.median(e['cpu'] for e in runs[impl]),
                     'loss': runs[impl][-1]['value']}
    if 'mxnet' in runs and 'mxmod' in runs:
        for key in ('wall', 'cpu'):
            out['ratio_' + key] = statistics.median(
                a[key] / b[key] for a, b in zip(runs['mxmod'], runs['mxnet']))
        out['ratio_first'] = out['mxmod']['first'] / out['mxnet']['first']
    return out


def _row(case, client, res):
    cells = ['%-10s %-5s' % (case, client)]
    for impl in ('mxmod', 'mxnet'):
        if impl in res:
            r = res[impl]
            cells.append('%s first %6.2f  epoch %6.3f (cpu %6.3f)' % (
                impl, r['first'], r['wall'], r['cpu']))
    if 'ratio_wall' in res:
        cells.append('ratio %.2f (cpu %.2f, first %.2f)' % (
            res['ratio_wall'], res['ratio_cpu'], res['ratio_first']))
    return ' | '.join(cells)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--impl', help=argparse.SUPPRESS)
    parser.add_argument('--case', help=argparse.SUPPRESS)
    parser.add_argument('--client', default='sym', help=argparse.SUPPRESS)
    parser.add_argument('--clients', default='keras,sym')
    parser.add_argument('--cases', default=DEFAULT_CASES)
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--mxnet-python', default=MXNET_PY)
    parser.add_argument('--mxmod-python', default=sys.executable)
    parser.add_argument('--json', help='write the figures to this file')
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    pythons = {'mxmod': args.mxmod_python}
    if args.mxnet_python and os.path.exists(args.mxnet_python):
        pythons['mxnet'] = args.mxnet_python
    else:
        print('no MXNet interpreter (%s): mxmod alone' % args.mxnet_python)
    results = {}
    for case in args.cases.split(','):
        for client in args.clients.split(','):
            res = measure(case, client, pythons, args.rounds)
            results['%s/%s' % (case, client)] = res
            print(_row(case, client, res), flush=True)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(results, f, indent=1, sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
