"""Graphs with control-flow operators, built by the same code on MXNet 1.9.1 (fixtures/
gen_fixtures.py, run with the oracle) and on mxmod (the tests): ``build(mx, name)`` returns the
symbol and the shapes of its inputs. Each is built with a fresh NameManager and subgraph-name
counter, so both write the same node names."""
from collections import defaultdict

T, B, D, H = 3, 2, 4, 5     # steps, batch, input features, hidden units


def _foreach_free(mx):
    data, state, w = mx.sym.var('data'), mx.sym.var('state'), mx.sym.var('w')
    proj = mx.sym.FullyConnected(w, num_hidden=D, name='proj')

    def body(x, states):
        bias = mx.sym.var('inner_bias')
        out = mx.sym.tanh(x * states[0] + proj + bias)
        return out, [out * 0.5 + states[0]]
    outs, states = mx.sym.contrib.foreach(body, data, [state])
    return mx.sym.Group([outs, states[0]]), {'data': (T, B, D), 'state': (B, D), 'w': (B, 3)}


def _foreach_multi(mx):
    a, b, s0, s1 = (mx.sym.var(n) for n in ('a', 'b', 's0', 's1'))
    free = mx.sym.var('free')

    def body(xs, states):
        out = mx.sym.broadcast_mul(xs[0], xs[1]) + states[0][0] * free
        return [out, out * 2], [[states[0][0] + out], states[1] * 1.5]
    outs, states = mx.sym.contrib.foreach(body, [a, b], [[s0], s1])
    group = mx.sym.Group(outs + [states[0][0], states[1]])
    return group, {'a': (T, B, D), 'b': (T, 1), 's0': (B, D), 's1': (4,), 'free': (B, D)}


def _foreach_nested(mx):
    data, state = mx.sym.var('data'), mx.sym.var('state')

    def inner(x, states):
        out = x * 2 + states[0]
        return out, [out]

    def outer(x, states):
        out = mx.sym.contrib.foreach(inner, x, states)[0]
        out = mx.sym.broadcast_add(out, states[0])
        return out, [mx.sym.sum(out, axis=0) * 0.1]
    outs, states = mx.sym.contrib.foreach(outer, data, [state])
    return mx.sym.Group([outs, states[0]]), {'data': (T, 2, B), 'state': (B,)}


def _foreach_lstm(mx):
    data = mx.sym.var('data')
    params = mx.rnn.RNNParams(prefix='lstm_')
    # the weights' variables are made here, outside the loop body: they are cut into it
    mx.rnn.LSTMCell(H, prefix='lstm_', params=params)
    begin = [mx.sym.var('h0'), mx.sym.var('c0')]

    def step(x, states):
        return mx.rnn.LSTMCell(H, prefix='lstm_', params=params)(x, states)
    outs, states = mx.sym.contrib.foreach(step, data, begin)
    pred = mx.sym.FullyConnected(mx.sym.reshape(outs, shape=(-1, H)), num_hidden=2, name='pred')
    return mx.sym.Group([pred] + states), {'data': (T, B, D), 'h0': (B, H), 'c0': (B, H)}


def _while_loop(mx):
    i, acc, scan = mx.sym.var('i'), mx.sym.var('acc'), mx.sym.var('scan')
    weight = mx.sym.var('weight')

    def func(i, acc):
        row = mx.sym.take(scan, i).reshape((B, D))
        new = mx.sym.tanh(acc * weight + row)
        return [new, i * 1], [i + 1, new]
    outs, states = mx.sym.contrib.while_loop(lambda i, acc: i < T, func, [i, acc],
                                             max_iterations=T + 2)
    outs = [mx.sym.slice_axis(o, axis=0, begin=0, end=T) for o in outs]
    return mx.sym.Group(outs + states), {'i': (1,), 'acc': (B, D), 'scan': (T + 2, B, D),
                                         'weight': (B, D)}


def _cond(mx):
    a, b, c = mx.sym.var('a'), mx.sym.var('b'), mx.sym.var('c')
    pred = mx.sym.sum(a) < mx.sym.sum(b)
    out = mx.sym.contrib.cond(pred, lambda: [a * b + c, mx.sym.exp(a)],
                              lambda: [a - b * c, mx.sym.sin(b)])
    return mx.sym.Group(out), {'a': (B, D), 'b': (B, D), 'c': (B, D)}


def _foreach_in_cond(mx):
    # (MXNet cannot infer shapes through a _cond or _while_loop inside a loop body, whose
    # outputs' shapes it learns only by running them: the other way round works in both)
    data, state = mx.sym.var('data'), mx.sym.var('state')

    def body(x, states):
        new = x * states[0] + 1
        return new, [new]

    def looped():
        outs, states = mx.sym.contrib.foreach(body, data, [state])
        return [mx.sym.sum(outs, axis=0), states[0]]
    out = mx.sym.contrib.cond(mx.sym.sum(data) > 0, looped,
                              lambda: [mx.sym.sum(data, axis=0) * 2, state - 1])
    return mx.sym.Group(out), {'data': (T + 1, B, D), 'state': (B, D)}


CASES = {'foreach_free': _foreach_free, 'foreach_multi': _foreach_multi,
         'foreach_nested': _foreach_nested, 'foreach_lstm': _foreach_lstm,
         'while_loop': _while_loop, 'cond': _cond, 'foreach_in_cond': _foreach_in_cond}


def build(mx, name):
    """``(symbol, {input name: shape})`` of case ``name``, named from fresh counters."""
    scope = mx.attribute.AttrScope
    saved = scope._subgraph_names  # pylint: disable=protected-access
    scope._subgraph_names = defaultdict(int)  # pylint: disable=protected-access
    try:
        with mx.name.NameManager():
            return CASES[name](mx)
    finally:
        scope._subgraph_names = saved  # pylint: disable=protected-access


def inputs(sym, shapes, rng):
    """Seeded float32 values of a case's inputs (a loop counter starts at 0); the shapes not
    given are inferred (MXNet infers none through _while_loop and _cond: those cases give
    them all)."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    arg_shapes = sym.infer_shape(**shapes)[0]
    if arg_shapes is not None:
        shapes = dict(zip(sym.list_arguments(), arg_shapes))
    values = {k: rng.uniform(-1, 1, shapes[k]).astype(np.float32)
              for k in sorted(sym.list_arguments())}
    if 'i' in values:
        values['i'][:] = 0
    return values
