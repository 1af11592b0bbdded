"""Run harness cases in this interpreter and print their figures as one JSON line.

    python run_case.py --impl mxmod|mxnet --cases a,b --seeds 0,1,2 --workdir DIR

``--impl mxmod`` maps ``import mxnet`` (Keras's backend imports it) to mxmod, module for module,
before Keras is imported; ``mxnet`` runs whatever MXNet this interpreter has. A case that raises
reports its error instead of figures."""
import argparse
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from mxnet_alias import install  # noqa: E402  pylint: disable=wrong-import-position


def prepare(impl, workdir):
    """Alias (for mxmod), Keras's environment and the shims; then Keras may be imported."""
    if impl == 'mxmod':
        install()
    os.environ['KERAS_BACKEND'] = 'mxnet'
    os.environ.setdefault('KERAS_HOME', os.path.join(workdir, 'keras_home'))
    sys.path.insert(0, HERE)
    import shims  # pylint: disable=import-outside-toplevel
    shims.apply()
    import warnings  # pylint: disable=import-outside-toplevel
    warnings.filterwarnings('ignore', category=DeprecationWarning)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--impl', choices=('mxmod', 'mxnet'), required=True)
    parser.add_argument('--cases', required=True)
    parser.add_argument('--seeds', default='0')
    parser.add_argument('--workdir', required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    prepare(args.impl, args.workdir)
    import cases  # pylint: disable=import-outside-toplevel
    import keras  # pylint: disable=import-outside-toplevel
    results = {}
    for name in args.cases.split(','):
        for seed in map(int, args.seeds.split(',')):
            keras.backend.clear_session()
            import numpy as np  # pylint: disable=import-outside-toplevel
            np.random.seed(seed)
            try:
                figures = cases.CASES[name](seed, args.workdir)
            except Exception as err:  # pylint: disable=broad-except
                figures = {'error': '%s: %s' % (type(err).__name__, err),
                           'traceback': traceback.format_exc()[-3000:]}
            results.setdefault(name, {})[str(seed)] = figures
    print('RESULTS ' + json.dumps(results))


if __name__ == '__main__':
    main()
