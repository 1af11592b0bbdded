"""mx.sym.contrib.foreach, while_loop and cond in bound executors: forward against numpy loops,
float64 gradients against finite differences, shape and type inference through the subgraphs,
and the executor's other paths (grad_req, inference then backward, reshape, CSE)."""
import numpy as np
import pytest

import mxmod as mx
from . import cases
from .checks import assert_grads_match, run

T, B, D, H = 3, 2, 3, 4


def _rnn_symbol():
    data, h0 = mx.sym.var('data'), mx.sym.var('h0')
    w, u, b = mx.sym.var('w'), mx.sym.var('u'), mx.sym.var('b')

    def step(x, states):
        h = mx.sym.tanh(mx.sym.FullyConnected(x, weight=w, bias=b, num_hidden=H) +
                        mx.sym.dot(states[0], u, transpose_b=True))
        return h, [h]
    outs, states = mx.sym.contrib.foreach(step, data, [h0])
    return mx.sym.Group([outs, states[0]])


def _rnn_numpy(data, h0, w, u, b):
    h, outs = h0, []
    for x in data:
        h = np.tanh(x @ w.T + b + h @ u.T)
        outs.append(h)
    return [np.stack(outs), h]


def _rnn_arrays(rng):
    return {'data': rng.uniform(-1, 1, (T, B, D)), 'h0': rng.uniform(-1, 1, (B, H)),
            'w': rng.uniform(-1, 1, (H, D)), 'u': rng.uniform(-1, 1, (H, H)),
            'b': rng.uniform(-1, 1, (H,))}


