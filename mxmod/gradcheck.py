"""Numeric and symbolic checks of bound symbols (the gradient half of ``mx.test_utils``)."""
import numpy as np

from .context import cpu
from .ndarray.ndarray import NDArray, array as nd_array


def _location(sym, location, ctx, dtype):
    if isinstance(location, dict):
        items = location
    else:
        items = dict(zip(sym.list_arguments(), location))
    return {k: (v if isinstance(v, NDArray) else nd_array(v, ctx=ctx, dtype=dtype))
            for k, v in items.items()}


def _aux(sym, aux_states, ctx, dtype):
    if aux_states is None:
        return None
    if not isinstance(aux_states, dict):
        aux_states = dict(zip(sym.list_auxiliary_states(), aux_states))
    return {k: (v if isinstance(v, NDArray) else nd_array(v, ctx=ctx, dtype=dtype))
            for k, v in aux_states.items()}


def _bind(sym, ctx, args, aux, grad_req='write', need_grads=True):
    grads = {k: nd_array(np.zeros(v.shape), ctx=ctx, dtype=v.dtype) for k, v in args.items()} \
        if need_grads else None
    return sym.bind(ctx, args=args, args_grad=grads, grad_req=grad_req,
                    aux_states=_aux_list(sym, ctx, args, aux))


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True, dtype=np.float32):
    """Central-difference gradients of sum(outputs) w.r.t. each argument in ``location``."""
    approx = {}
    for k, v in location.items():
        executor.arg_dict[k][:] = v
    for name, val in location.items():
        base = _np(val).astype(dtype)
        grad = np.zeros_like(base)
        flat = base.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps / 2
            executor.arg_dict[name][:] = base
            up = sum(o.asnumpy().astype(dtype).sum() for o in executor.forward(is_train=use_forward_train))
            flat[i] = old - eps / 2
            executor.arg_dict[name][:] = base
            down = sum(o.asnumpy().astype(dtype).sum() for o in executor.forward(is_train=use_forward_train))
            flat[i] = old
            grad.reshape(-1)[i] = (up - down) / eps
        executor.arg_dict[name][:] = base
        approx[name] = grad
    return approx


def _np(v):
    return v.asnumpy() if isinstance(v, NDArray) else np.asarray(v)


def _grad_array(shape, ctx, dtype, stype):
    """A gradient array of ``stype``: random normal values when dense (so that a write is
    visible), empty when sparse, as MXNet's checks create them."""
    if stype is not None and stype != 'default':
        from .ndarray import zeros  # pylint: disable=import-outside-toplevel
        return zeros(shape, ctx=ctx, dtype=dtype, stype=stype)
    return nd_array(np.random.normal(size=shape), ctx=ctx, dtype=dtype)


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=1e-3, rtol=1e-2, atol=None,
                           grad_nodes=None, use_forward_train=True, ctx=None, grad_stype_dict=None,
                           dtype=np.float32):
    """Compare the symbolic gradient of sum(outputs * random projection) with central differences.

    ``location`` values may be sparse NDArrays; ``grad_stype_dict`` gives gradient arrays of
    other storage types (name -> 'row_sparse' / 'csr')."""
    from .symbol import Variable, make_loss, sum as sym_sum  # pylint: disable=import-outside-toplevel,no-name-in-module
    ctx = ctx or cpu()
    args = _location(sym, location, ctx, dtype)
    aux = _aux(sym, aux_states, ctx, dtype)
    out_shape = sym.infer_shape(**{k: v.shape for k, v in args.items()})[1][0]
    proj = np.random.normal(0, 0.01, size=out_shape).astype(dtype)
    wrapped = make_loss(sym_sum(sym * Variable('__random_proj')))
    args_all = dict(args)
    args_all['__random_proj'] = nd_array(proj, ctx=ctx, dtype=dtype)
    grad_nodes = list(grad_nodes or args.keys())
    stypes = grad_stype_dict or {}
    grads = {k: _grad_array(v.shape, ctx, v.dtype, stypes.get(k)) for k, v in args_all.items()
             if k in grad_nodes}
    exe = wrapped.bind(ctx, args=args_all, args_grad=grads,
                       grad_req={k: 'write' if k in grad_nodes else 'null' for k in args_all},
                       aux_states=_aux_list(wrapped, ctx, args_all, aux, copy=True))
    exe.forward(is_train=True)
    exe.backward()
    symbolic = {k: exe.grad_dict[k].asnumpy() for k in grad_nodes}
    check = wrapped.bind(ctx, args={k: v.copy() for k, v in args_all.items()}, grad_req='null',
                         aux_states=_aux_list(wrapped, ctx, args_all, aux, copy=True))
    numeric = numeric_grad(check, {k: args[k].asnumpy() for k in grad_nodes}, eps=numeric_eps,
                           use_forward_train=use_forward_train, dtype=np.float64)
    for name in grad_nodes:
        np.testing.assert_allclose(symbolic[name], numeric[name], rtol=rtol, atol=atol or 1e-4,
                                   err_msg='gradient of %s' % name)


