"""``mx.test_utils``: comparison helpers, random inputs and numeric/symbolic gradient checks."""
import contextlib
import os
import sys

import numpy as np
import numpy.random as rnd  # noqa: F401  (MXNet's test files use it via `import *`)

from .base import MXNetError
from .context import Context, cpu, current_context
from .ndarray.ndarray import NDArray, array as nd_array
from .ndarray.ndarray import array  # noqa: F401  (MXNet's test_utils exports it)

_DEFAULT_CTX = [None]


def default_context():
    """The context tests run on (cpu() unless set)."""
    return _DEFAULT_CTX[0] or current_context()


def set_default_context(ctx):
    """Set the context tests run on."""
    _DEFAULT_CTX[0] = ctx


def default_dtype():
    """The default floating dtype."""
    return np.float32


def _np(a):
    return a.asnumpy() if isinstance(a, NDArray) else np.asarray(a)


def get_rtol(rtol=None):
    """Default relative tolerance."""
    return 1e-5 if rtol is None else rtol


def get_atol(atol=None):
    """Default absolute tolerance."""
    return 1e-20 if atol is None else atol


def same(a, b):
    """True when two arrays are exactly equal."""
    return np.array_equal(_np(a), _np(b))


def same_array(array1, array2):
    """True when two NDArrays share memory (writing one changes the other)."""
    a1, a2 = _np_view(array1), _np_view(array2)
    return np.shares_memory(a1, a2) if a1 is not None and a2 is not None else False


def _np_view(a):
    data = a._data if isinstance(a, NDArray) else a
    data = getattr(data, 'data', data) if getattr(data, 'stype', None) else data  # sparse values
    return data if isinstance(data, np.ndarray) else None


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """True when two arrays are equal within tolerances."""
    return np.allclose(_np(a), _np(b), rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan)


def assert_almost_equal(a, b, rtol=None, atol=None, names=('a', 'b'), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise AssertionError (with the worst mismatch) unless ``a`` and ``b`` are almost equal."""
    an, bn = _np(a), _np(b)
    np.testing.assert_allclose(an, bn, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan,
                               err_msg='%s vs %s' % names)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=('a', 'b')):
    """assert_almost_equal where positions holding NaN in either array are ignored."""
    an, bn = np.copy(_np(a)), np.copy(_np(b))
    mask = np.isnan(an) | np.isnan(bn)
    an[mask] = 0
    bn[mask] = 0
    assert_almost_equal(an, bn, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError('%s did not raise %s' % (getattr(f, '__name__', f), exception_type.__name__))


def reldiff(a, b):
    """Relative difference sum|a-b| / (sum|a| + sum|b|)."""
    a, b = _np(a), _np(b)
    diff = np.sum(np.abs(a - b))
    norm = np.sum(np.abs(a)) + np.sum(np.abs(b))
    return 0.0 if diff == 0 else diff / norm


def random_arrays(*shapes):
    """numpy float32 arrays of standard normal values."""
    arrays = [np.random.randn(*s).astype(np.float32) if s else np.float32(np.random.randn())
              for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-D shape."""
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-D shape."""
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random shape with ``num_dim`` dimensions, each at most ``dim``."""
    low = 0 if allow_zero_size else 1
    return tuple(np.random.randint(low, dim + 1, size=num_dim))


@contextlib.contextmanager
def environment(*args):
    """Set environment variables for a ``with`` block: environment(name, value) or a dict."""
    updates = args[0] if len(args) == 1 and isinstance(args[0], dict) else {args[0]: args[1]}
    saved = {k: os.environ.get(k) for k in updates}
    try:
        for k, v in updates.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def discard_stderr():
    """Silence stderr (at the file-descriptor level) inside a ``with`` block."""
    with open(os.devnull, 'w') as null:
        old = os.dup(2)
        sys.stderr.flush()
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(old, 2)
            os.close(old)


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """Compare (nested tuples of) NDArrays; None on either side is skipped."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for a, b in zip(t1, t2):
            compare_ndarray_tuple(a, b, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def compare_optimizer(opt1, opt2, shape, dtype, w_stype='default', g_stype='default', rtol=1e-4,
                      atol=1e-5, compare_states=True, ntensors=1):
    """Apply one update of ``opt1`` and ``opt2`` to the same random weight/gradient and compare
    states and weights. A list of shapes runs ``opt2`` on all tensors at once (multi-tensor)."""
    from .ndarray.random import uniform  # pylint: disable=import-outside-toplevel
    ctx = default_context()
    if not isinstance(shape, list):
        w2 = uniform(shape=shape, ctx=ctx, dtype=dtype).tostype(w_stype)
        g2 = uniform(shape=shape, ctx=ctx, dtype=dtype).tostype(g_stype)
        w1, g1 = w2.tostype('default'), g2.tostype('default')
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = [uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape]
    g1 = [uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape]
    w2, g2 = [w.copy() for w in w1], [g.copy() for g in g1]
    state1 = [opt1.create_state_multi_precision(i, w) for i, w in enumerate(w1)]
    state2 = [opt2.create_state_multi_precision(i, w) for i, w in enumerate(w2)]
    if compare_states:
        for a, b in zip(state1, state2):
            compare_ndarray_tuple(a, b)
    for i in range(len(w1)):
        opt1.update_multi_precision(i, w1[i], g1[i], state1[i])
    opt2.update_multi_precision(list(range(len(w2))), w2, g2, state2)
    if compare_states:
        for a, b in zip(state1, state2):
            compare_ndarray_tuple(a, b, rtol=rtol, atol=atol)
    for a, b in zip(w1, w2):
        assert_almost_equal(a, b, rtol=rtol, atol=atol)


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """numpy's assert_allclose on NDArrays or arrays."""
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=equal_nan)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` over ``axis`` (int, tuple or None) with a numpy function, keeping dims on
    request."""
    if isinstance(axis, int):
        axis = [axis]
    axis = list(axis) if axis is not None else list(range(len(dat.shape)))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axis:
            shape[i] = 1
        ret = ret.reshape(tuple(shape))
    return ret


def use_np(func):
    """mxmod has no mx.np front end; this decorator runs the function unchanged."""
    return func


from .sparse_test_utils import *  # noqa: E402,F401,F403  (rand_ndarray, rand_sparse_ndarray ...)
import mxmod as mx  # noqa: E402,F401  (MXNet's test files use `mx` via `import *`)
from .gradcheck import (numeric_grad, check_numeric_gradient, check_symbolic_forward,  # noqa: E402,F401
                        check_symbolic_backward, check_consistency, simple_forward)
from .dataset_utils import (download, get_mnist, get_mnist_pkl, get_mnist_ubyte,  # noqa: E402,F401
                            get_cifar10, get_mnist_iterator, get_zip_data, get_bz2_data)
import numpy.random as rnd  # noqa: E402,F401  (MXNet's test_utils exports it; test_io uses it)
