"""Test harness helpers of ``mx.test_utils``: the default context and dtype, environment
variables for a block, retries of stochastic tests, a constant iterator and platform checks."""
import contextlib
import functools
import os
import platform
import sys

import numpy as np

from ..context import Context, current_context

__all__ = ['default_context', 'set_default_context', 'default_dtype', 'environment',
           'discard_stderr', 'retry', 'DummyIter', 'list_gpus', 'is_cd_run', 'is_aarch64_run',
           'has_tvm_ops', 'is_op_runnable', 'get_im2rec_path', 'use_np']


def default_context():
    """The context tests run on: the current default context (``cpu(0)`` unless changed)."""
    return current_context()


def set_default_context(ctx):
    """Make ``ctx`` the default context of the calling thread."""
    Context._default_ctx.value = ctx  # pylint: disable=protected-access


def default_dtype():
    """The default floating dtype of test inputs (float32)."""
    return np.float32


@contextlib.contextmanager
def environment(*args):
    """Set environment variables for the body of a ``with`` block and restore them after.

    ``environment(name, value)`` or ``environment({name: value, ...})``; a value of None unsets
    the variable."""
    if len(args) == 1 and isinstance(args[0], dict):
        updates = args[0]
    elif len(args) == 2:
        updates = {args[0]: args[1]}
    else:
        raise TypeError('environment() takes a dict or a name and a value, got %d arguments'
                        % len(args))
    saved = {name: os.environ.get(name) for name in updates}
    _set_environ(updates)
    try:
        yield
    finally:
        _set_environ(saved)


def _set_environ(values):
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = str(value)


@contextlib.contextmanager
def discard_stderr():
    """Silence the process's stderr (at the file-descriptor level) inside a ``with`` block."""
    with open(os.devnull, 'w') as null:
        try:
            fileno = sys.stderr.fileno()
        except (AttributeError, ValueError, OSError):
            yield                   # stderr is not a file (captured): nothing to redirect
            return
        sys.stderr.flush()
        saved = os.dup(fileno)
        os.dup2(null.fileno(), fileno)
        try:
            yield
        finally:
            os.dup2(saved, fileno)
            os.close(saved)


def retry(n):
    """Decorator: run a stochastic test up to ``n`` times until it passes (AssertionError is
    a failure; the last one is raised)."""
    if n <= 0:
        raise ValueError('retry: n must be positive, got %r' % (n,))

    def decorate(test):
        @functools.wraps(test)
        def run(*args, **kwargs):
            for attempt in range(n):
                try:
                    test(*args, **kwargs)
                    return
                except AssertionError:
                    if attempt == n - 1:
                        raise
        return run
    return decorate


def _data_iter_base():
    from ..io import DataIter  # pylint: disable=import-outside-toplevel
    return DataIter


class DummyIter(_data_iter_base()):
    """An iterator that returns the first batch of ``real_iter`` forever (speed tests).

    Parameters
    ----------
    real_iter : DataIter
    """

    def __init__(self, real_iter):
        super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        """The first batch of the real iterator, every time."""
        return self.the_batch

    __next__ = next


def list_gpus():
    """The ids of the visible GPUs (empty without cupy or a driver)."""
    from ..context import num_gpus  # pylint: disable=import-outside-toplevel
    return list(range(num_gpus()))


def is_cd_run():
    """True inside MXNet's continuous-delivery jobs (``CD_JOB=1``)."""
    return os.environ.get('CD_JOB', '0') == '1'


def is_aarch64_run():
    """True on an aarch64 machine."""
    return platform.machine() == 'aarch64'


def has_tvm_ops():
    """mxmod has no TVM-generated operators: False."""
    return False


def is_op_runnable():
    """True: every mxmod operator runs on CPU and GPU alike."""
    return True


def get_im2rec_path(home_env='MXNET_HOME'):
    """Path of the im2rec tool script (``$MXNET_HOME/tools/im2rec.py``, else mxmod's own)."""
    candidates = []
    if home_env in os.environ:
        candidates.append(os.path.join(os.environ[home_env], 'tools', 'im2rec.py'))
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates += [os.path.join(here, 'tools', 'im2rec.py'),
                   os.path.join(here, '..', 'tools', 'im2rec.py')]
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise IOError('Could not find tools/im2rec.py (looked in %s)' % candidates)


def use_np(func):
    """mxmod has no mx.np front end; the decorated function runs unchanged."""
    return func