def test_foreach_rnn_matches_numpy_loop_and_finite_differences():
    rng = np.random.RandomState(0)
    sym, arrays = _rnn_symbol(), _rnn_arrays(rng)
    assert sym.list_arguments() == ['data', 'h0', 'w', 'b', 'u']
    outs, _ = run(sym, arrays, dtype=np.float64)
    for got, want in zip(outs, _rnn_numpy(**arrays)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    heads = [rng.uniform(-1, 1, o.shape) for o in outs]
    assert_grads_match(sym, arrays, heads)


def _doubling_loop():
    """x doubled and shifted while its sum is below 10 (at most 6 times)."""
    x, shift = mx.sym.var('x'), mx.sym.var('shift')
    outs, finals = mx.sym.contrib.while_loop(
        lambda x: mx.sym.sum(x) < 10,
        lambda x: ([x * x, x + 0], [x * 2 + shift]), [x], max_iterations=6)
    return mx.sym.Group(outs + finals)


def _doubling_numpy(x, shift, limit=6):
    rows = []
    while len(rows) < limit and x.sum() < 10:
        rows.append((x * x, x.copy()))
        x = x * 2 + shift
    return rows, x


@pytest.mark.parametrize('start', [0.3, 0.9, 6.0])
def test_while_loop_matches_numpy_and_finite_differences(start):
    rng = np.random.RandomState(1)
    arrays = {'x': start + rng.uniform(0, 0.1, (2, 2)), 'shift': rng.uniform(0, 0.1, (2, 2))}
    sym = _doubling_loop()
    assert sym.infer_shape(x=(2, 2), shift=(2, 2))[1] == [(6, 2, 2), (6, 2, 2), (2, 2)]
    outs, _ = run(sym, arrays, dtype=np.float64)
    rows, final = _doubling_numpy(**arrays)
    assert 0 < len(rows) < 6 or start == 6.0
    for j in range(2):
        expected = np.zeros((6, 2, 2))
        for k, row in enumerate(rows):
            expected[k] = row[j]
        np.testing.assert_allclose(outs[j], expected, rtol=1e-12)
    np.testing.assert_allclose(outs[2], final, rtol=1e-12)
    heads = [rng.uniform(-1, 1, o.shape) for o in outs]
    assert_grads_match(sym, arrays, heads)


def test_cond_takes_each_branch_with_its_gradient():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    sym = mx.sym.Group(mx.sym.contrib.cond(mx.sym.sum(a) > 0, lambda: [a * b, mx.sym.exp(b)],
                                           lambda: [a - b, b * 3]))
    rng = np.random.RandomState(2)
    for sign in (1, -1):
        arrays = {'a': sign * rng.uniform(0.1, 1, (2, 3)), 'b': rng.uniform(-1, 1, (2, 3))}
        outs, _ = run(sym, arrays, dtype=np.float64)
        want = ([arrays['a'] * arrays['b'], np.exp(arrays['b'])] if sign > 0 else
                [arrays['a'] - arrays['b'], arrays['b'] * 3])
        for got, expected in zip(outs, want):
            np.testing.assert_allclose(got, expected, rtol=1e-12)
        assert_grads_match(sym, arrays, [rng.uniform(-1, 1, o.shape) for o in outs])


@pytest.mark.parametrize('name', ['foreach_nested', 'foreach_multi', 'foreach_in_cond'])
def test_case_gradients_match_finite_differences(name):
    sym, shapes = cases.build(mx, name)
    rng = np.random.RandomState(3)
    arrays = {k: v.astype(np.float64) for k, v in cases.inputs(sym, shapes, rng).items()}
    outs, _ = run(sym, arrays, dtype=np.float64)
    assert_grads_match(sym, arrays, [rng.uniform(-1, 1, o.shape) for o in outs])


def test_while_loop_inside_foreach():
    # (MXNet 1.9.1 cannot infer shapes through it; mxmod can)
    data, s = mx.sym.var('data'), mx.sym.var('s')

    def body(x, states):
        _, (y, _) = mx.sym.contrib.while_loop(lambda y, k: k < 2,
                                              lambda y, k: ([], [y * x + 1, k + 1]),
                                              [states[0], mx.sym.zeros((1,))], max_iterations=3)
        return y, [y]
    outs, states = mx.sym.contrib.foreach(body, data, [s])
    sym = mx.sym.Group([outs, states[0]])
    rng = np.random.RandomState(4)
    arrays = {'data': rng.uniform(-1, 1, (T, B)), 's': rng.uniform(-1, 1, (B,))}
    got, _ = run(sym, arrays, dtype=np.float64)
    state, rows = arrays['s'], []
    for x in arrays['data']:
        state = (state * x + 1) * x + 1
        rows.append(state)
    np.testing.assert_allclose(got[0], np.stack(rows), rtol=1e-12)
    assert_grads_match(sym, arrays, [rng.uniform(-1, 1, o.shape) for o in got])


def test_shapes_and_types_through_the_body():
    # unknown batch size (0), as MXNet's test_foreach_with_unkown_dim
    data = mx.sym.var('data', shape=(0, 3, 8, 8))
    outs, _ = mx.sym.contrib.foreach(lambda x, s: (x + s[0], [s[0] * 2]), data,
                                     [mx.sym.var('state')])
    assert outs.infer_shape_partial()[1] == [(0, 3, 8, 8)]
    # the weights of a layer made inside the body are inputs; their shapes are inferred
    x, h = mx.sym.var('x'), mx.sym.var('h')
    out, state = mx.sym.contrib.foreach(
        lambda xt, s: (mx.sym.FullyConnected(xt, num_hidden=H, name='fc') + s[0], [s[0] + 1]),
        x, [h])
    sym = mx.sym.Group([out, state[0]])
    args, outs, _ = sym.infer_shape(x=(T, B, D))
    assert dict(zip(sym.list_arguments(), args)) == {'x': (T, B, D), 'h': (B, H),
                                                      'fc_weight': (H, D), 'fc_bias': (H,)}
    assert outs == [(T, B, H), (B, H)]
    # dtypes: float64 data, an int32 state kept int32 by its own arithmetic
    c = mx.sym.var('c')
    out, state = mx.sym.contrib.foreach(
        lambda xt, s: (xt * 2, [s[0] + mx.sym.ones((1,), dtype='int32')]), x, [c])
    types = mx.sym.Group([out, state[0]]).infer_type(x='float64', c='int32')
    assert types[1] == [np.float64, np.int32]


def test_executor_paths():
    rng = np.random.RandomState(5)
    sym, arrays = _rnn_symbol(), _rnn_arrays(rng)
    heads = [rng.uniform(-1, 1, s) for s in ((T, B, H), (B, H))]
    _, once = run(sym, arrays, heads)
    # grad_req add accumulates; null leaves an argument alone and the others right
    args = {k: mx.nd.array(v) for k, v in arrays.items()}
    grads = {k: mx.nd.ones(v.shape) for k, v in arrays.items()}
    exe = sym.bind(mx.cpu(), args, args_grad=grads,
                   grad_req={k: 'null' if k == 'data' else 'add' for k in arrays})
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward([mx.nd.array(h) for h in heads])
    for name in arrays:
        want = 1 if name == 'data' else 1 + 2 * once[name]
        np.testing.assert_allclose(grads[name].asnumpy(), want, rtol=1e-5, atol=1e-6)
    # backward after an inference pass
    exe = sym.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in arrays.items()},
                   args_grad={k: mx.nd.zeros(v.shape) for k, v in arrays.items()})
    exe.forward(is_train=False)
    exe.backward([mx.nd.array(h) for h in heads])
    np.testing.assert_allclose(exe.grad_dict['u'].asnumpy(), once['u'], rtol=1e-5)
    # reshape to a longer sequence and another batch size
    exe = sym.simple_bind(mx.cpu(), data=(T, B, D), h0=(B, H), u=(H, H))
    longer = exe.reshape(allow_up_sizing=True, data=(T + 2, 1, D), h0=(1, H), u=(H, H))
    values = _rnn_arrays(rng)
    values['data'] = rng.uniform(-1, 1, (T + 2, 1, D))
    values['h0'] = rng.uniform(-1, 1, (1, H))
    outs = longer.forward(**{k: mx.nd.array(v) for k, v in values.items()})
    np.testing.assert_allclose(outs[0].asnumpy(), _rnn_numpy(**values)[0], rtol=1e-5)


def test_common_expressions_keep_different_bodies_apart():
    data, state = mx.sym.var('data'), mx.sym.var('state')
    first = mx.sym.contrib.foreach(lambda x, s: (x * 2, [s[0] + x]), data, [state])[0]
    second = mx.sym.contrib.foreach(lambda x, s: (x * 3, [s[0] + x]), data, [state])[0]
    assert first.list_attr() == second.list_attr()
    outs, _ = run(mx.sym.Group([first, second]), {'data': np.ones((2, 3)), 'state': np.ones(3)})
    np.testing.assert_allclose(outs[0], 2)
    np.testing.assert_allclose(outs[1], 3)