def _aux_list(sym, ctx, args, aux, copy=False):
    if aux:
        return {k: v.copy() for k, v in aux.items()} if copy else aux
    shapes = sym.infer_shape(**{k: v.shape for k, v in args.items()})[2]
    return {n: nd_array(np.zeros(s), ctx=ctx) for n, s in zip(sym.list_auxiliary_states(), shapes)}


def check_symbolic_forward(sym, location, expected, rtol=1e-4, atol=None, aux_states=None, ctx=None,
                           equal_nan=False, dtype=np.float32):
    """Bind, run forward (inference) and compare every output with ``expected``; returns the
    executor's output NDArrays."""
    ctx = ctx or cpu()
    args = _location(sym, location, ctx, dtype)
    exe = _bind(sym, ctx, args, _aux(sym, aux_states, ctx, dtype), grad_req='null', need_grads=False)
    outputs = exe.forward(is_train=False)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    for got, want in zip(outputs, expected):
        np.testing.assert_allclose(got.asnumpy(), _np(want), rtol=rtol, atol=atol or 1e-20,
                                   equal_nan=equal_nan)
    return outputs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=1e-5, atol=None, aux_states=None,
                            grad_req='write', ctx=None, grad_stypes=None, equal_nan=False,
                            dtype=np.float32):
    """Bind, run forward (training) and backward with ``out_grads``; compare the gradients.

    Gradient arrays exist for the names in ``expected`` (of storage type ``grad_stypes[name]``
    when given); returns them (name -> NDArray)."""
    ctx = ctx or cpu()
    args = _location(sym, location, ctx, dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in sym.list_arguments()}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(sym.list_arguments(), grad_req))
    stypes = grad_stypes or {}
    grads = {k: _grad_array(args[k].shape, ctx, dtype, stypes.get(k)) for k in expected}
    initial = {k: v.asnumpy() for k, v in grads.items()}
    aux = _aux(sym, aux_states, ctx, dtype)
    exe = sym.bind(ctx, args=args, args_grad=grads, grad_req=grad_req,
                   aux_states=_aux_list(sym, ctx, args, aux))
    exe.forward(is_train=True)
    if isinstance(out_grads, (list, tuple)):
        out_grads = [o if isinstance(o, NDArray) else nd_array(o, ctx=ctx, dtype=dtype) for o in out_grads]
    elif isinstance(out_grads, dict):
        out_grads = {k: o if isinstance(o, NDArray) else nd_array(o, ctx=ctx, dtype=dtype)
                     for k, o in out_grads.items()}
    exe.backward(out_grads)
    for name, want in expected.items():
        got = grads[name].asnumpy()
        req = grad_req.get(name, 'null')
        if req == 'add':
            got = got - initial[name]
        elif req == 'null':
            want = initial[name]
        np.testing.assert_allclose(got, _np(want), rtol=rtol, atol=atol or 1e-20,
                                   equal_nan=equal_nan, err_msg='gradient of %s' % name)
    return grads


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Bind ``sym`` with numpy inputs, run forward and return numpy outputs."""
    ctx = ctx or cpu()
    args = {k: nd_array(v, ctx=ctx) for k, v in inputs.items()}
    exe = _bind(sym, ctx, args, None, grad_req='null', need_grads=False)
    outs = [o.asnumpy() for o in exe.forward(is_train=is_train)]
    return outs[0] if len(outs) == 1 else outs


def check_consistency(sym, ctx_list, scale=1.0, grad_req='write', arg_params=None, aux_params=None,
                      tol=None, raise_on_err=True, ground_truth=None, equal_nan=False,
                      use_uniform=False, rand_type=np.float64):
    """Run ``sym`` on every context/dtype in ``ctx_list`` and compare outputs and gradients."""
    syms = sym if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    results = []
    arg_params = dict(arg_params or {})
    for s, spec in zip(syms, ctx_list):
        spec = dict(spec)
        ctx = spec.pop('ctx')
        type_dict = spec.pop('type_dict', {})
        exe = s.simple_bind(ctx, grad_req=grad_req, type_dict=type_dict, **spec)
        for name, arr in exe.arg_dict.items():
            if name not in arg_params:
                arg_params[name] = np.random.normal(size=arr.shape, scale=scale)
            arr[:] = arg_params[name].astype(arr.dtype)
        for name, arr in exe.aux_dict.items():
            if aux_params and name in aux_params:
                arr[:] = aux_params[name]
        outs = [o.asnumpy() for o in exe.forward(is_train=True)]
        exe.backward([o.ones_like() if hasattr(o, 'ones_like') else o for o in exe.outputs])
        results.append((outs, {k: v.asnumpy() for k, v in exe.grad_dict.items()}))
    ref_outs, ref_grads = results[0]
    for outs, grads in results[1:]:
        for a, b in zip(outs, ref_outs):
            np.testing.assert_allclose(a, b, rtol=tol or 1e-3, atol=tol or 1e-3)
        for k in ref_grads:
            np.testing.assert_allclose(grads[k], ref_grads[k], rtol=tol or 1e-3, atol=tol or 1e-3)
    return results
