"""keras-mxnet 2.2.4.3 (Keras 2.2 with an MXNet backend) on mxmod against MXNet 1.9.1.

    python bench/keras_mxnet/harness.py [--cases a,b] [--seeds 0,1,2,3,4]
        [--mxmod-python PY] [--mxnet-python PY | --fixture FILE] [--record FILE]

Every case of cases.py runs for every seed under both implementations, one process per case and
implementation, the two interleaved case by case. Keras must be installed in both interpreters,
without its dependencies' pins (``setup`` below prints the commands). A case matches when each of
its figures (final loss and accuracy, on the training and validation sets, and the case's own
figures) lies within MXNet's seed-to-seed spread: the range of MXNet's values over the seeds,
widened by half its width on each side, and by at least ``ABS_TOL`` / ``REL_TOL``. Exact figures
(reloaded or exported models against the original) must be below ``EXACT_TOL``. The models
exported by ``save_mxnet_model`` are also loaded by the other implementation's ``mx.mod.Module``.
``--record`` saves MXNet's results as the fixture that mxmod_tests/test_keras_clients.py
compares with (no MXNet needed then); ``--fixture`` compares with such a file."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, 'mxnet_1.9.1_results.json')
MXNET_PY = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')
ABS_TOL = {'acc': 0.02, 'val_acc': 0.02, 'csv_rows': 1.0}
REL_TOL = 0.1
EXACT = ('reload_max_diff', 'module_max_diff', 'mxmod_loads_mxnet_export',
         'mxnet_loads_mxmod_export')
EXPORT_FIXTURE = os.path.join(HERE, 'fixtures')
EXACT_TOL = 1e-5
IGNORED = ('s_per_epoch', 'lr')


def setup_commands(python):
    """How to install the client into an interpreter's environment."""
    return ['%s -m pip install --no-deps keras-mxnet==2.2.4.3 keras-applications==1.0.8 '
            'keras-preprocessing==1.1.2' % python,
            '%s -m pip install h5py pyyaml six scipy' % python]


def run_impl(impl, python, cases, seeds, workdir, timeout=1800):
    """Figures of ``cases`` x ``seeds`` under one implementation (one process)."""
    cmd = [python, os.path.join(HERE, 'run_case.py'), '--impl', impl, '--cases', ','.join(cases),
           '--seeds', ','.join(map(str, seeds)), '--workdir', workdir]
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1')
    if impl == 'mxmod':
        env['PYTHONPATH'] = os.path.dirname(os.path.dirname(HERE))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=workdir)
    for line in proc.stdout.splitlines():
        if line.startswith('RESULTS '):
            return json.loads(line[len('RESULTS '):])
    raise RuntimeError('%s run of %s printed no results (exit %d):\n%s'
                       % (impl, cases, proc.returncode, (proc.stdout + proc.stderr)[-3000:]))


def cross_load(impl, python, workdir, seeds, timeout=300):
    """Max difference of each seed's export (made under the other implementation, in
    ``workdir``) when ``impl``'s Module predicts with it."""
    diffs = {}
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(HERE)))
    for seed in seeds:
        prefix = os.path.join(workdir, 'exported_%d' % seed)
        if not os.path.exists(prefix + '-data_name.txt'):
            continue
        with open(prefix + '-data_name.txt') as name_file:
            data_name = name_file.read()
        proc = subprocess.run([python, os.path.join(HERE, 'load_export.py'), '--impl', impl,
                               prefix, data_name], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=HERE)
        found = [line for line in proc.stdout.splitlines() if line.startswith('MAXDIFF ')]
        diffs[str(seed)] = float(found[0].split()[1]) if found else float('inf')
    return diffs


def spread(values, key):
    """The interval MXNet's ``values`` of figure ``key`` allow."""
    low, high = min(values), max(values)
    margin = max((high - low) / 2, ABS_TOL.get(key, 0.0), REL_TOL * max(abs(low), abs(high)))
    return low - margin, high + margin


def compare(reference, candidate):
    """Per case: ``(ok, [problems])`` for ``candidate``'s figures against ``reference``'s."""
    verdicts = {}
    for case, by_seed in candidate.items():
        problems = []
        ref = reference.get(case, {})
        errors = [f['error'] for f in by_seed.values() if 'error' in f]
        if errors:
            problems.append('error: ' + errors[0][:300])
        elif any('error' in f for f in ref.values()) or not ref:
            problems.append('MXNet has no result to compare with')
        else:
            problems += _figure_problems(ref, by_seed)
        verdicts[case] = (not problems, problems)
    return verdicts


def _figure_problems(ref, by_seed):
    problems = []
    for key in sorted(set(EXACT).intersection(*map(set, by_seed.values()))):
        worst = max(f[key] for f in by_seed.values())
        if worst > EXACT_TOL:
            problems.append('%s %.3g > %g' % (key, worst, EXACT_TOL))
    keys = set.intersection(*(set(f) for f in list(ref.values()) + list(by_seed.values())))
    for key in sorted(keys - set(IGNORED) - set(EXACT)):
        got = [f[key] for f in by_seed.values()]
        low, high = spread([f[key] for f in ref.values()], key)
        middle = statistics.median(got)
        if not low <= middle <= high:
            problems.append('%s: median %.4g outside MXNet spread [%.4g, %.4g]'
                            % (key, middle, low, high))
    return problems


