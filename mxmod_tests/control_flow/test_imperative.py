"""mx.nd.contrib.foreach, while_loop and cond under autograd, and the control-flow operators run
imperatively (a hybridized HybridBlock's CachedOp records them for autograd): both against the
executor's results and numpy."""
from collections import defaultdict

import numpy as np

import mxmod as mx
from mxmod.gluon import HybridBlock
from .test_symbolic import H, _rnn_arrays, _rnn_numpy, _rnn_symbol
from .checks import run


def _nd_rnn_step(w, u, b):
    def step(x, states):
        h = mx.nd.tanh(mx.nd.FullyConnected(x, w, b, num_hidden=H) +
                       mx.nd.dot(states[0], u, transpose_b=True))
        return h, [h]
    return step


def test_nd_foreach_under_autograd_matches_the_executor():
    rng = np.random.RandomState(0)
    arrays = _rnn_arrays(rng)
    heads = [rng.uniform(-1, 1, s) for s in ((3, 2, H), (2, H))]
    want_outs, want_grads = run(_rnn_symbol(), arrays, heads, dtype=np.float64)
    nd = {k: mx.nd.array(v, dtype='float64') for k, v in arrays.items()}
    for arr in nd.values():
        arr.attach_grad()
    with mx.autograd.record():
        outs, states = mx.nd.contrib.foreach(_nd_rnn_step(nd['w'], nd['u'], nd['b']),
                                             nd['data'], [nd['h0']])
    mx.autograd.backward([outs, states[0]], [mx.nd.array(h, dtype='float64') for h in heads])
    np.testing.assert_allclose(outs.asnumpy(), want_outs[0], rtol=1e-12)
    np.testing.assert_allclose(states[0].asnumpy(), want_outs[1], rtol=1e-12)
    for name, arr in nd.items():
        np.testing.assert_allclose(arr.grad.asnumpy(), want_grads[name], rtol=1e-10, err_msg=name)


def test_nd_while_loop_pads_and_differentiates():
    x = mx.nd.array([[0.5, 0.25]], dtype='float64')
    x.attach_grad()
    with mx.autograd.record():
        outs, final = mx.nd.contrib.while_loop(lambda v: v.sum() < 4, lambda v: (v * v, v * 2),
                                               x, max_iterations=5)
        loss = (outs * outs).sum() + final.sum()
    loss.backward()
    values = [0.5 * 2 ** k for k in range(3)], [0.25 * 2 ** k for k in range(3)]
    np.testing.assert_allclose(outs.asnumpy()[:3, 0], np.square(np.array(values).T))
    np.testing.assert_allclose(outs.asnumpy()[3:], 0)
    assert outs.shape == (5, 1, 2) and final.shape == (1, 2)
    # three steps: loss = sum_k (4^k x^2)^2 + sum(8x) = 273 x^4 + 8 x, k = 0..2
    expected = 4 * 273 * x.asnumpy() ** 3 + 8
    np.testing.assert_allclose(x.grad.asnumpy(), expected)


def test_nd_cond_runs_one_branch():
    a = mx.nd.array([1.0, -2.0])
    a.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.cond(a.sum() < 0, lambda: a * 3, lambda: a * a)
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), [3, -6])
    np.testing.assert_allclose(a.grad.asnumpy(), [3, 3])


class _Loop(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.cell = mx.gluon.rnn.GRUCell(H, input_size=3, prefix='gru_')

    def hybrid_forward(self, F, data, state):  # pylint: disable=arguments-differ
        outs, states = F.contrib.foreach(self.cell, data, [state])
        flag = F.contrib.cond(F.sum(states[0]) > 0, lambda: states[0] * 2, lambda: states[0])
        return outs, flag


def test_hybridized_block_runs_the_operators_under_autograd():
    data = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (4, 2, 3)))
    state = mx.nd.zeros((2, H))
    results = []
    scope = mx.attribute.AttrScope
    for hybridize in (False, True):
        scope._subgraph_names = defaultdict(int)  # pylint: disable=protected-access
        block = _Loop(prefix='loop_')
        block.initialize(mx.init.Xavier(rnd_type='gaussian'))
        for i, param in enumerate(sorted(block.collect_params().values(), key=lambda p: p.name)):
            param.set_data(mx.nd.array(np.random.RandomState(i).uniform(-1, 1, param.shape)))
        if hybridize:
            block.hybridize()
        with mx.autograd.record():
            outs, flag = block(data, state)
            loss = (outs * outs).sum() + flag.sum()
        loss.backward()
        grads = {p.name: p.grad().asnumpy() for p in block.collect_params().values()}
        results.append((outs.asnumpy(), flag.asnumpy(), grads))
    (outs0, flag0, grads0), (outs1, flag1, grads1) = results
    np.testing.assert_allclose(outs1, outs0, rtol=1e-5)
    np.testing.assert_allclose(flag1, flag0, rtol=1e-5)
    for name, grad in grads0.items():
        assert np.abs(grad).sum() > 0
        np.testing.assert_allclose(grads1[name], grad, rtol=1e-4, atol=1e-6, err_msg=name)


def test_step_of_a_gluon_cell_on_ndarrays():
    cell = mx.gluon.rnn.RNNCell(H, input_size=3, prefix='r_')
    cell.initialize()
    x, h = mx.nd.ones((2, 3)), mx.nd.ones((2, H))
    out, states = cell(x, [h])
    w, u = cell.i2h_weight.data().asnumpy(), cell.h2h_weight.data().asnumpy()
    b = cell.i2h_bias.data().asnumpy() + cell.h2h_bias.data().asnumpy()
    want = _rnn_numpy(x.asnumpy()[None], h.asnumpy(), w, u, b)[1]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5)
    assert states[0] is out


def test_larger_head_gradient_gives_its_leading_elements():
    # MXNet 1.9.1 reads a head's size of elements from a larger head gradient (its
    # test_contrib_control_flow relies on it); the result below is what it gives
    a = mx.nd.array(np.arange(6).reshape(3, 2))
    a.attach_grad()
    with mx.autograd.record():
        z = a * 5
    z.backward(mx.nd.array(np.arange(8).reshape(4, 2) + 1))
    np.testing.assert_allclose(a.grad.asnumpy().ravel(), [5, 10, 15, 20, 25, 30])
