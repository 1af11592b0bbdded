"""Operator-level checks used by the op tests: run one operator directly and compare its forward
with a numpy reference and its backward with central differences in float64."""
import numpy as np

import mxmod as mx
from mxmod.ops.base import OPS, OpContext


def make(op_name, **attrs):
    """Instantiate operator ``op_name`` with attributes (strings or Python values)."""
    return OPS[op_name](attrs)


def run_forward(op, inputs, aux=(), is_train=False, seed=0):
    """Forward of ``op`` on numpy arrays; returns the list of outputs."""
    octx = OpContext(np, mx.cpu(), is_train=is_train)
    mx.random.seed(seed) if hasattr(mx, 'random') else None
    return op.forward(octx, [np.asarray(x) for x in inputs], [np.array(a) for a in aux])


def check_forward(op_name, attrs, inputs, expected, aux=(), rtol=1e-5, atol=1e-6, is_train=False):
    """Assert the outputs of ``op_name`` equal ``expected`` (a list of arrays)."""
    outs = run_forward(make(op_name, **attrs), inputs, aux, is_train)
    for got, want in zip(outs, expected):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    return outs


def check_grad(op_name, attrs, inputs, aux=(), wrt=None, is_train=True, eps=1e-6, rtol=1e-4,
               atol=1e-6, head=None, loss=False):
    """Compare ``backward`` with central differences of ``sum(head * forward)`` in float64.

    Parameters
    ----------
    wrt : list of int, optional
        Indices of the arguments to check (default: all of floating dtype).
    head : list of arrays, optional
        Head gradients (default: random). For loss ops (``loss=True``) the head gradient is ignored
        by the op and the numerical target is ``sum(backward is d/dx of the loss)`` so callers pass
        ``head`` describing the implied objective instead.
    """
    op = make(op_name, **attrs)
    inputs = [np.array(x, dtype=np.float64, order='C') if np.asarray(x).dtype.kind == 'f'
              else np.array(x, order='C') for x in inputs]
    aux = [np.array(a, dtype=np.float64) for a in aux]
    rng = np.random.RandomState(7)
    outs = run_forward(op, inputs, [a.copy() for a in aux], is_train)
    if head is None:
        head = [rng.uniform(-1, 1, size=np.shape(o)) for o in outs]
    octx = OpContext(np, mx.cpu(), is_train=is_train)
    octx.need_grad = [True] * len(inputs)
    mx.random.seed(0) if hasattr(mx, 'random') else None
    outs = op.forward(octx, inputs, [a.copy() for a in aux])
    # the executor frees what backward_uses does not declare: hand backward exactly that
    uses = op.backward_uses
    seen_in = inputs if 'inputs' in uses else [None] * len(inputs)
    seen_out = outs if 'outputs' in uses else [None] * len(outs)
    grads = op.backward(octx, [np.asarray(h, dtype=np.float64) for h in head], seen_in, seen_out,
                        [a.copy() for a in aux])
    if wrt is None:
        wrt = [i for i, x in enumerate(inputs) if x.dtype.kind == 'f']

    def objective():
        res = run_forward(op, inputs, [a.copy() for a in aux], is_train)
        return sum(float(np.sum(h * r)) for h, r in zip(head, res))

    for i in wrt:
        x = inputs[i]
        num = np.zeros_like(x)
        flat = x.reshape(-1)
        for k in range(flat.size):
            old = flat[k]
            flat[k] = old + eps
            up = objective()
            flat[k] = old - eps
            down = objective()
            flat[k] = old
            num.reshape(-1)[k] = (up - down) / (2 * eps)
        np.testing.assert_allclose(grads[i], num, rtol=rtol, atol=atol,
                                   err_msg='%s: gradient of argument %d (%s)'
                                   % (op_name, i, op.list_arguments()[i]))
    return grads
