"""Run one of MXNet's example programs unchanged: ``python example_launch.py SCRIPT ARGS...``.

Environment (set by run_more_examples.py):

- ``EX_IMPL=mxmod``: ``import mxnet`` (and ``mxnet.x.y``) gives mxmod's modules, as a user's
  alias would; otherwise the interpreter's own mxnet runs.
- ``EX_GPU_AS_CPU=1``: ``mx.gpu(i)`` gives ``mx.cpu(i)``, for programs that hard-code a GPU (or
  whose CPU switch is broken) on a machine without one; applied to both implementations alike.
- ``EX_PLAIN_NUMBA_JIT=1``: ``numba.jit`` returns the function unchanged (numba >= 0.59 has no
  object mode for a jit function that calls ``.asnumpy()``; MXNet's interpreter has no numba).
- ``EX_SEED=N``: ``mx.random.seed(N)`` and ``numpy.random.seed(N)`` before the program runs
  (the seed-to-seed spread of programs that seed nothing themselves).
- ``EX_NUMPY_FROMSTRING=1``: ``numpy.fromstring`` of bytes (binary mode, removed in numpy 2)
  as ``numpy.frombuffer(...).copy()``.
- ``EX_NUMPY_ALIASES=1``: ``numpy.int``, ``numpy.float``, ``numpy.bool`` and ``numpy.object``
  (removed in numpy 1.24) as the builtins.
- ``EX_NUMPY_RESHAPE_ORDER=1``: ``numpy.reshape(a, n, (rows, cols))`` (a shape given as
  ``order``) reshapes ``a`` in place to ``(n, rows, cols)`` and returns it: example/capsnet's
  read_data calls it so and discards the result (numpy raises 'order must be str', and its
  to4d then could not reshape the flat images either); the example's evident intent, applied
  to both implementations alike.
- ``EX_TIME_CLOCK=1``: ``time.clock`` (removed in Python 3.8) as ``time.perf_counter``.
- ``EX_PANDAS_COMPAT=1``: ``DataFrame.as_matrix`` (removed in pandas 1.0) as ``.values`` and
  ``fillna(method='ffill')`` (removed in pandas 3) as ``ffill()``.

The script's folder goes first on sys.path, as when it is run as ``python SCRIPT``."""
import inspect
import os
import runpy
import sys
import types

from mxnet_alias import install


def _plain_jit(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda func: func


def _patch():
    if os.environ.get('EX_IMPL') == 'mxmod':
        install()
    if os.environ.get('EX_GPU_AS_CPU'):
        import mxnet  # pylint: disable=import-outside-toplevel
        mxnet.gpu = mxnet.context.gpu = mxnet.cpu
    if os.environ.get('EX_PLAIN_NUMBA_JIT'):
        import mxnet  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
        try:
            import numba  # pylint: disable=import-outside-toplevel
        except ImportError:
            numba = sys.modules['numba'] = types.ModuleType('numba')
        numba.jit = _plain_jit
    if os.environ.get('EX_NUMPY_FROMSTRING'):
        import numpy  # pylint: disable=import-outside-toplevel
        fromstring = numpy.fromstring

        def _fromstring(string, dtype=float, count=-1, sep='', **kwargs):
            if sep == '' and isinstance(string, (bytes, bytearray, memoryview)):
                return numpy.frombuffer(string, dtype=dtype, count=count).copy()
            return fromstring(string, dtype=dtype, count=count, sep=sep, **kwargs)
        numpy.fromstring = _fromstring
    if os.environ.get('EX_NUMPY_ALIASES'):
        import builtins  # pylint: disable=import-outside-toplevel
        import numpy  # pylint: disable=import-outside-toplevel
        for name in ('int', 'float', 'bool', 'object'):
            if name not in numpy.__dict__:
                setattr(numpy, name, getattr(builtins, name))
    if os.environ.get('EX_NUMPY_RESHAPE_ORDER'):
        import numpy  # pylint: disable=import-outside-toplevel
        reshape = numpy.reshape

        def _reshape(a, *args, **kwargs):
            order = args[1] if len(args) > 1 else kwargs.get('order', 'C')
            if isinstance(order, str):
                return reshape(a, *args, **kwargs)
            a.shape = (args[0],) + tuple(order)
            return a
        numpy.reshape = _reshape
    if os.environ.get('EX_TIME_CLOCK'):
        import time  # pylint: disable=import-outside-toplevel
        time.clock = time.perf_counter
    if os.environ.get('EX_SEED'):
        import mxnet  # pylint: disable=import-outside-toplevel
        import numpy  # pylint: disable=import-outside-toplevel
        mxnet.random.seed(int(os.environ['EX_SEED']))
        numpy.random.seed(int(os.environ['EX_SEED']))
    if os.environ.get('EX_PANDAS_COMPAT'):
        import pandas  # pylint: disable=import-outside-toplevel
        if not hasattr(pandas.DataFrame, 'as_matrix'):
            pandas.DataFrame.as_matrix = lambda self, columns=None: self.values
        fillna = pandas.DataFrame.fillna
        if 'method' in inspect.signature(fillna).parameters:
            return

        def _fillna(self, value=None, method=None, **kwargs):
            if method in ('ffill', 'pad'):
                return self.ffill(**kwargs)
            if method in ('bfill', 'backfill'):
                return self.bfill(**kwargs)
            return fillna(self, value, **kwargs)
        pandas.DataFrame.fillna = _fillna


def main():
    _patch()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name='__main__')


if __name__ == '__main__':
    main()
