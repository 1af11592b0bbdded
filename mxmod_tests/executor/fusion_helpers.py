"""Running one graph with and without the generic fusion passes (fuse_products.py,
fuse_elemwise.py), for the fusion tests."""
import numpy as np

import mxmod as mx
from mxmod.ops import jit
from mxmod.test_utils import environment

ALL = {'MXMOD_FUSE_PRODUCTS': '1', 'MXMOD_FUSE_ELEMWISE': '1'}
NONE = {'MXMOD_FUSE_PRODUCTS': '0', 'MXMOD_FUSE_ELEMWISE': '0'}
PRODUCTS = {'MXMOD_FUSE_PRODUCTS': '1', 'MXMOD_FUSE_ELEMWISE': '0'}
ELEMWISE = {'MXMOD_FUSE_PRODUCTS': '0', 'MXMOD_FUSE_ELEMWISE': '1'}


class Run(object):
    """One bound graph after ``passes`` forward/backward passes: ``exe``, ``outs``, ``grads``."""

    def __init__(self, exe, outs, grads):
        self.exe, self.outs, self.grads = exe, outs, grads

    def count(self, op_name):
        """How many steps of the executed plan run ``op_name``."""
        return sum(step.op.op_name == op_name for step in self.exe._plan.steps)

    def ops(self, op_name):
        return [step.op for step in self.exe._plan.steps if step.op.op_name == op_name]


def run(sym, shapes, flags, numba=True, grad_req='write', dtype='float32', seed=0, passes=1,
        is_train=True, values=None, heads=True):
    """Bind ``sym`` under the environment ``flags`` (and numba on or off), fill its arguments
    with seeded uniform values (``values``: name -> array for some of them) and run it."""
    previous = jit.set_enabled(numba)
    try:
        with environment(flags):
            exe = sym.simple_bind(mx.cpu(), grad_req=grad_req,
                                  type_dict={n: dtype for n in sym.list_arguments()}, **shapes)
        rs = np.random.RandomState(seed)
        for name, arr in exe.arg_dict.items():
            given = (values or {}).get(name)
            arr[:] = given if given is not None else rs.uniform(-1, 1, arr.shape)
        head_grads = [mx.nd.array(rs.uniform(-1, 1, o.shape), dtype=o.dtype)
                      for o in exe.outputs] if heads else None
        outs = []
        for _ in range(passes):
            outs = [o.asnumpy() for o in exe.forward(is_train=is_train)]
            exe.backward(head_grads)
        grads = {k: v.asnumpy() for k, v in exe.grad_dict.items() if v is not None}
    finally:
        jit.set_enabled(previous)
    return Run(exe, outs, grads)


def same(a, b):
    """Outputs and gradients bit for bit equal."""
    assert len(a.outs) == len(b.outs)
    for x, y in zip(a.outs, b.outs):
        np.testing.assert_array_equal(x, y)
    assert sorted(a.grads) == sorted(b.grads)
    for key in a.grads:
        np.testing.assert_array_equal(a.grads[key], b.grads[key], err_msg=key)


def close(a, b, rtol=1e-5, atol=1e-6):
    """Outputs bit for bit equal, gradients equal up to the order of sums."""
    assert len(a.outs) == len(b.outs)
    for x, y in zip(a.outs, b.outs):
        np.testing.assert_array_equal(x, y)
    assert sorted(a.grads) == sorted(b.grads)
    for key in a.grads:
        np.testing.assert_allclose(a.grads[key], b.grads[key], rtol=rtol, atol=atol,
                                   err_msg=key)
