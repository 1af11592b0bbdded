"""Checks of bound symbols (``mx.test_utils``): forward against expected values, backward
against expected gradients, symbolic gradients against central differences, and one symbol
run under several contexts and dtypes."""
from collections import OrderedDict

import numpy as np

from ..ndarray.ndarray import NDArray, array as nd_array
from .compare import assert_almost_equal
from .harness import default_context, default_dtype
from .tolerance import default_numeric_eps, get_tolerance

__all__ = ['simple_forward', 'numeric_grad', 'check_numeric_gradient', 'check_symbolic_forward',
           'check_symbolic_backward', 'check_speed']

_DTYPES = (np.float16, np.float32, np.float64)


def _check_dtype(dtype, allow_asnumpy=True):
    if not ((allow_asnumpy and isinstance(dtype, str) and dtype == 'asnumpy') or
            any(dtype is d or (not isinstance(dtype, str) and np.dtype(dtype) == d) for d in _DTYPES)):
        raise ValueError("dtype must be %sfloat16, float32 or float64, got %r"
                         % ("'asnumpy', " if allow_asnumpy else '', dtype))


def _to_nd(value, ctx, dtype):
    """numpy array -> NDArray on ``ctx`` in ``dtype`` ('asnumpy': its own dtype); NDArrays and
    anything else pass through."""
    if isinstance(value, np.ndarray):
        return nd_array(value, ctx=ctx, dtype=value.dtype if _is_asnumpy(dtype) else dtype)
    return value


def _is_asnumpy(dtype):
    return isinstance(dtype, str) and dtype == 'asnumpy'


def _parse_location(sym, location, ctx, dtype=default_dtype()):
    """Argument values (list in ``list_arguments`` order, or dict by name) as an ordered dict of
    NDArrays on ``ctx``."""
    if not isinstance(location, (dict, list, tuple)):
        raise TypeError('location must be a list, tuple or dict, got %s' % type(location).__name__)
    _check_dtype(dtype)
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location) != set(names):
            raise ValueError('Symbol arguments and keys of the given location do not match. '
                             'symbol args:%s, location.keys():%s' % (set(names), set(location)))
    else:
        location = dict(zip(names, location))
    return OrderedDict(sorted((k, _to_nd(v, ctx, dtype)) for k, v in location.items()))


