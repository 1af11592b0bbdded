"""Run MXNet 1.9.1's example programs (example/ of the v1.9.x branch) unchanged on mxmod (through
an ``import mxnet`` alias) and on MXNet 1.9.1, on generated stand-ins for the files they would
download, and print a table: program, arguments, result and wall time on each, status.

    python bench/make_local_datasets.py --small --dir CACHE       # and once more, full-size:
    python bench/make_local_datasets.py --dir CACHE_FULL
    python bench/run_more_examples.py --cache CACHE --cache-full CACHE_FULL [--programs a,b]
        [--impls mxmod,mxnet] [--seeds N] [--mxnet-site DIR] [--work DIR] [--list]
        [--mirror GIT_DIR | --examples DIR]

- The programs, their arguments and data are listed in bench/example_programs.py (``--list``).
  The examples come from ``--examples`` (a checkout's example/) or are read out of the git
  directory ``--mirror`` (default /work/.mirror/apache+mxnet/repo, branch v1.9.x).
- ``--cache``/``--cache-full``: where bench/make_local_datasets.py wrote the MNIST files, small
  and full-size (svm_mnist.py splits at 60,000; example/module trains on the full set).
- Each program's folder is copied to ``--work``/<impl>/<program>, its data written there
  (bench/example_data.py), and the script run there with command-line arguments only; the
  text of the examples is never changed. Third-party packages neither interpreter has are
  stood in for by bench/example_shims (on PYTHONPATH for both); bench/example_launch.py applies
  the alias and the per-program switches (GPU contexts as CPU ones, removed numpy/pandas/time
  names, ...), identically for both. ``--mxnet-site``: a folder of packages for MXNet's
  interpreter only (OpenCV, which vae-gan and ctc import).
- Where an example cannot run as it is on either implementation (no main, a notebook, a loader
  outside mxmod's scope), a script of bench/example_drivers runs in its folder instead: it
  imports the example's own modules and takes the notebook's or main's steps, shortened; each
  says what it replaces and why.
- Programs that train for a fixed, long time are stopped after a deadline, and their last (or
  first) printed result is compared.
- Status: ``same`` when both finish and the results lie within the program's tolerance of each
  other (or, with ``--seeds N``, their ranges over N seeds overlap: most examples seed nothing,
  and both implementations then start from their own fixed default streams), ``differs``,
  ``runs`` (nothing to compare), or which one failed (``fails on both`` with the example's own
  bug named, where it has one)."""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from example_programs import PROGRAMS  # noqa: E402  pylint: disable=wrong-import-position

MXNET_PY = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')
MIRROR = '/work/.mirror/apache+mxnet/repo'
SETTINGS = {'mxnet_site': os.environ.get('EX_MXNET_SITE', '')}


def _examples_dir(args, work):
    """The example/ folder: ``--examples``, or the programs' folders read out of the mirror."""
    if args.examples:
        return args.examples
    target = os.path.join(work, 'mxnet-examples')
    for folder in sorted({p.folder.split('/')[0] for p in PROGRAMS}):
        if os.path.isdir(os.path.join(target, 'example', folder)):
            continue
        os.makedirs(target, exist_ok=True)
        archive = subprocess.run(['git', '--git-dir', args.mirror, 'archive', args.branch,
                                  'example/' + folder], capture_output=True, check=True)
        subprocess.run(['tar', '-x', '-C', target], input=archive.stdout, check=True)
    return os.path.join(target, 'example')


def _env(impl, prog):
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1',
               EX_IMPL=impl, MPLBACKEND='Agg')
    paths = [os.path.join(HERE, 'example_shims')]
    if impl == 'mxmod':
        paths.insert(0, ROOT)
    elif SETTINGS['mxnet_site']:
        paths.append(SETTINGS['mxnet_site'])
    env['PYTHONPATH'] = os.pathsep.join(paths)
    for flag in prog.flags:
        env['EX_' + flag.upper()] = '1'
    if impl == 'mxnet':
        env.update(prog.mxnet_env)
    return env


def prepare(prog, examples, work, ctx):
    """Copy the program's folder to ``work`` and write its data; return the run directory."""
    if os.path.exists(work):
        shutil.rmtree(work)
    shutil.copytree(os.path.join(examples, prog.folder), work)
    if prog.data:
        prog.data(os.path.join(work, prog.cwd), ctx)
    return os.path.join(work, prog.cwd)


def run(prog, impl, rundir, python, log_path, seed=None):
    """Run it (with ``EX_SEED=seed`` unless None); return (exit code, result or None,
    seconds)."""
    launch = [python, os.path.join(HERE, 'example_launch.py')]
    for script, args in prog.pre:
        # data preparation (pandas only): MXNet's interpreter (pandas 2) when there is one
        pre_python = MXNET_PY if os.path.exists(MXNET_PY) else python
        subprocess.run([pre_python, os.path.join(HERE, 'example_launch.py'), script] + list(args),
                       cwd=rundir, env=_env('mxnet', prog), capture_output=True,
                       timeout=prog.timeout, check=True)
    cmd = launch + [prog.script] + prog.args
    start = time.time()
    env = _env(impl, prog)
    if seed is not None:
        env['EX_SEED'] = str(seed)
    code, log = _execute(cmd, rundir, env, prog.deadline or prog.timeout)
    if code == 'timeout' and prog.deadline:
        code = 0        # stopped on purpose; the result is what it printed by then
    seconds = time.time() - start
    for name in prog.logs:
        path = os.path.join(rundir, name)
        if os.path.exists(path):
            with open(path, errors='replace') as src:
                log += '\n==> %s <==\n%s' % (name, src.read())
    missing = [name for name in prog.outputs if not os.path.exists(os.path.join(rundir, name))]
    if missing and code == 0:
        code = 'no ' + ', '.join(missing)
    with open(log_path, 'w') as out:
        out.write(log)
    value = None
    if prog.result:
        found = re.findall(prog.result[1], log, re.M)
        which = 0 if prog.result[2:] == ('first',) else -1
        value = float(found[which]) if found else None
    return code, value, seconds


