"""Operator-level checks used by the op tests: run one operator directly and compare its forward
with a numpy reference and its backward with central differences in float64.

The operators run on ``test_context()``: cpu(0), or gpu(0) when the suite runs with
``MXMOD_TEST_DEVICE=emulated-gpu`` (mxmod_tests/gpu/test_emulated_suites.py does that, under the
cupy emulation); inputs go to that device and results come back as numpy arrays."""
import os

import numpy as np

import mxmod as mx
from mxmod.context import device_scope
from mxmod.ndarray.ndarray import to_numpy
from mxmod.ops.base import OPS, OpContext


def test_context():
    """The context the operator checks run on (see the module docstring)."""
    return mx.gpu(0) if os.environ.get('MXMOD_TEST_DEVICE') == 'emulated-gpu' else mx.cpu()


def _run(fn, *args):
    """Call ``fn(octx, *device arrays)`` on the test context; return numpy results."""
    ctx = test_context()
    xp = ctx.xp
    if xp is np:
        return fn(OpContext(np, ctx), *args)
    with device_scope(ctx):
        moved = [[xp.array(a) if isinstance(a, np.ndarray) else a for a in group] for group in args]
        result = fn(OpContext(xp, ctx), *moved)
        for group, dev_group in zip(args, moved):  # in-place updates show as on the CPU
            for host, dev in zip(group, dev_group):
                if isinstance(host, np.ndarray) and host.flags.writeable:
                    host[...] = to_numpy(dev)
        stray = [type(r).__name__ for r in result if r is not None and not isinstance(r, xp.ndarray)]
        assert not stray, 'results on %s must be device arrays, got %s' % (ctx, stray)
        return [None if r is None else to_numpy(r) for r in result]


def make(op_name, **attrs):
    """Instantiate operator ``op_name`` with attributes (strings or Python values)."""
    return OPS[op_name](attrs)


def run_forward(op, inputs, aux=(), is_train=False, seed=0):
    """Forward of ``op`` on numpy arrays; returns the list of outputs."""
    mx.random.seed(seed) if hasattr(mx, 'random') else None

    def forward(octx, ins, auxs):
        octx.is_train = is_train
        return op.forward(octx, ins, auxs)
    return _run(forward, [np.asarray(x) for x in inputs], [np.array(a) for a in aux])


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
    mx.random.seed(0) if hasattr(mx, 'random') else None

    def forward_backward(octx, ins, auxs, heads):
        octx.is_train = is_train
        octx.need_grad = [True] * len(ins)
        outs = op.forward(octx, ins, [a.copy() for a in auxs])
        # the executor frees what backward_uses does not declare: hand backward exactly that
        uses = op.backward_uses
        seen_in = ins if 'inputs' in uses else [None] * len(ins)
        seen_out = outs if 'outputs' in uses else [None] * len(outs)
        return op.backward(octx, heads, seen_in, seen_out, [a.copy() for a in auxs])
    grads = _run(forward_backward, inputs, aux, [np.asarray(h, dtype=np.float64) for h in head])
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
