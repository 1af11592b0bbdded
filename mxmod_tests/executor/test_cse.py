"""Common subexpression elimination at bind time (executor/cse.py): which nodes merge, that the
bound graph computes what the symbol says (numpy reference), and that a graph with nothing to
merge is bound as it is."""
import numpy as np
import pytest

import mxmod as mx
from mxmod.executor.cse import eliminate_common_expr


def _ops(sym):
    return sorted(n.op.op_name for n in sym._topo() if n.op is not None)


def test_nothing_to_merge_binds_the_symbol_itself():
    x = mx.sym.var('x')
    sym = mx.sym.relu(x) + mx.sym.tanh(x)
    assert eliminate_common_expr(sym) is sym
    exe = sym.simple_bind(mx.cpu(), x=(2, 3))
    assert exe.get_optimized_symbol().tojson() == sym.tojson()


def test_same_operator_attributes_and_inputs_merge():
    x = mx.sym.var('x')
    a, b = mx.sym.relu(x, name='a'), mx.sym.relu(x, name='b')
    sym = mx.sym.elemwise_add(a * 2, b * 2, name='sum')
    opt = eliminate_common_expr(sym)
    assert _ops(opt) == ['_mul_scalar', 'elemwise_add', 'relu']
    assert _ops(sym) == ['_mul_scalar', '_mul_scalar', 'elemwise_add', 'relu', 'relu']
    data = np.random.uniform(-1, 1, (2, 3)).astype(np.float32)
    exe = sym.simple_bind(mx.cpu(), x=data.shape)
    out = exe.forward(is_train=True, x=data)[0].asnumpy()
    np.testing.assert_allclose(out, 4 * np.maximum(data, 0), rtol=1e-6)
    exe.backward(mx.nd.ones((2, 3)))
    np.testing.assert_allclose(exe.grad_dict['x'].asnumpy(), 4 * (data > 0), rtol=1e-6)


def test_other_attributes_random_operators_and_aux_states_do_not_merge():
    x = mx.sym.var('x')
    acts = mx.sym.Activation(x, act_type='relu') + mx.sym.Activation(x, act_type='tanh')
    assert _ops(eliminate_common_expr(acts)) == ['Activation', 'Activation', 'elemwise_add']
    drop = mx.sym.Dropout(x, p=0.5) + mx.sym.Dropout(x, p=0.5)
    assert eliminate_common_expr(drop) is drop
    gamma, beta = mx.sym.var('g'), mx.sym.var('b')
    mean, var = mx.sym.var('m'), mx.sym.var('v')
    norm = (mx.sym.BatchNorm(x, gamma, beta, mean, var, name='n1') +
            mx.sym.BatchNorm(x, gamma, beta, mean, var, name='n2'))
    assert eliminate_common_expr(norm) is norm


def test_merges_cascade_to_their_consumers():
    x = mx.sym.var('x')
    left = mx.sym.sigmoid(mx.sym.relu(x) + 1)
    right = mx.sym.sigmoid(mx.sym.relu(x) + 1)
    opt = eliminate_common_expr(left * right)
    assert _ops(opt) == ['_plus_scalar', 'elemwise_mul', 'relu', 'sigmoid']


def test_heads_on_one_value_stay_distinct_arrays():
    x = mx.sym.var('x')
    a, b = mx.sym.relu(x), mx.sym.relu(x)
    sym = mx.sym.Group([a, b, a])
    opt = eliminate_common_expr(sym)
    assert _ops(opt) == ['_copy', '_copy', 'relu']
    data = np.random.uniform(-1, 1, (3,)).astype(np.float32)
    exe = sym.simple_bind(mx.cpu(), x=data.shape)
    outs = exe.forward(x=data)
    assert len({id(o) for o in outs}) == 3
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.maximum(data, 0))


@pytest.mark.parametrize('value', ['0', 'false'])
def test_environment_switches_it_off(value):
    x = mx.sym.var('x')
    sym = mx.sym.relu(x) + mx.sym.relu(x)
    with mx.test_utils.environment('MXNET_ELIMINATE_COMMON_EXPR', value):
        exe = sym.simple_bind(mx.cpu(), x=(2,))
    assert exe.get_optimized_symbol().tojson() == sym.tojson()
    exe = sym.simple_bind(mx.cpu(), x=(2,))
    assert _ops(exe.get_optimized_symbol()) == ['elemwise_add', 'relu']
