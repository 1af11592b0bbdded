"""Array comparisons of ``mx.test_utils``: exact and tolerant equality of NDArrays and numpy
arrays (broadcasting), with failure messages that locate the worst mismatches."""
import json

import numpy as np
import numpy.testing as npt

from ..ndarray.ndarray import NDArray
from .tolerance import get_atol, get_rtol, get_tols

__all__ = ['same', 'checkShapes', 'almost_equal', 'locationError', 'assert_almost_equal',
           'assert_allclose', 'assert_almost_equal_with_err', 'assert_almost_equal_ignore_nan',
           'assert_exception', 'same_array', 'reldiff', 'compare_ndarray_tuple',
           'same_symbol_structure', 'collapse_sum_like', 'compare_optimizer']


def _host(value):
    """numpy form of an NDArray, numpy array, scalar or nested list."""
    if isinstance(value, NDArray):
        return value.asnumpy()
    return value if isinstance(value, np.ndarray) else np.asarray(value)


def same(a, b):
    """True when ``a`` and ``b`` have the same shape and elements."""
    return np.array_equal(_host(a), _host(b))


def checkShapes(a, b):  # pylint: disable=invalid-name
    """Raise AssertionError unless ``a`` and ``b`` have the same shape."""
    if a.shape != b.shape:
        raise AssertionError(npt.build_err_msg(
            [_host(a), _host(b)], err_msg='a.shape = %s and b.shape = %s are not equal'
            % (a.shape, b.shape)))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """True when ``|a - b| <= atol + rtol * |b|`` everywhere (numpy's allclose, broadcasting
    unless ``use_broadcast=False``); default tolerances are float64's."""
    if not use_broadcast:
        checkShapes(a, b)
    a, b = _host(a), _host(b)
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        a, b = a.astype(np.int8), b.astype(np.int8)
    return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def locationError(a, b, index, names, maxError=False):  # pylint: disable=invalid-name
    """Text naming the position ``index`` and the two values found there."""
    return 'Location of %serror: %s, %s=%.8f, %s=%.8f' % (
        'maximum ' if maxError else '', str(index), names[0], a[index], names[1], b[index])


def _violations(a, b, rtol, atol, equal_nan):
    """Per element, |a - b| in units of the tolerance (> 1 is a mismatch); equal values
    (infinities included) count 0, NaN against anything counts infinitely."""
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(invalid='ignore', over='ignore'):
        diff = np.where(a64 == b64, 0.0, np.abs(a64 - b64))
        out = diff / (atol + rtol * np.abs(b64) + 1e-20)
    nan = np.isnan(a64) | np.isnan(b64)
    both = np.isnan(a64) & np.isnan(b64)
    out[nan] = np.inf
    if equal_nan:
        out[both] = 0.0
    out[np.isnan(out)] = np.inf
    return out


def _find_max_violation(a, b, rtol, atol):
    """(index, violation) of the element of ``a`` farthest outside the tolerance of ``b``."""
    a, b = np.broadcast_arrays(np.atleast_1d(_host(a)), np.atleast_1d(_host(b)))
    violation = _violations(a, b, rtol, atol, equal_nan=False)
    index = _position(np.argmax(violation), violation.shape)
    return index, np.max(violation)


def _position(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches):
    a, b = np.broadcast_arrays(np.atleast_1d(a), np.atleast_1d(b))
    violation = _violations(a, b, rtol, atol, equal_nan)
    bad = np.flatnonzero(violation.reshape(-1) > 1)
    order = bad[np.argsort(-violation.reshape(-1)[bad], kind='stable')]
    worst = _position(order[0] if order.size else np.argmax(violation), a.shape)
    lines = ['Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %f%%).'
             % (violation[worst], rtol, atol, 100.0 * max(len(bad), 1) / max(a.size, 1)),
             locationError(a, b, worst, names, maxError=True)]
    for rank, flat in enumerate(order[:mismatches[0]]):
        idx = _position(flat, a.shape)
        lines.append('%3d: Error %f  %s' % (rank + 1, violation[idx],
                                            locationError(a, b, idx, names)))
    with np.printoptions(threshold=4, suppress=True):
        return npt.build_err_msg([a, b], err_msg='\n'.join(lines), names=names)


