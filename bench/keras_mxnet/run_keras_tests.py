"""keras-apache-mxnet's own test suite (tests/ of its 2.2.4.3 tag) on mxmod and on MXNet 1.9.1:
each file in its own pytest process per implementation, then the tests that pass on MXNet and
not on mxmod are listed with their messages.

    python bench/keras_mxnet/run_keras_tests.py --tests KERAS_REPO/tests [--impls mxnet,mxmod]
        [--mxnet-python PY] [--out DIR] [--files a,b]

Get the tests from github.com/awslabs/keras-apache-mxnet (``git archive 2.2.4.3 tests``); they
are not part of this repository. Files that need TensorFlow, downloads or more than one process
are left out (SKIPPED_FILES), as are tests using multiprocessing. Keras must be installed in
both interpreters (``harness.py --setup``)."""
import argparse
import glob
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MXNET_PY = os.environ.get('MXNET_ORACLE_PYTHON', '/tmp/mxnet-ref/bin/python')
SKIPPED_FILES = ('tensorflow', 'eia', 'applications_test', 'test_datasets', 'multi_gpu',
                 'mxnet_tf_model', 'test_documentation', 'test_doc_auto', 'data_utils_test',
                 'conftest')


def test_files(tests):
    """The test files of the suite that run here."""
    found = sorted(glob.glob(os.path.join(tests, '**', '*test*.py'), recursive=True))
    return [f for f in found if not any(s in f for s in SKIPPED_FILES)]


def run_file(impl, python, path, out, timeout=900):
    """One file under one implementation; its JUnit XML goes to ``out``."""
    report = os.path.join(out, impl, os.path.relpath(path).replace(os.sep, '_') + '.xml')
    os.makedirs(os.path.dirname(report), exist_ok=True)
    env = dict(os.environ, KERAS_TESTS_IMPL=impl, KERAS_TESTS_WORKDIR=os.path.join(out, 'work'),
               PYTHONPATH=os.pathsep.join([HERE, ROOT]), OMP_NUM_THREADS='1',
               OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1')
    cmd = [python, '-m', 'pytest', '-p', 'keras_tests_plugin', '-q', '-p', 'no:cacheprovider',
           '-k', 'not multiprocessing', '--junitxml', report, path]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=os.path.dirname(os.path.dirname(os.path.abspath(path))))
        last = (proc.stdout.strip().splitlines() or [''])[-1]
    except subprocess.TimeoutExpired:
        last = 'timed out after %d s' % timeout
    print('%-6s %-60s %s' % (impl, os.path.relpath(path), last), flush=True)


def outcomes(folder):
    """test id -> (outcome, message) from the JUnit files in ``folder``."""
    out = {}
    for report in glob.glob(os.path.join(folder, '*.xml')):
        for case in ET.parse(report).getroot().iter('testcase'):
            state, message = 'passed', ''
            for child in case:
                if child.tag in ('failure', 'error'):
                    state, message = 'failed', (child.get('message') or '')[:300]
                    break
                if child.tag == 'skipped':
                    state = 'skipped'
            out[case.get('classname') + '::' + case.get('name')] = (state, message)
    return out


def compare(out):
    """Print the tests MXNet passes and mxmod does not."""
    theirs, mine = outcomes(os.path.join(out, 'mxnet')), outcomes(os.path.join(out, 'mxmod'))
    passing = [t for t, (state, _) in theirs.items() if state == 'passed']
    missed = [t for t in passing if mine.get(t, ('missing',))[0] != 'passed']
    extra = [t for t, (state, _) in mine.items()
             if state == 'passed' and theirs.get(t, ('',))[0] == 'failed']
    print('MXNet 1.9.1 passes %d tests; mxmod passes %d of them (and %d that fail on MXNet)'
          % (len(passing), len(passing) - len(missed), len(extra)))
    for test in missed:
        print('  %s: %s' % (test, mine.get(test, ('missing', ''))))
    return len(missed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--tests', required=True, help='the tests/ folder of keras-apache-mxnet')
    parser.add_argument('--impls', default='mxnet,mxmod')
    parser.add_argument('--mxmod-python', default=sys.executable)
    parser.add_argument('--mxnet-python', default=MXNET_PY)
    parser.add_argument('--out', default='keras-tests-results')
    parser.add_argument('--files', help='comma-separated substrings: only matching files')
    args = parser.parse_args()
    out = os.path.abspath(args.out)
    files = test_files(os.path.abspath(args.tests))
    if args.files:
        files = [f for f in files if any(s in f for s in args.files.split(','))]
    pythons = {'mxmod': args.mxmod_python, 'mxnet': args.mxnet_python}
    for impl in args.impls.split(','):
        for path in files:
            run_file(impl, pythons[impl], path, out)
    return 1 if compare(out) else 0


if __name__ == '__main__':
    sys.exit(main())
