"""Load a checkpoint exported by keras.models.save_mxnet_model with plain mx.mod.Module and
compare its predictions with the ones Keras made before exporting.

    python load_export.py --impl mxmod|mxnet PREFIX DATA_NAME

Prints ``MAXDIFF <float>``: the largest absolute difference."""
import argparse
import sys

import numpy as np

from run_case import install


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--impl', choices=('mxmod', 'mxnet'), required=True)
    parser.add_argument('prefix')
    parser.add_argument('data_name')
    args = parser.parse_args()
    if args.impl == 'mxmod':
        install()
    import mxnet as mx  # pylint: disable=import-outside-toplevel
    from cases import module_predict  # pylint: disable=import-outside-toplevel
    x = np.load(args.prefix + '-input.npy')
    expected = np.load(args.prefix + '-expected.npy')
    got = module_predict(mx, args.prefix, args.data_name, x)
    print('MAXDIFF %r' % float(np.abs(got - expected).max()))


if __name__ == '__main__':
    main()
