"""Arrays derived from an argument shared by several steps (FullyConnected's C-ordered transposed
weight in an unrolled RNN) are computed once per forward: results match numpy, and a weight
changed in place between passes (an optimizer update, a user's assignment) is seen by the next
forward."""
import numpy as np
import pytest

import mxmod as mx


def _chain(steps):
    """``steps`` FullyConnected layers sharing one square weight and bias, then a tanh each."""
    x = mx.sym.Variable('data')
    w, b = mx.sym.Variable('w'), mx.sym.Variable('b')
    for i in range(steps):
        x = mx.sym.tanh(mx.sym.FullyConnected(x, weight=w, bias=b, num_hidden=6, name='fc%d' % i))
    return mx.sym.MakeLoss(mx.sym.sum(x))


def _reference(x, w, b, steps):
    """Forward value and gradients (data, w, b) in float64."""
    hs = [x]
    for _ in range(steps):
        hs.append(np.tanh(hs[-1] @ w.T + b))
    dh = np.ones_like(hs[-1])
    dw, db = np.zeros_like(w), np.zeros_like(b)
    for i in range(steps, 0, -1):
        dz = dh * (1 - hs[i] ** 2)
        dw += dz.T @ hs[i - 1]
        db += dz.sum(0)
        dh = dz @ w
    return hs[-1].sum(), dh, dw, db


def _values(rng):
    return (rng.uniform(-1, 1, (4, 6)), rng.uniform(-0.5, 0.5, (6, 6)), rng.uniform(-0.1, 0.1, 6))


@pytest.mark.parametrize('mirror', ['0', '1'])
def test_shared_weight_updated_between_passes(mirror):
    steps = 5
    with mx.test_utils.environment('MXNET_BACKWARD_DO_MIRROR', mirror):
        exe = _chain(steps).simple_bind(mx.cpu(), data=(4, 6))
    shared = [s.op.op_name for s, o in zip(exe._plan.steps, exe._octx) if o.shared is not None]
    assert shared == ['FullyConnected'] * steps
    rng = np.random.RandomState(0)
    for _ in range(3):                   # new weights each pass, written into the same arrays
        x, w, b = _values(rng)
        exe.arg_dict['data'][:] = x
        exe.arg_dict['w'][:] = w
        exe.arg_dict['b'][:] = b
        out = exe.forward(is_train=True)[0].asnumpy()
        exe.backward()
        want = _reference(x, w, b, steps)
        np.testing.assert_allclose(out, want[0], rtol=1e-5)
        for name, ref in zip(('data', 'w', 'b'), want[1:]):
            np.testing.assert_allclose(exe.grad_dict[name].asnumpy(), ref, rtol=1e-4, atol=1e-6)


def test_unshared_weight_gets_no_cache():
    x = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3, name='fc')
    exe = x.simple_bind(mx.cpu(), data=(2, 4))
    assert all(o.shared is None for o in exe._octx)

