"""Matrix products merged by fuse_products.py: dot steps sharing a left operand (siblings) and
dot steps sharing a weight whose left operands do not depend on one another (hoisted) run as
one product; the results equal the separate products' up to the order of the sums in them.
Products that must not be merged (transposed, not 2-D, operands computed from the merged
products themselves, a weight made from another product) are left alone."""
import pytest

import mxmod as mx

from .fusion_helpers import ALL, NONE, PRODUCTS, close, run


def _weights(n, k, width, prefix='w'):
    return [mx.sym.Variable('%s%d' % (prefix, i), shape=(k, width)) for i in range(n)]


def test_siblings_of_one_shape_are_stacked_and_of_several_joined():
    x = mx.sym.Variable('x', shape=(4, 5))
    z = mx.sym.Variable('z', shape=(4, 5))
    same = [mx.sym.dot(x, w) for w in _weights(3, 5, 6)]
    mixed = [mx.sym.dot(z, mx.sym.Variable('u%d' % i, shape=(5, 2 + i))) for i in range(3)]
    sym = mx.sym.Group([mx.sym.sum(mx.sym.tanh(y)) for y in same + mixed])
    plain = run(sym, {'x': (4, 5), 'z': (4, 5)}, NONE)
    fused = run(sym, {'x': (4, 5), 'z': (4, 5)}, PRODUCTS)
    close(plain, fused)
    assert fused.count('dot') == 0 and fused.count('_fused_products') == 2
    assert fused.count('stack') == 1 and fused.count('Concat') == 1
    assert sorted(op.stacked for op in fused.ops('_fused_products')) == [False, True]


def _unrolled_simple_rnn(T, steps_share=True):
    """h_t = tanh(x_t W + h_{t-1} U): input products hoistable, recurrent ones not."""
    data = mx.sym.Variable('data')
    xs = mx.sym.split(data, axis=1, squeeze_axis=1, num_outputs=T)
    w = mx.sym.Variable('w', shape=(3, 4))
    u = mx.sym.Variable('u', shape=(4, 4))
    h = mx.sym.Variable('h0', shape=(2, 4))
    for t in range(T):
        wt = w if steps_share else mx.sym.Variable('w%d' % t, shape=(3, 4))
        h = mx.sym.tanh(mx.sym.dot(xs[t], wt) + mx.sym.dot(h, u))
    return mx.sym.MakeLoss(mx.sym.sum(h * h))


def test_input_products_are_hoisted_recurrent_ones_are_not():
    T = 6
    sym = _unrolled_simple_rnn(T)
    shapes = {'data': (2, T, 3)}
    plain = run(sym, shapes, NONE)
    fused = run(sym, shapes, PRODUCTS)
    close(plain, fused)
    blocks = fused.ops('_fused_products')
    assert [op.count for op in blocks] == [T]       # the T input products, as one
    assert fused.count('dot') == T                  # h_{t-1} U: each needs the step before
    # different weights at every step: nothing to merge
    other = run(_unrolled_simple_rnn(T, steps_share=False), shapes, PRODUCTS)
    assert other.count('_fused_products') == 0


def test_products_that_must_not_be_merged():
    x = mx.sym.Variable('x', shape=(5, 5))
    w1, w2, w3 = _weights(3, 5, 5)
    a = mx.sym.dot(x, w1)
    b = mx.sym.dot(x, a)                 # its weight is made from a sibling: a cycle if merged
    c = mx.sym.dot(x, w2, transpose_b=True)     # transposed
    d = mx.sym.dot(mx.sym.reshape(x, shape=(5, 1, 5)), w2)     # 3-D left operand
    e = mx.sym.dot(x, w3)
    sym = mx.sym.Group([mx.sym.sum(y) for y in (a, b, c, d, e)])
    plain = run(sym, {'x': (5, 5)}, NONE)
    fused = run(sym, {'x': (5, 5)}, PRODUCTS)
    close(plain, fused)
    # a and e merge; b (whose weight is a), c and d stay
    assert [op.count for op in fused.ops('_fused_products')] == [1]
    assert fused.ops('_fused_products')[0].widths == (5, 5)
    assert fused.count('dot') == 3


def test_weight_gradient_written_into_the_argument_and_int_and_float64():
    T = 4
    sym = _unrolled_simple_rnn(T)
    shapes = {'data': (2, T, 3)}
    plain = run(sym, shapes, NONE, dtype='float64')
    fused = run(sym, shapes, ALL, dtype='float64')
    close(plain, fused, rtol=1e-12, atol=1e-14)
    req = {'data': 'null', 'w': 'add', 'u': 'write', 'h0': 'null'}
    plain = run(sym, shapes, NONE, grad_req=req, passes=2)
    fused = run(sym, shapes, ALL, grad_req=req, passes=2)
    close(plain, fused)


def test_hoisted_operands_copied_when_not_one_array():
    """Left operands that are not consecutive blocks of one array (computed one by one) are
    stacked by a copy; consecutive ones (a split along the batch-major time axis) as well."""
    T = 3
    xs = [mx.sym.tanh(mx.sym.Variable('x%d' % t, shape=(2, 3))) for t in range(T)]
    w = mx.sym.Variable('w', shape=(3, 4))
    sym = mx.sym.MakeLoss(sum(mx.sym.sum(mx.sym.dot(x, w) * (t + 1)) for t, x in enumerate(xs)))
    shapes = {'x%d' % t: (2, 3) for t in range(T)}
    plain = run(sym, shapes, NONE)
    fused = run(sym, shapes, PRODUCTS)
    close(plain, fused)
    assert [op.count for op in fused.ops('_fused_products')] == [T]


@pytest.mark.parametrize('flag', ['MXMOD_FUSE_PRODUCTS', 'MXMOD_FUSE_RNN'])
def test_switch(flag):
    sym = _unrolled_simple_rnn(4)
    with mx.test_utils.environment(flag, '0'):
        off = run(sym, {'data': (2, 4, 3)}, {})
    assert off.count('_fused_products') == 0