def _execute(cmd, cwd, env, limit):
    """Run ``cmd`` in its own process group (killed whole after ``limit`` seconds: some
    examples start worker processes); return (exit code or 'timeout', output)."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = 'timeout'
        out.seek(0)
        return code, out.read().decode(errors='replace')


def status(prog, outcome):
    """'same' (the results lie within ``tol`` of each other, or their seed ranges overlap),
    'differs', 'runs' (nothing compared), or which implementation failed."""
    failed = [impl for impl, (code, values, _) in outcome.items()
              if code != 0 or (prog.result and None in values)]
    if failed and prog.broken and len(failed) == len(outcome) > 1:
        return 'fails on both (the example: %s)' % prog.broken
    if failed:
        return 'fails on ' + ', '.join(failed)
    if len(outcome) < 2 or not prog.result or prog.tol is None:
        return 'runs'
    (_, first, _), (_, second, _) = outcome.values()
    overlap = min(first) <= max(second) and min(second) <= max(first)
    close = abs(float(np.median(first)) - float(np.median(second))) <= prog.tol
    return 'same' if overlap or close else 'differs'


def _cell(prog, result):
    code, values, seconds = result
    if code != 0:
        return 'exit %s, %.0f s' % (code, seconds)
    label = prog.result[0] if prog.result else 'result'
    if None in values:
        shown = '-'
    elif len(values) > 1:
        shown = '%.4g-%.4g (%d seeds)' % (min(values), max(values), len(values))
    else:
        shown = '%.4g' % values[0]
    stopped = ' (stopped)' if prog.deadline else ''
    return '%s %s, %.1f s%s' % (label, shown, seconds, stopped)


def run_seeds(prog, impl, examples, base, ctx, python, seeds):
    """Run ``prog`` once per seed (None: the program's own seeding); return (the first failing
    exit code or 0, the results, the mean seconds)."""
    code, values, times = 0, [], []
    for seed in seeds:
        rundir = prepare(prog, examples, base, ctx)
        suffix = '' if seed is None else '.seed%d' % seed
        result = run(prog, impl, rundir, python, base + suffix + '.log', seed)
        code = code or result[0]
        values.append(result[1])
        times.append(result[2])
    return code, values, float(np.mean(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--programs', default='', help='comma-separated names (default: all)')
    ap.add_argument('--impls', default='mxmod,mxnet')
    ap.add_argument('--mirror', default=MIRROR)
    ap.add_argument('--branch', default='v1.9.x')
    ap.add_argument('--examples', default='', help="a checkout's example/ folder")
    ap.add_argument('--cache', default=os.path.expanduser(os.environ.get('MXNET_HOME',
                                                                          '~/.mxnet')))
    ap.add_argument('--cache-full', default='',
                    help='a cache of the full-size MNIST files (svm_mnist.py, example/module; '
                         'default --cache)')
    ap.add_argument('--work', default='')
    ap.add_argument('--mxmod-python', default=sys.executable)
    ap.add_argument('--mxnet-site', default=SETTINGS['mxnet_site'],
                    help='a folder of packages MXNet\'s interpreter lacks, put on its PYTHONPATH '
                         '(OpenCV for vae-gan and ctc: pip install --target DIR --no-deps '
                         'opencv-python-headless==4.8.1.78)')
    ap.add_argument('--seeds', type=int, default=0,
                    help='run each program N times, with mx.random.seed(0..N-1) and '
                         'numpy.random.seed set first (their spread); default once, unseeded')
    ap.add_argument('--list', action='store_true')
    args = ap.parse_args()
    SETTINGS['mxnet_site'] = args.mxnet_site
    if args.list:
        for prog in PROGRAMS:
            print('%-40s %s %s' % (prog.name, prog.script, ' '.join(prog.args)))
        return
    work = args.work or tempfile.mkdtemp(prefix='mxnet_examples_')
    examples = _examples_dir(args, work)
    wanted = set(filter(None, args.programs.split(',')))
    pythons = {'mxmod': args.mxmod_python, 'mxnet': MXNET_PY}
    impls = [i for i in args.impls.split(',') if i != 'mxnet' or os.path.exists(MXNET_PY)]
    seeds = list(range(args.seeds)) if args.seeds else [None]
    ctx = {'cache': args.cache, 'cache_full': args.cache_full or args.cache}
    rows = []
    for prog in PROGRAMS:
        if wanted and prog.name not in wanted:
            continue
        outcome = {}
        for impl in impls:
            base = os.path.join(work, impl, prog.name.replace('/', '_'))
            outcome[impl] = run_seeds(prog, impl, examples, base, ctx, pythons[impl], seeds)
            print('%-32s %-6s %s  (log %s.log)' % (prog.name, impl, _cell(prog, outcome[impl]),
                                                  base), flush=True)
        rows.append((prog, outcome))
    print('\n| program | arguments | %s | status |' % ' | '.join(impls))
    print('| --- | --- | %s | --- |' % ' | '.join('---' for _ in impls))
    for prog, outcome in rows:
        print('| %s | `%s` | %s | %s |' % (prog.name, ' '.join(prog.args) or '(none)',
                                          ' | '.join(_cell(prog, outcome[i]) for i in impls),
                                          status(prog, outcome)))


if __name__ == '__main__':
    main()
