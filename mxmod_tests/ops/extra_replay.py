"""Replay of the frozen MXNet cases in fixtures/extra_<group>_oracle.npz (written by
fixtures/make_extra_op_fixtures.py): MXNet's symbol JSON is loaded into mxmod, bound on the test
context, run forward and backward with MXNet's head gradients, and every output and recorded
gradient is compared with MXNet's. The JSON mxmod writes back must name the same operators with
the same attributes."""
import glob
import json
import os

import numpy as np

import mxmod as mx
from mxmod_tests.ops.opcheck import test_context

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures')


def load_group(group):
    """(npz, manifest) of extra_<group>_oracle.npz."""
    data = np.load(os.path.join(FIXTURES, 'extra_%s_oracle.npz' % group))
    return data, json.loads(str(data['__cases__']))


def all_groups():
    """Names of the groups with a fixture file."""
    return sorted(os.path.basename(p)[len('extra_'):-len('_oracle.npz')]
                  for p in glob.glob(os.path.join(FIXTURES, 'extra_*_oracle.npz')))


def _ops(sym_json):
    return [(n['op'], n['name'], n.get('attrs', n.get('param', {})))
            for n in json.loads(sym_json)['nodes'] if n['op'] != 'null']


def replay(data, case, rtol=1e-5, atol=1e-6):
    """Load MXNet's JSON of ``case`` into mxmod and compare outputs and gradients."""
    key = case['key']
    sym = mx.sym.load_json(case['json'])
    assert _ops(sym.tojson()) == _ops(case['json']), key
    ctx = test_context()
    names = ['in%d' % i for i in range(case['n_in'])]
    inputs = [data['%s__in%d' % (key, i)] for i in range(case['n_in'])]
    args = {n: mx.nd.array(x, ctx=ctx, dtype=x.dtype) for n, x in zip(names, inputs)}
    grads = {n: mx.nd.zeros(x.shape, ctx=ctx, dtype=x.dtype) for n, x in zip(names, inputs)}
    req = {n: ('write' if i in case['grads'] else 'null') for i, n in enumerate(names)}
    shapes = sym.infer_shape(**{n: x.shape for n, x in zip(names, inputs)})[2]
    aux = {name: (mx.nd.ones if name.endswith('var') else mx.nd.zeros)(shape, ctx=ctx,
                                                                        dtype=inputs[0].dtype)
           for name, shape in zip(sym.list_auxiliary_states(), shapes)}
    exe = sym.bind(ctx, args, args_grad=grads, grad_req=req, aux_states=aux)
    outs = exe.forward(is_train=True)
    assert len(outs) == case['n_out'], (key, len(outs), case['n_out'])
    for i, out in enumerate(outs):
        want = data['%s__out%d' % (key, i)]
        got = out.asnumpy()
        assert got.dtype == want.dtype, (key, i, got.dtype, want.dtype)
        assert got.shape == want.shape, (key, i, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg='%s: output %d' % (key, i))
    if not case['grads']:
        return
    heads = [data['%s__head%d' % (key, i)] for i in range(case['n_out'])]
    exe.backward([mx.nd.array(h, ctx=ctx, dtype=h.dtype) for h in heads])
    for i in case['grads']:
        np.testing.assert_allclose(exe.grad_dict[names[i]].asnumpy(),
                                   data['%s__grad%d' % (key, i)], rtol=rtol, atol=atol,
                                   err_msg='%s: gradient of input %d' % (key, i))


def build_in_mxmod(case):
    """The case's symbol built by mxmod's own front end (the same builder source)."""
    names = ['in%d' % i for i in range(case['n_in'])]
    return eval(case['build'], {'mx': mx, 'np': np})(*[mx.sym.var(n) for n in names])  # noqa: S307


def same_json_ops(case):
    """mxmod's front end writes the same operators with the same attributes as MXNet's (node
    names depend on the name counters of the process, so they are not compared)."""
    mine = [(op, attrs) for op, _, attrs in _ops(build_in_mxmod(case).tojson())]
    theirs = [(op, attrs) for op, _, attrs in _ops(case['json'])]
    assert mine == theirs, (case['key'], mine, theirs)
