"""pytest plugin (``-p keras_tests_plugin``) for running keras-apache-mxnet's own test suite:
Keras's shims, KERAS_BACKEND=mxnet, and with ``KERAS_TESTS_IMPL=mxmod`` the ``import mxnet`` ->
mxmod alias. Used by run_keras_tests.py."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run_case import prepare  # noqa: E402  pylint: disable=wrong-import-position

prepare(os.environ.get('KERAS_TESTS_IMPL', 'mxnet'), os.environ.get('KERAS_TESTS_WORKDIR', '.'))

# keras-apache-mxnet's core_test imports scipy.rand, which SciPy 1.12 removed (test code only)
import numpy  # noqa: E402  pylint: disable=wrong-import-position
import scipy  # noqa: E402  pylint: disable=wrong-import-position
if not hasattr(scipy, 'rand'):
    scipy.rand = numpy.random.rand