def _parse_aux_states(sym, aux_states, ctx, dtype=default_dtype()):
    """Auxiliary state values (list or dict) as a dict of NDArrays, or None."""
    _check_dtype(dtype)
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states) != set(names):
            raise ValueError('Symbol aux_states names and given aux_states do not match. '
                             'symbol aux_names:%s, aux_states.keys:%s' % (set(names), set(aux_states)))
    else:
        aux_states = dict(zip(names, aux_states))
    return {k: nd_array(v, ctx=ctx, dtype=v.dtype if _is_asnumpy(dtype) else dtype)
            for k, v in aux_states.items()}


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Bind ``sym`` to numpy inputs given by name, run forward and return the output(s) as numpy
    arrays (one array for a single output)."""
    ctx = ctx or default_context()
    exe = sym.bind(ctx, args={k: nd_array(v, ctx=ctx) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outputs = [out.asnumpy() for out in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def _perturbed_sum(executor, name, values, dtype, aux_states, use_forward_train):
    """Sum of the first output after writing ``values`` into argument ``name`` (and resetting
    the auxiliary states, which a training forward may update)."""
    executor.arg_dict[name][:] = values.astype(dtype)
    if aux_states is not None:
        for key, val in aux_states.items():
            executor.aux_dict[key][:] = val
    executor.forward(is_train=use_forward_train)
    return executor.outputs[0].asnumpy().astype(np.float64)


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=default_dtype()):
    """Central-difference gradients of the sum of the executor's first output.

    Parameters
    ----------
    executor : Executor
    location : dict of str to numpy.ndarray
        Values of the arguments to differentiate (other arguments keep their values). Non-float
        arguments get a zero gradient.
    aux_states : dict of str to numpy.ndarray, optional
        Written back before every evaluation.
    eps : float
        The full step: ``(f(x + eps/2) - f(x - eps/2)) / eps``, differences taken in float64.
    use_forward_train : bool
    dtype : float16, float32 or float64
        The dtype the perturbed inputs are written in.

    Returns
    -------
    dict of str to numpy.ndarray
    """
    _check_dtype(dtype, allow_asnumpy=False)
    grads = {k: np.zeros(np.shape(v), dtype=dtype) for k, v in location.items()}
    for name, value in location.items():
        executor.arg_dict[name][:] = np.asarray(value).astype(dtype)
    for name, value in location.items():
        # a C-ordered copy, so that element i of ravel() is a view we can perturb
        point = np.array(value, order='C', copy=True)
        if point.dtype.kind != 'f':
            continue
        flat = point.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps / 2.0
            up = _perturbed_sum(executor, name, point, dtype, aux_states, use_forward_train)
            flat[i] = old - eps / 2.0
            down = _perturbed_sum(executor, name, point, dtype, aux_states, use_forward_train)
            grads[name].reshape(-1)[i] = (up - down).sum() / eps
            flat[i] = old
        executor.arg_dict[name][:] = np.asarray(value).astype(dtype)
    return grads


def _grad_requests(sym, grad_nodes):
    if grad_nodes is None:
        names = sym.list_arguments()
        return names, {k: 'write' for k in names}
    if isinstance(grad_nodes, (list, tuple)):
        return list(grad_nodes), {k: 'write' for k in grad_nodes}
    if isinstance(grad_nodes, dict):
        return list(grad_nodes), dict(grad_nodes)
    raise ValueError('grad_nodes must be None, a list/tuple of names or a dict of name to '
                     'grad_req, got %r' % (grad_nodes,))


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):
    """Check the backward pass of ``sym`` against central differences.

    The output is projected on a random tensor (elements in [0.1, 1.1)) and summed; the
    gradient of that scalar from backward is compared with the finite-difference one.

    Parameters
    ----------
    sym : Symbol
        A single-output symbol.
    location : list or dict of numpy.ndarray
        Values of all arguments (list in ``sym.list_arguments()`` order, or by name).
    aux_states : list or dict of numpy.ndarray, optional
    numeric_eps : float or dict of dtype to float, optional
        Finite-difference step (default by output dtype: default_numeric_eps()).
    rtol, atol : float, optional
        Tolerances (default by dtype).
    grad_nodes : list of str or dict of str to grad_req, optional
        The arguments to check (default all, with 'write'); 'add' and 'null' are checked too.
    use_forward_train : bool
    ctx : Context, optional
    grad_stype_dict : dict of str to str, optional
        Storage types of the gradient arrays.
    dtype : float16, float32 or float64
    """
    from ..symbol import Variable, make_loss  # pylint: disable=import-outside-toplevel,no-name-in-module
    _check_dtype(dtype, allow_asnumpy=False)
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    aux_npy = None if aux_states is None else {k: v.asnumpy() for k, v in aux_states.items()}
    grad_nodes, grad_req = _grad_requests(sym, grad_nodes)
    out_shape = sym.infer_shape(**{k: v.shape for k, v in location.items()})[1][0]
    loss = make_loss(sym * Variable('__random_proj'))
    location = dict(location)
    location['__random_proj'] = nd_array(np.random.rand(*out_shape) + 0.1, ctx=ctx, dtype=dtype)
    grads_npy = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_nodes}
    grads_npy['__random_proj'] = np.random.normal(0, 0.01, size=out_shape)
    args_grad = {k: nd_array(v, ctx=ctx, dtype=dtype) for k, v in grads_npy.items()}
    for name, stype in (grad_stype_dict or {}).items():
        if name in args_grad and stype not in (None, 'default'):
            args_grad[name] = args_grad[name].tostype(stype) * 0
    executor = loss.bind(ctx, grad_req=grad_req, args=location, args_grad=args_grad,
                         aux_states=aux_states)
    executor.forward(is_train=True)
    eps = get_tolerance(executor.outputs[0], numeric_eps, default_numeric_eps())
    if np.dtype(dtype) != np.float64 and eps < 1e-5:
        raise ValueError('numeric_eps=%g is too small for finite differences in %s'
                         % (eps, np.dtype(dtype).name))
    executor.backward()
    symbolic = executor.grad_dict
    numeric = numeric_grad(executor, location_npy, aux_npy, eps=eps,
                           use_forward_train=use_forward_train, dtype=dtype)
    for name in grad_nodes:
        _compare_gradient(name, grad_req[name], numeric[name], symbolic[name], grads_npy[name],
                          rtol, atol, 'NUMERICAL_%s' % name)


def _compare_gradient(name, req, want, got, before, rtol, atol, want_name, equal_nan=False):
    """Compare the gradient array ``got`` of argument ``name`` under ``req`` with ``want``
    (``before``: the values the gradient array held before backward)."""
    names = (want_name, 'BACKWARD_%s' % name)
    if req == 'write':
        assert_almost_equal(want, got, rtol, atol, names, equal_nan=equal_nan)
    elif req == 'add':
        got = got.asnumpy() if isinstance(got, NDArray) else got
        assert_almost_equal(want, got - before, rtol, atol, names, equal_nan=equal_nan)
    elif req == 'null':
        assert_almost_equal(before, got, rtol, atol, names, equal_nan=equal_nan)
    else:
        raise ValueError('Invalid grad_req %s for argument %s' % (req, name))


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):
    """Bind ``sym`` at ``location``, run an inference forward and compare each output with
    ``expected`` (list in output order, or dict by output name). Returns the outputs.

    ``dtype='asnumpy'`` keeps each numpy input's own dtype."""
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    args_grad = {k: nd_array(np.zeros(v.shape), ctx=ctx,
                             dtype=v.dtype if _is_asnumpy(dtype) else dtype)
                 for k, v in location.items()}
    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad, aux_states=aux_states)
    executor.forward(is_train=False)
    for name, want, got in zip(sym.list_outputs(), expected, executor.outputs):
        assert_almost_equal(want, got, rtol, atol, ('EXPECTED_%s' % name, 'FORWARD_%s' % name),
                            equal_nan=equal_nan)
    return executor.outputs