def assert_almost_equal(a, b, rtol=None, atol=None, names=('a', 'b'), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise AssertionError unless ``a`` and ``b`` (NDArrays or numpy arrays) are equal within
    tolerances.

    Parameters
    ----------
    a, b : NDArray, numpy.ndarray or scalar
        Broadcast against each other unless ``use_broadcast=False``.
    rtol, atol : float, dict of dtype to float, or None
        Tolerances; None takes the defaults of the arrays' dtypes (the looser of the two).
    names : tuple of str
        Names of the two arrays in the message.
    equal_nan : bool
        Whether NaN equals NaN.
    mismatches : tuple of int
        How many of the worst mismatching positions the message lists.
    """
    if not use_broadcast:
        checkShapes(a, b)
    if not isinstance(a, (NDArray, np.ndarray)):
        a = np.asarray(a)
    if not isinstance(b, (NDArray, np.ndarray)):
        b = np.asarray(b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _host(a), _host(b)
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
        return
    raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """assert_almost_equal with numpy's assert_allclose defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=('a', 'b'),
                                 equal_nan=False, mismatches=(10, 10)):
    """assert_almost_equal that tolerates a fraction ``etol`` of mismatching elements."""
    from .tolerance import get_etol  # pylint: disable=import-outside-toplevel
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan,
                            mismatches=mismatches)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _host(a), _host(b)
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if 1.0 - np.count_nonzero(close) / close.size > etol:
        raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=('a', 'b')):
    """assert_almost_equal ignoring the positions where either array is NaN."""
    a, b = np.broadcast_arrays(_host(a), _host(b))
    a, b = a.copy(), b.copy()
    nan = np.isnan(a) | np.isnan(b)
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Raise AssertionError unless ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError('%s did not raise %s' % (getattr(f, '__name__', f),
                                                  getattr(exception_type, '__name__', exception_type)))


def same_array(array1, array2):
    """True when two NDArrays share memory: a write to the first shows in the second."""
    array1[:] += 1
    shared = same(array1.asnumpy(), array2.asnumpy())
    array1[:] -= 1
    return shared and same(array1.asnumpy(), array2.asnumpy())


def reldiff(a, b):
    """Relative difference ``sum|a - b| / (sum|a| + sum|b|)`` (0 when equal)."""
    a, b = _host(a), _host(b)
    diff = np.sum(np.abs(a - b))
    return 0.0 if diff == 0 else diff / (np.sum(np.abs(a)) + np.sum(np.abs(b)))


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """assert_almost_equal over (nested tuples of) arrays; None on either side is skipped."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def same_symbol_structure(sym1, sym2):
    """True when the two symbols' graphs apply the same operator at each node position."""
    nodes1 = json.loads(sym1.tojson())['nodes']
    nodes2 = json.loads(sym2.tojson())['nodes']
    return all(n1['op'] == n2['op'] for n1, n2 in zip(nodes1, nodes2))


def collapse_sum_like(a, shape):
    """Sum numpy array ``a`` down to ``shape`` (which broadcasts to ``a.shape``): the gradient
    of a broadcast."""
    if len(a.shape) < len(shape):
        raise ValueError('collapse_sum_like: %s has fewer dimensions than %s' % (a.shape, shape))
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead))
    for i, size in enumerate(shape):
        if size != a.shape[lead + i]:
            if size != 1:
                raise ValueError('collapse_sum_like: %s does not broadcast to %s' % (shape, a.shape))
            axes.append(lead + i)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def _pair(stype, shape, dtype, ctx):
    """A random array of storage ``stype`` and its dense copy (MXNet's helper draws sparse
    arrays with rand_ndarray and dense ones uniformly)."""
    from ..ndarray import random as nd_random  # pylint: disable=import-outside-toplevel
    from .inputs import rand_ndarray  # pylint: disable=import-outside-toplevel
    if stype == 'default':
        second = nd_random.uniform(shape=shape, ctx=ctx, dtype=dtype)
        return second.copyto(ctx), second
    if stype not in ('row_sparse', 'csr'):
        raise ValueError('compare_optimizer: unknown storage type %r' % (stype,))
    second = rand_ndarray(shape, stype, density=1, dtype=dtype, ctx=ctx)
    return second.copyto(ctx).tostype('default'), second


def compare_optimizer(opt1, opt2, shape, dtype, w_stype='default', g_stype='default', rtol=1e-4,
                      atol=1e-5, compare_states=True, ntensors=1):
    """Apply one update of ``opt1`` and ``opt2`` to the same random weight and gradient and
    compare states and weights. With a list of shapes, ``opt2`` updates all tensors in one
    multi-tensor call and ``opt1`` one at a time."""
    from .harness import default_context  # pylint: disable=import-outside-toplevel
    ctx = default_context()
    if not isinstance(shape, list):
        w1, w2 = _pair(w_stype, shape, dtype, ctx)
        g1, g2 = _pair(g_stype, shape, dtype, ctx)
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
    w1 = tuple(_pair('default', s, dtype, ctx)[1] for s in shape)
    g1 = tuple(_pair('default', s, dtype, ctx)[1] for s in shape)
    w2, g2 = tuple(w.copy() for w in w1), tuple(g.copy() for g in g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)
