"""The executor's written-out forward and backward (executor/codegen.py) against the loops they
stand for (executor/fastpath.py): the same outputs, gradients and freed values, bit for bit, on
graphs that reach every branch of the loops; and when the written-out functions are made."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.executor import codegen


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def _mlp():
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=5, name='fc1')
    net = mx.sym.Activation(net, act_type='relu')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax'), {'data': (4, 6)}


def _shared_and_unused_outputs():
    """A weight read by two layers (its gradient summed), a split whose second part nobody
    reads (its head gradient filled with zeros), BatchNorm (auxiliary states) and two heads,
    one of them not a loss (it takes a head gradient)."""
    data = mx.sym.var('data')
    w = mx.sym.var('shared_weight')
    a = mx.sym.FullyConnected(data, weight=w, num_hidden=6, no_bias=True, name='a')
    b = mx.sym.FullyConnected(mx.sym.tanh(a), weight=w, num_hidden=6, no_bias=True, name='b')
    parts = mx.sym.split(b, num_outputs=2, axis=1, name='split')
    bn = mx.sym.BatchNorm(parts[0], name='bn', fix_gamma=False)
    head = mx.sym.FullyConnected(bn, num_hidden=2, name='head')
    return mx.sym.Group([mx.sym.LinearRegressionOutput(head, name='lro'), 2 * parts[0]]), \
        {'data': (5, 6)}


def _conv():
    data = mx.sym.var('data')
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name='conv')
    net = mx.sym.BatchNorm(net, name='bn')
    net = mx.sym.Activation(net, act_type='relu')
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type='max')
    net = mx.sym.FullyConnected(mx.sym.Flatten(net), num_hidden=3, name='fc')
    return mx.sym.SoftmaxOutput(net, name='softmax'), {'data': (2, 2, 6, 6)}


GRAPHS = [_mlp, _shared_and_unused_outputs, _conv]


def _passes(make, grad_req, hook, count=4):
    """Outputs and gradients after each of ``count`` forward/backward passes (numbers drawn
    from a fixed seed; the auxiliary states and inputs change between passes)."""
    sym, shapes = make()
    exe = sym.simple_bind(ctx=mx.cpu(), grad_req=grad_req, **shapes)
    zeros, real_zeros = [], exe._zeros

    def counted_zeros(slot):        # head gradients filled in for outputs nobody read
        zeros.append(slot)
        return real_zeros(slot)
    exe._zeros = counted_zeros
    if hook:
        seen = []
        exe.set_grad_ready_hook(seen.append)
    rs = np.random.RandomState(0)
    results = []
    for _ in range(count):
        for name, arr in exe.arg_dict.items():
            arr[:] = rs.randint(0, 2, arr.shape) if name.endswith('label') \
                else rs.randn(*arr.shape)
        outs = [o.asnumpy() for o in exe.forward(is_train=True)]
        heads = [mx.nd.array(rs.randn(*o.shape)) for o in exe.outputs]
        exe.backward(heads)
        results.append((outs, {k: g.asnumpy() for k, g in exe.grad_dict.items()
                               if g is not None},
                        [a.asnumpy() for a in exe.aux_arrays]))
    return results + [zeros], exe


@pytest.mark.parametrize('make', GRAPHS, ids=lambda m: m.__name__.strip('_'))
@pytest.mark.parametrize('grad_req', ['write', 'add'])
@pytest.mark.parametrize('hook', [False, True], ids=['plain', 'grad_hook'])
def test_written_out_passes_equal_the_loops(make, grad_req, hook, monkeypatch):
    monkeypatch.setattr(codegen, 'MAX_STEPS', -1)           # the loops only
    want, exe = _passes(make, grad_req, hook)
    assert exe.__dict__['_codegen_bwd'][2] is None
    monkeypatch.setattr(codegen, 'MAX_STEPS', 1000)
    monkeypatch.setattr(codegen, 'WARM_PASSES', 1)          # written out from the first pass
    got, exe = _passes(make, grad_req, hook)
    assert exe.__dict__['_codegen_bwd'][2] is not None
    assert exe.__dict__['_codegen_fwd_train'][2] is not None
    assert want[-1] == got[-1]                  # the same zero head gradients made
    if make is _shared_and_unused_outputs:
        assert got[-1]
    for (outs, grads, auxs), (outs2, grads2, auxs2) in zip(want[:-1], got[:-1]):
        for a, b in zip(outs, outs2):
            np.testing.assert_array_equal(a, b)
        assert grads.keys() == grads2.keys()
        for name in grads:
            np.testing.assert_array_equal(grads[name], grads2[name], err_msg=name)
        for a, b in zip(auxs, auxs2):
            np.testing.assert_array_equal(a, b)


def test_values_are_freed_as_by_the_loops(monkeypatch):
    """After a pass, the executor holds the same slots (others emptied) both ways."""
    def held(warm):
        monkeypatch.setattr(codegen, 'WARM_PASSES', warm)
        sym, shapes = _conv()
        exe = sym.simple_bind(ctx=mx.cpu(), **shapes)
        exe.forward(is_train=True)
        after_forward = [v is None for v in exe._vals]
        exe.backward()
        inference = exe.forward(is_train=False)[0].asnumpy()
        return after_forward, [v is None for v in exe._vals], inference
    loops, written = held(10 ** 6), held(1)
    assert loops[:2] == written[:2]
    np.testing.assert_array_equal(loops[2], written[2])


def test_functions_are_made_after_the_warm_passes_and_again_for_a_new_program(monkeypatch):
    monkeypatch.setattr(codegen, 'WARM_PASSES', 3)
    made = []
    real = codegen._make

    def counting(lines, consts, name):
        made.append(lines[0])
        return real(lines, consts, name)
    monkeypatch.setattr(codegen, '_make', counting)
    sym, shapes = _mlp()
    exe = sym.simple_bind(ctx=mx.cpu(), **shapes)
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward()
    assert not made                                   # two passes: the loops
    exe.forward(is_train=True)
    exe.backward()
    assert made == ['def run(vals):', 'def run(exe, vals, grads):']
    for _ in range(3):
        exe.forward(is_train=True)
        exe.backward()
    assert len(made) == 2                             # made once
    exe.forward(is_train=False)                       # inference frees other slots: counted apart
    assert len(made) == 2
    new = exe.reshape(data=(3, 6), softmax_label=(3,))
    for _ in range(3):
        new.forward(is_train=True)
        new.backward()
    assert len(made) == 4                             # the reshaped executor's own programs


def test_long_programs_keep_the_loops(monkeypatch):
    monkeypatch.setattr(codegen, 'WARM_PASSES', 1)
    monkeypatch.setattr(codegen, 'MAX_STEPS', 3)
    sym, shapes = _mlp()                              # 4 steps
    exe = sym.simple_bind(ctx=mx.cpu(), **shapes)
    for _ in range(3):
        exe.forward(is_train=True)
        exe.backward()
    assert exe.__dict__['_codegen_fwd_train'][2] is None
    assert exe.__dict__['_codegen_bwd'][2] is None
