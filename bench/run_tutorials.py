"""MXNet 1.9.1's own Python tutorials (docs/python_docs/python/tutorials/ on v1.9.x) run as client
programs on MXNet and on mxmod (through the ``import mxnet`` alias), and what they print compared.

    python bench/run_tutorials.py [--only kvstore,csr,...] [--impls mxnet,mxmod] [--out DIR]
                                  [--mirror GITDIR] [--timeout S] [--show]

Each tutorial is one script: its ```python blocks in order, each run as a notebook cell would be
(the value of a cell's last expression is printed with repr; an exception is printed as
``!! cell N: Type: first line`` and the next cell still runs). The same substitutions are applied
for both implementations (listed in SUBS below): GPU contexts become CPU ones, ``os.fork()`` is
dropped, the MNIST download of the profiler tutorial becomes generated batches of the same
shapes. Output is compared line by line twice: exactly, and with
every number and address masked (random values differ; shapes, dtypes, stypes, reprs and errors
must not). The table gives each implementation's status (ok, or the first failing cell) and the
first line that differs after masking.
"""
import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MXNET_PY = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')
MIRROR = '/work/.mirror/apache+mxnet/repo'
BASE = 'docs/python_docs/python/tutorials/'

GPU_AS_CPU = [('mx.gpu()', 'mx.cpu()'), ('gpu(0)', 'cpu(0)'),
              ('from mxnet import gpu', 'from mxnet import cpu')]

# Generated stand-in for ``gluon.data.vision.MNIST`` + ``DataLoader`` (no download): batches of
# 64 images (1x28x28, float32 in [0, 1)) with labels 0..9, as ToTensor + DataLoader give them.
MNIST_STANDIN = '''
import numpy as _np
_rs = _np.random.RandomState(0)
dataloader = [(mx.nd.array(_rs.rand(64, 1, 28, 28)), mx.nd.array(_rs.randint(0, 10, 64)))
              for _ in range(4)]
'''

# Stand-in for ``gluon.data.ArrayDataset`` / ``DataLoader`` over NDArrays (the variant
# 'logistic_regression_nodata' runs the rest of the tutorial with it on both implementations).
LOADER_STANDIN = '''
class ArrayDataset:
    def __init__(self, *arrays):
        self.arrays = arrays

class DataLoader:
    def __init__(self, dataset, batch_size, shuffle=False):
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle

    def __iter__(self):
        n = self.dataset.arrays[0].shape[0]
        order = np.random.permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, n, self.batch_size):
            idx = mx.nd.array(order[start:start + self.batch_size])
            yield tuple(mx.nd.take(a, idx) for a in self.dataset.arrays)
'''

# name: (path under BASE, substitutions [(old, new)], cells to drop, prelude)
TUTORIALS = {
    'kvstore': ('packages/kvstore/kvstore.md', [], (), ''),
    'csr': ('packages/ndarray/sparse/csr.md', GPU_AS_CPU, (), ''),
    'row_sparse': ('packages/ndarray/sparse/row_sparse.md', GPU_AS_CPU, (), ''),
    'sparse_train': ('packages/ndarray/sparse/train.md', [], (), ''),
    'ndarray_intro': ('packages/ndarray/01-ndarray-intro.md', [], (), ''),
    'ndarray_ops': ('packages/ndarray/02-ndarray-operations.md', [], (), ''),
    # ``x`` comes from the previous chapter of the tutorial.
    'ndarray_contexts': ('packages/ndarray/03-ndarray-contexts.md', GPU_AS_CPU, (),
                         'import mxnet as mx\nx = mx.nd.ones((3, 3))\n'),
    'customop': ('extend/customop.md', [('os.fork()', 'pass  # os.fork() dropped')], (), ''),
    'optimizer': ('packages/optimizer/index.md', [], (), ''),
    'profiler': ('performance/backend/profiler.md',
                 [('dataset = gluon.data.vision.MNIST(train=True)\n'
                   'dataset = dataset.transform_first(transforms.ToTensor())\n'
                   'dataloader = gluon.data.DataLoader(dataset, batch_size=64, shuffle=True)\n',
                   MNIST_STANDIN),
                  ('from mxnet.gluon.data.vision import transforms\n', '')], (), ''),
    'logistic_regression': ('getting-started/logistic_regression_explained.md', [], (), ''),
    'logistic_regression_nodata': (
        'getting-started/logistic_regression_explained.md',
        [('from mxnet.gluon.data import DataLoader, ArrayDataset\n', LOADER_STANDIN)], (), ''),
}

CELL_RUNNER = r'''
import ast, sys, traceback
_cells = %r
_ns = {'__name__': '__main__'}
for _i, _src in enumerate(_cells):
    print('## cell %%d' %% _i)
    sys.stdout.flush()
    try:
        _tree = ast.parse(_src)
        _last = None
        if _tree.body and isinstance(_tree.body[-1], ast.Expr):
            _last = ast.Expression(_tree.body.pop().value)
        exec(compile(_tree, 'cell%%d' %% _i, 'exec'), _ns)
        if _last is not None:
            _value = eval(compile(_last, 'cell%%d' %% _i, 'eval'), _ns)
            if _value is not None:
                print(repr(_value))
    except Exception as _err:  # a cell's error is output to compare, then the next cell runs
        _msg = (str(_err).strip().splitlines() or [''])[0]
        print('!! cell %%d: %%s: %%s' %% (_i, type(_err).__name__, _msg[:300]))
        traceback.print_exc()
    sys.stdout.flush()
'''

