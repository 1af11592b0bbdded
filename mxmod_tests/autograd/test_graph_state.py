"""NDArray._fresh_grad (set by backward on every variable it differentiates, reset by the user)
and autograd.get_symbol (the recorded computation as a Symbol that recomputes the same values)."""
import json

import numpy as np
import pytest

import mxmod as mx
from mxmod import autograd


def test_fresh_grad_follows_backward_and_detach():
    x, y = mx.nd.ones((2, 2)), mx.nd.ones((2, 2))
    dx, dy = mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2))
    autograd.mark_variables([x, y], [dx, dy])
    assert not x._fresh_grad and not y._fresh_grad
    with autograd.record():
        (x + 2 + y).backward()
    assert x._fresh_grad and y._fresh_grad
    np.testing.assert_array_equal(dx.asnumpy(), np.ones((2, 2)))
    x._fresh_grad = False
    y._fresh_grad = False
    with autograd.record():
        (( x + 2).detach() + y).backward()
    assert y._fresh_grad and not x._fresh_grad
    # grad_req 'null' variables are not touched; attach_grad starts afresh
    z = mx.nd.ones(3)
    z.attach_grad(grad_req='null')
    with autograd.record():
        (z * 2).backward()
    assert not z._fresh_grad
    z.attach_grad()
    assert not z._fresh_grad
    # autograd.grad returns gradients and leaves the flags alone
    w = mx.nd.ones(3)
    w.attach_grad()
    with autograd.record():
        out = w * 3
    autograd.grad(out, [w])
    assert not w._fresh_grad


def test_fresh_grad_outside_a_graph():
    plain = mx.nd.ones(2)
    assert plain._fresh_grad is False
    with pytest.raises(mx.MXNetError, match='not been marked as a variable'):
        plain._fresh_grad = True


def _nodes(sym):
    return [(n['op'], n['name']) for n in json.loads(sym.tojson())['nodes']]


def test_get_symbol_structure_and_values():
    x, z = mx.nd.array([1.5]), mx.nd.array([-2.0])
    x.attach_grad()
    z.attach_grad()
    const = mx.nd.array([0.25])
    with autograd.record():
        y = x * x + 2 * z - 1 + const
    sym = autograd.get_symbol(y)
    args = sym.list_arguments()
    assert len(args) == 3
    assert args[0].startswith('var') and args[1].startswith('var') and args[2].startswith('null')
    ops = [op for op, _ in _nodes(sym) if op != 'null']
    assert ops == ['broadcast_mul', '_mul_scalar', 'broadcast_add', '_minus_scalar',
                   'broadcast_add']
    assert all(name.startswith('node_') for op, name in _nodes(sym) if op != 'null')
    # binding the symbol to the same values recomputes y
    values = dict(zip(args, [x, z, const]))
    out = sym.bind(mx.cpu(), values).forward()[0]
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy())
    with autograd.record():
        only_x = x * x + 2 * x - 1
    assert len(autograd.get_symbol(only_x).list_arguments()) == 1


def test_get_symbol_layers_indexing_and_errors():
    x = mx.nd.array(np.arange(12.0).reshape(3, 4))
    x.attach_grad()
    weight = mx.nd.array(np.random.RandomState(0).normal(size=(2, 4)))
    with autograd.record():
        fc = mx.nd.FullyConnected(x, weight, num_hidden=2, no_bias=True)
        bn = mx.nd.BatchNorm(fc, mx.nd.ones(2), mx.nd.zeros(2), mx.nd.zeros(2), mx.nd.ones(2))
        row = x[1]
        cols = x[:, 1:4:2]
        picked = x[[0, 2]]
    sym = autograd.get_symbol(bn)
    assert len(sym.list_arguments()) == 4 and len(sym.list_auxiliary_states()) == 2
    assert [op for op, _ in _nodes(sym) if op != 'null'] == ['FullyConnected', 'BatchNorm']
    row_sym = autograd.get_symbol(row)
    assert [op for op, _ in _nodes(row_sym) if op != 'null'] == ['slice', 'Reshape']
    got = row_sym.bind(mx.cpu(), {row_sym.list_arguments()[0]: x}).forward()[0]
    np.testing.assert_array_equal(got.asnumpy(), x.asnumpy()[1])
    col_sym = autograd.get_symbol(cols)
    got = col_sym.bind(mx.cpu(), {col_sym.list_arguments()[0]: x}).forward()[0]
    np.testing.assert_array_equal(got.asnumpy(), x.asnumpy()[:, 1:4:2])
    assert 'gather_nd' in [op for op, _ in _nodes(autograd.get_symbol(picked))]
    with pytest.raises(mx.MXNetError, match='not part of a computation graph'):
        autograd.get_symbol(mx.nd.ones(2))
    with pytest.raises(TypeError):
        autograd.get_symbol(np.ones(2))
