"""Replay the MXNet 1.9.1 results frozen by fixtures/gen_nn_fixtures.py against mxmod operators.

``run_case(name)`` runs the operator directly (forward, then backward with the frozen head
gradients) and compares outputs, argument gradients and the auxiliary/argument arrays after the
step with MXNet's. ``shape_case(name)`` compares partial shape inference."""
import json
import os

import numpy as np

import mxmod as mx
from mxmod.context import device_scope
from mxmod.ndarray.ndarray import to_numpy
from mxmod.ops.base import OPS, OpContext

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')
with open(os.path.join(HERE, 'nn_cases.json')) as _f:
    META = json.load(_f)
_NPZ = np.load(os.path.join(HERE, 'nn_cases.npz'))


def case_names(ops):
    """Names of the frozen forward/backward cases whose operator is in ``ops``."""
    return sorted(k for k, v in META['cases'].items() if v['op'] in ops)


def shape_names(ops):
    """Names of the frozen shape-inference cases whose operator is in ``ops``."""
    return sorted(k for k, v in META['shapes'].items() if v['op'] in ops and 'error' not in v)


def _short(name):
    return name[3:] if name.startswith('op_') else name


def run_case(name, rtol=1e-4, atol=1e-5, ctx=None):
    """Run frozen case ``name`` through the mxmod operator and compare with MXNet (on ``ctx``,
    default cpu; arrays go to its device and results come back through ``to_numpy``)."""
    ctx = ctx or mx.cpu()
    xp = ctx.xp
    with device_scope(ctx):
        _run_case(name, rtol, atol, ctx, xp)


def _run_case(name, rtol, atol, ctx, xp):
    meta = META['cases'][name]
    op = OPS[meta['op']](meta['attrs'])
    assert [_short(n) for n in meta['arguments']] == op.list_arguments()
    assert [_short(n) for n in meta['aux']] == op.list_auxiliary_states()
    assert [_short(n) for n in meta['outputs']] == op.list_outputs()[:op.num_visible_outputs()]
    args = [xp.array(_NPZ['%s/arg:%s' % (name, n)]) for n in meta['arguments']]
    aux = [xp.array(_NPZ['%s/aux:%s' % (name, n)]) for n in meta['aux']]
    octx = OpContext(xp, ctx, is_train=meta['is_train'])
    outs = op.forward(octx, args, aux)
    for i, oname in enumerate(meta['outputs']):
        if oname.endswith('mask'):
            continue
        want = _NPZ['%s/out:%d' % (name, i)]
        np.testing.assert_allclose(to_numpy(outs[i]), want, rtol=rtol, atol=atol,
                                   err_msg='%s: output %s' % (name, oname))
        assert outs[i].dtype == want.dtype, (name, oname, outs[i].dtype, want.dtype)
    if meta['grad']:
        heads = [xp.array(_NPZ['%s/head:%d' % (name, i)]) if i < len(meta['outputs'])
                 else xp.zeros_like(o) for i, o in enumerate(outs)]
        octx.need_grad = ['%s/grad:%s' % (name, n) in _NPZ.files for n in meta['arguments']]
        grads = op.backward(octx, heads, args, outs, aux)
        for i, aname in enumerate(meta['arguments']):
            key = '%s/grad:%s' % (name, aname)
            if key in _NPZ.files:
                np.testing.assert_allclose(to_numpy(grads[i]), _NPZ[key], rtol=rtol, atol=atol,
                                           err_msg='%s: gradient of %s' % (name, aname))
                assert grads[i].dtype == _NPZ[key].dtype, (name, aname, grads[i].dtype)
    for i, aname in enumerate(meta['aux']):
        np.testing.assert_allclose(to_numpy(aux[i]), _NPZ['%s/aux_after:%s' % (name, aname)], rtol=rtol,
                                   atol=atol, err_msg='%s: %s after the step' % (name, aname))
    for i, aname in enumerate(meta['arguments']):
        np.testing.assert_allclose(to_numpy(args[i]), _NPZ['%s/arg_after:%s' % (name, aname)], rtol=rtol,
                                   atol=atol, err_msg='%s: argument %s after the step' % (name, aname))


def shape_case(name):
    """Compare mxmod's partial shape inference of one operator with MXNet's."""
    meta = META['shapes'][name]
    op = OPS[meta['op']](meta['attrs'])
    given = {_short(k): tuple(v) for k, v in meta['given'].items()}
    names = op.list_arguments() + op.list_auxiliary_states()
    in_shapes = [given.get(n) for n in names]
    out_shapes = [None] * len(op.list_outputs())
    ins, outs = op.infer_shape(in_shapes, out_shapes)
    nargs = len(op.list_arguments())
    want_args = [tuple(s) if s else None for s in meta['arg_shapes']]
    want_aux = [tuple(s) if s else None for s in meta['aux_shapes']]
    nvis = op.num_visible_outputs()
    assert [tuple(s) if s is not None else None for s in ins[:nargs]] == want_args, (name, ins)
    assert [tuple(s) if s is not None else None for s in ins[nargs:]] == want_aux, (name, ins)
    assert [tuple(s) for s in outs[:nvis]] == [tuple(s) for s in meta['out_shapes']], (name, outs)