ALIAS = ("import sys, runpy\nsys.path.insert(0, %r)\nfrom mxnet_alias import install\n"
         "install()\nrunpy.run_path(sys.argv[1], run_name='__main__')\n"
         % os.path.join(ROOT, 'bench'))


def tutorial_cells(name, mirror):
    """The cells of tutorial ``name`` after its substitutions."""
    path, subs, drop, prelude = TUTORIALS[name]
    text = subprocess.run(['git', '-C', mirror, 'show', 'v1.9.x:' + BASE + path],
                          capture_output=True, text=True, check=True).stdout
    cells = re.findall(r'^```(?:python|py|\{\.python \.input\})[ \t]*\n(.*?)^```', text,
                       re.S | re.M)
    script = '\n# <cell>\n'.join(cells)
    for old, new in subs:
        if old not in script and (old, new) not in GPU_AS_CPU:
            raise SystemExit('%s: substitution target not found: %r' % (name, old))
        script = script.replace(old, new)
    cells = [c for i, c in enumerate(script.split('\n# <cell>\n')) if i not in drop]
    return ([prelude] if prelude else []) + cells


def run(impl, script, workdir, timeout, mxmod_python):
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1',
               PYTHONWARNINGS='ignore')
    cmd = ([MXNET_PY, script] if impl == 'mxnet' else [mxmod_python, '-c', ALIAS, script])
    try:
        proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True,
                              timeout=timeout)
        return proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as err:
        out = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or '')
        return 'timeout', out, ''


NUMBER = re.compile(r'0x[0-9a-fA-F]+|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\bnan\b|\binf\b')


def masked(line):
    """``line`` with numbers and addresses as '#' and numpy's column padding removed."""
    line = re.sub(r'\s+', ' ', NUMBER.sub('#', line)).strip()
    return line.replace('[ ', '[').replace(' ]', ']')


def status(rc, out):
    if rc == 'timeout':
        return 'timeout'
    errors = [l for l in out.splitlines() if l.startswith('!! cell')]
    if rc != 0:
        return 'crashed (rc %s)' % rc
    return errors[0][3:60] if errors else 'ok'


def first_difference(out_a, out_b, mask):
    lines_a, lines_b = out_a.splitlines(), out_b.splitlines()
    for i in range(max(len(lines_a), len(lines_b))):
        a = lines_a[i] if i < len(lines_a) else '<end>'
        b = lines_b[i] if i < len(lines_b) else '<end>'
        if (masked(a) != masked(b)) if mask else (a != b):
            return i, a, b
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--only', default=','.join(TUTORIALS))
    parser.add_argument('--impls', default='mxnet,mxmod')
    parser.add_argument('--out', default=None, help='folder for scripts and outputs')
    parser.add_argument('--mirror', default=MIRROR)
    parser.add_argument('--timeout', type=int, default=600)
    parser.add_argument('--mxmod-python', default=sys.executable)
    parser.add_argument('--show', action='store_true', help='print differing lines side by side')
    args = parser.parse_args()
    out_dir = args.out or tempfile.mkdtemp(prefix='mx_tutorials_')
    impls = args.impls.split(',')
    rows = []
    for name in args.only.split(','):
        cells = tutorial_cells(name, args.mirror)
        outputs = {}
        for impl in impls:
            workdir = os.path.join(out_dir, name, impl)
            os.makedirs(workdir, exist_ok=True)
            script = os.path.join(workdir, name + '.py')
            with open(script, 'w') as f:
                f.write(CELL_RUNNER % (cells,))
            rc, out, err = run(impl, script, workdir, args.timeout, args.mxmod_python)
            for suffix, text in (('out', out), ('err', err)):
                with open(os.path.join(workdir, 'std' + suffix), 'w') as f:
                    f.write(text)
            outputs[impl] = (rc, out)
            print('%-28s %-6s %s' % (name, impl, status(rc, out)), flush=True)
        row = [name] + [status(*outputs[i]) for i in impls]
        if len(impls) == 2:
            diff = first_difference(outputs[impls[0]][1], outputs[impls[1]][1], mask=True)
            exact = first_difference(outputs[impls[0]][1], outputs[impls[1]][1], mask=False)
            if diff:
                row.append('line %d: %r | %r' % (diff[0] + 1, diff[1][:60], diff[2][:60]))
            else:
                row.append('same' if not exact else 'same structure (values differ)')
            if args.show and diff:
                print('   %s: %s\n   %s: %s' % (impls[0], diff[1], impls[1], diff[2]))
        rows.append(row)
    header = ['tutorial'] + impls + (['first differing line (numbers masked)']
                                     if len(impls) == 2 else [])
    print('\n| ' + ' | '.join(header) + ' |\n|' + ' --- |' * len(header))
    for row in rows:
        print('| ' + ' | '.join(str(c).replace('|', '\\|') for c in row) + ' |')
    print('\noutputs in %s' % out_dir)


if __name__ == '__main__':
    main()