def _head_grads(out_grads, ctx, dtype):
    if out_grads is None:
        return None
    if isinstance(out_grads, dict):
        return {k: _to_nd(v, ctx, dtype) for k, v in out_grads.items()}
    if isinstance(out_grads, (list, tuple)):
        return [_to_nd(v, ctx, dtype) for v in out_grads]
    raise TypeError('out_grads must be None, a list or a dict, got %s' % type(out_grads).__name__)


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req='write', ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """Bind ``sym`` at ``location``, run a training forward and backward with head gradients
    ``out_grads`` and compare the argument gradients with ``expected`` (list in argument order,
    or dict by name) under each argument's ``grad_req``. Returns the gradient arrays."""
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    # gradient arrays start dirty (seeded), so that 'add' and 'null' are checked
    before = {k: np.random.normal(size=np.shape(v)) for k, v in sorted(expected.items())}
    args_grad = {}
    for name, value in before.items():
        arr = nd_array(value, ctx=ctx,
                       dtype=np.asarray(expected[name]).dtype if _is_asnumpy(dtype) else dtype)
        stype = (grad_stypes or {}).get(name)
        args_grad[name] = arr.tostype(stype) if stype not in (None, 'default') else arr
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in sym.list_arguments()}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(sym.list_arguments(), grad_req))
    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad, aux_states=aux_states,
                        grad_req=grad_req)
    executor.forward(is_train=True)
    executor.backward(_head_grads(out_grads, ctx, dtype))
    for name in expected:
        _compare_gradient(name, grad_req[name], expected[name], args_grad[name], before[name],
                          rtol, atol, 'EXPECTED_%s' % name, equal_nan)
    return args_grad


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ='whole', **kwargs):
    """Seconds per forward+backward (``typ='whole'``) or per inference forward (``'forward'``)
    of ``sym``, averaged over ``N`` runs after one warm-up. Shapes come from ``location`` (a dict
    of numpy arrays) or keyword arguments."""
    import time  # pylint: disable=import-outside-toplevel
    from ..ndarray import waitall  # pylint: disable=import-outside-toplevel
    if typ not in ('whole', 'forward'):
        raise ValueError('typ can only be "whole" or "forward", got %r' % (typ,))
    ctx = ctx or default_context()
    grad_req = grad_req or 'write'
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=a.shape, scale=1.0) for k, a in exe.arg_dict.items()}
    else:
        if not isinstance(location, dict):
            raise TypeError('check_speed: location must be a dict, got %s' % type(location).__name__)
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **{k: v.shape for k, v in location.items()})
    for name, value in location.items():
        exe.arg_dict[name][:] = value.astype(exe.arg_dict[name].dtype)
    train = typ == 'whole'

    def step():
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)
    step()
    waitall()
    tic = time.time()
    for _ in range(N):
        step()
    waitall()
    return (time.time() - tic) / N
