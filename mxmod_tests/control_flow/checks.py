"""Helpers of the control-flow tests: run a bound symbol forward and backward, and central finite
differences of ``sum(output * head)`` (float64) as the reference for its gradients."""
import numpy as np

import mxmod as mx


def run(sym, arrays, heads=None, dtype=None, grad_req='write', is_train=True):
    """Outputs and input gradients (numpy) of ``sym`` bound on ``arrays`` (name -> numpy)."""
    cast = (lambda v: v.astype(dtype)) if dtype else (lambda v: v)
    args = {k: mx.nd.array(cast(v), dtype=cast(v).dtype) for k, v in arrays.items()}
    grads = {k: mx.nd.zeros(v.shape, dtype=v.dtype) for k, v in args.items()}
    exe = sym.bind(mx.cpu(), args, args_grad=grads, grad_req=grad_req)
    outs = [o.asnumpy() for o in exe.forward(is_train=is_train)]
    if heads is None:
        return outs, {}
    exe.backward([mx.nd.array(cast(h), dtype=outs[i].dtype) for i, h in enumerate(heads)])
    return outs, {k: g.asnumpy() for k, g in exe.grad_dict.items()}


def numeric_grads(sym, arrays, heads, names=None, eps=1e-6):
    """Central differences of ``sum_k sum(output_k * heads[k])`` in float64, per input of
    ``names`` (default: all)."""
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in arrays.items()}
    heads = [np.asarray(h, dtype=np.float64) for h in heads]
    args = {k: mx.nd.array(v, dtype='float64') for k, v in arrays.items()}
    exe = sym.bind(mx.cpu(), args, grad_req='null')

    def loss():
        return sum(float((o.asnumpy() * h).sum()) for o, h in zip(exe.forward(), heads))
    found = {}
    for name in names or sorted(arrays):
        value = arrays[name]
        grad = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            for sign in (1, -1):
                probe = value.copy()
                probe[idx] += sign * eps
                exe.arg_dict[name][:] = probe
                grad[idx] += sign * loss() / (2 * eps)
        exe.arg_dict[name][:] = value
        found[name] = grad
    return found


def assert_grads_match(sym, arrays, heads, names=None, rtol=1e-6, atol=1e-8):
    """The executor's float64 gradients of ``sym`` equal the finite differences."""
    _, grads = run(sym, arrays, heads, dtype=np.float64)
    for name, expected in numeric_grads(sym, arrays, heads, names).items():
        np.testing.assert_allclose(grads[name], expected, rtol=rtol, atol=atol, err_msg=name)