def speed(reference, candidate, case):
    """mxmod's seconds per epoch over MXNet's (medians over seeds), or None."""
    try:
        mine = statistics.median(f['s_per_epoch'] for f in candidate[case].values())
        theirs = statistics.median(f['s_per_epoch'] for f in reference[case].values())
    except (KeyError, statistics.StatisticsError):
        return None
    return mine / theirs


def report(reference, candidate, verdicts):
    """Print one line per case; return the number that match."""
    print('%-22s %-6s %9s %9s %6s  %s' % ('case', 'match', 'mxmod s', 'MXNet s', 'ratio',
                                           'figures (mxmod median / MXNet range)'))
    for case, (ok, problems) in verdicts.items():
        ratio = speed(reference, candidate, case)
        mine = _median(candidate, case, 's_per_epoch')
        theirs = _median(reference, case, 's_per_epoch')
        print('%-22s %-6s %9s %9s %6s  %s' % (
            case, 'yes' if ok else 'NO', _fmt(mine), _fmt(theirs), _fmt(ratio),
            '; '.join(problems) if problems else _summary(reference, candidate, case)))
    matched = sum(ok for ok, _ in verdicts.values())
    print('%d of %d cases match MXNet 1.9.1' % (matched, len(verdicts)))
    return matched


def _median(results, case, key):
    values = [f[key] for f in results.get(case, {}).values() if key in f]
    return statistics.median(values) if values else None


def _fmt(value):
    return '-' if value is None else '%.3f' % value


def _summary(reference, candidate, case):
    parts = []
    for key in EXACT:
        mine = [f[key] for f in candidate[case].values() if key in f]
        if mine:
            parts.append('%s <= %.2g' % (key, max(mine)))
    for key in ('loss', 'acc', 'val_acc'):
        mine = _median(candidate, case, key)
        ref = [f[key] for f in reference[case].values() if key in f]
        if mine is not None and ref:
            parts.append('%s %.3f / %.3f-%.3f' % (key, mine, min(ref), max(ref)))
    return ', '.join(parts)


def main():
    sys.path.insert(0, HERE)
    import cases as case_table  # pylint: disable=import-outside-toplevel
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--cases', default=','.join(case_table.CASES))
    parser.add_argument('--seeds', default='0,1,2,3,4')
    parser.add_argument('--mxmod-python', default=sys.executable)
    parser.add_argument('--mxnet-python', default=MXNET_PY)
    parser.add_argument('--fixture', help='compare with recorded MXNet results instead')
    parser.add_argument('--record', help='write MXNet\'s results to this file')
    parser.add_argument('--out', help='write both implementations\' results to this file')
    parser.add_argument('--setup', action='store_true', help='print the install commands')
    args = parser.parse_args()
    if args.setup:
        print('\n'.join(setup_commands(args.mxmod_python) + setup_commands(args.mxnet_python)))
        return 0
    seeds = [int(s) for s in args.seeds.split(',')]
    names = args.cases.split(',')
    reference = {}
    if args.fixture:
        with open(args.fixture) as fixture:
            reference = json.load(fixture)['results']
    candidate = {}
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            dirs = {impl: os.path.join(work, impl, name) for impl in ('mxmod', 'mxnet')}
            for path in dirs.values():
                os.makedirs(path)
            if not args.fixture:
                reference.update(run_impl('mxnet', args.mxnet_python, [name], seeds,
                                          dirs['mxnet']))
            candidate.update(run_impl('mxmod', args.mxmod_python, [name], seeds, dirs['mxmod']))
            if name == 'export_mxnet_model':
                _cross(candidate, args, dirs, seeds)
                if args.record:
                    _keep_export(dirs['mxnet'])
    if args.record:
        with open(args.record, 'w') as out:
            json.dump({'mxnet': '1.9.1', 'seeds': seeds, 'results': reference}, out, indent=1,
                      sort_keys=True)
    if args.out:
        with open(args.out, 'w') as out:
            json.dump({'mxnet': reference, 'mxmod': candidate}, out, indent=1, sort_keys=True)
    matched = report(reference, candidate, compare(reference, candidate))
    return 0 if matched == len(names) else 1


def _keep_export(folder, seed=0):
    """Copy MXNet's export of ``seed`` to fixtures/ (for runs against the fixture)."""
    import shutil  # pylint: disable=import-outside-toplevel
    os.makedirs(EXPORT_FIXTURE, exist_ok=True)
    for suffix in ('-symbol.json', '-0000.params', '-input.npy', '-expected.npy',
                   '-data_name.txt'):
        name = 'exported_%d%s' % (seed, suffix)
        shutil.copy(os.path.join(folder, name), os.path.join(EXPORT_FIXTURE, name))


def _cross(candidate, args, dirs, seeds):
    """mxmod's Module loads MXNet's exports (made now, or the recorded ones in fixtures/) and,
    when MXNet runs here, MXNet's Module loads mxmod's."""
    figures = candidate['export_mxnet_model']
    theirs = EXPORT_FIXTURE if args.fixture else dirs['mxnet']
    for seed, diff in cross_load('mxmod', args.mxmod_python, theirs, seeds).items():
        figures[seed]['mxmod_loads_mxnet_export'] = diff
    if not args.fixture:
        for seed, diff in cross_load('mxnet', args.mxnet_python, dirs['mxmod'], seeds).items():
            figures[seed]['mxnet_loads_mxmod_export'] = diff


if __name__ == '__main__':
    sys.exit(main())
