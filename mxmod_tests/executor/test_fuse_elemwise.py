"""Repeated groups of elementwise steps run as one step (fuse_elemwise.py, elemwise_block.py,
elemwise_jit.py): every operator the groups take, compiled and as numpy lines, gives outputs and
gradients bit for bit equal to the separate steps' (ties, clip bounds, masks and broadcast
inputs included); groups that must stay apart (one-off, too large, integer, an operator in
between) are not fused, and a path through another step never makes the plan cyclic."""
import numpy as np
import pytest

import mxmod as mx

from .fusion_helpers import ELEMWISE, NONE, run, same

B, H = 5, 7


def _var(name, shape):
    return mx.sym.Variable(name, shape=shape)


def _cell(k, body):
    """``body`` applied to the k-th copy of the inputs a, b (B, H), row (H,), col (B, 1),
    one (1,), mask (B,), then multiplied by c (one more member)."""
    v = {n: _var('%s%d' % (n, k), s) for n, s in
         (('a', (B, H)), ('b', (B, H)), ('c', (B, H)), ('row', (H,)), ('col', (B, 1)),
          ('one', (1,)), ('mask', (B,)))}
    return body(v) * v['c']


BODIES = {
    'add': lambda v: v['a'] + v['b'],
    'sub': lambda v: v['a'] - v['b'],
    'mul': lambda v: v['a'] * v['b'],
    'div': lambda v: v['a'] / (v['b'] + 3),
    'maximum': lambda v: mx.sym.maximum(v['a'], v['b']),
    'minimum': lambda v: mx.sym.minimum(v['a'], v['b']),
    'broadcast_row': lambda v: mx.sym.broadcast_mul(mx.sym.broadcast_add(v['a'], v['row']),
                                                    v['row']),
    'broadcast_col': lambda v: mx.sym.broadcast_sub(v['a'], v['col']) /
    mx.sym.broadcast_add(v['b'] * 0 + 3, v['col']),
    'broadcast_scalar': lambda v: mx.sym.broadcast_maximum(v['a'], v['one']) +
    mx.sym.broadcast_minimum(v['b'], v['one']) + mx.sym.broadcast_div(v['a'], v['one'] + 2),
    'scalars': lambda v: (((v['a'] + 0.1) - 0.2) * 0.3 / 0.7) + (1.5 - v['b']) +
    (2.0 / (v['b'] + 3)) + mx.sym.maximum(v['a'], 0.25) + mx.sym.minimum(v['b'], -0.25),
    'clip': lambda v: mx.sym.clip(v['a'] * 2, a_min=-0.5, a_max=1.0),
    'hard_sigmoid': lambda v: mx.sym.hard_sigmoid(v['a'] * 4) +
    mx.sym.clip(0.2 * v['b'] + 0.5, a_min=0.0, a_max=1.0),
    'where_mask': lambda v: mx.sym.where(v['mask'], v['a'], v['b']),
    'where_full': lambda v: mx.sym.where(v['a'] > 0, v['a'] * v['b'], v['b']),
    'unary_math': lambda v: mx.sym.tanh(v['a']) + mx.sym.sigmoid(v['b']) +
    mx.sym.exp(v['a']) + mx.sym.log(mx.sym.exp(v['b']) + 1) + mx.sym.sqrt(mx.sym.exp(v['a'])),
    'unary_arith': lambda v: mx.sym.square(v['a']) + mx.sym.negative(v['b']) +
    mx.sym.reciprocal(v['a'] + 3) + mx.sym.identity(v['b']),
    'relu': lambda v: mx.sym.relu(v['a']) * mx.sym.relu(v['b']),
    'activation': lambda v: mx.sym.Activation(v['a'], act_type='relu') +
    mx.sym.Activation(v['b'], act_type='sigmoid') + mx.sym.Activation(v['a'], act_type='tanh'),
}


def _values(k):
    """Random values with ties, zeros and the clip bounds in them; a 0/1 mask."""
    rs = np.random.RandomState(10 + k)
    a = rs.uniform(-1.5, 1.5, (B, H)).astype(np.float32)
    b = rs.uniform(-1.5, 1.5, (B, H)).astype(np.float32)
    a[0, :3] = [0.0, -0.25, 0.5]        # relu at 0; clip(2a) at its bounds -0.5 and 1.0
    b[0, :3] = a[0, :3]                 # maximum / minimum ties
    a[1, 0] = b[1, 0] = 0.25
    return {'a%d' % k: a, 'b%d' % k: b,
            'mask%d' % k: (rs.rand(B) > 0.5).astype(np.float32),
            'one%d' % k: np.array([0.1], np.float32)}


def _graph(body):
    sym = mx.sym.Group([_cell(k, BODIES[body]) for k in range(2)])
    values = dict(_values(0), **_values(1))
    req = {n: 'null' if n.startswith('mask') else 'write' for n in sym.list_arguments()}
    return sym, values, req


@pytest.mark.parametrize('numba', [True, False])
@pytest.mark.parametrize('body', sorted(BODIES))
def test_every_operator_bit_for_bit(body, numba):
    sym, values, req = _graph(body)
    plain = run(sym, {}, NONE, values=values, grad_req=req, numba=numba)
    fused = run(sym, {}, ELEMWISE, values=values, grad_req=req, numba=numba)
    same(plain, fused)
    groups = fused.ops('_fused_elemwise')
    assert len(groups) == 2 and fused.count('elemwise_mul') == 0
    assert all((op._compiled is not None) == numba for op in groups)


def test_three_axes_and_float64():
    def cell(k):
        a = _var('a%d' % k, (2, 3, 4))
        row = _var('r%d' % k, (4,))
        return mx.sym.tanh(mx.sym.broadcast_add(a, row)) * a + mx.sym.relu(a)
    sym = mx.sym.Group([cell(0), cell(1)])
    for dtype in ('float32', 'float64'):
        plain = run(sym, {}, NONE, dtype=dtype)
        fused = run(sym, {}, ELEMWISE, dtype=dtype)
        same(plain, fused)
        assert fused.count('_fused_elemwise') == 2


def test_inference_forward_then_backward():
    sym, values, req = _graph('unary_math')
    plain = run(sym, {}, NONE, values=values, grad_req=req, is_train=False)
    fused = run(sym, {}, ELEMWISE, values=values, grad_req=req, is_train=False)
    same(plain, fused)


def test_one_off_large_and_integer_groups_are_left_alone():
    a = _var('a', (B, H))
    one_off = mx.sym.tanh(a * 2 + 1)
    sym, _, _ = _graph('mul')
    assert run(one_off, {}, ELEMWISE).count('_fused_elemwise') == 0
    big = [_var('x%d' % k, (300, 300)) for k in range(2)]
    large = mx.sym.Group([mx.sym.tanh(x * 2 + 1) for x in big])
    assert run(large, {}, ELEMWISE).count('_fused_elemwise') == 0
    ints = mx.sym.Group([(_var('i%d' % k, (B, H)) + 1) * 2 for k in range(2)])
    fused = run(ints, {}, ELEMWISE, dtype='int32', grad_req='null')
    assert fused.count('_fused_elemwise') == 0
    assert run(sym, {}, ELEMWISE).count('_fused_elemwise') == 2


def test_a_path_through_another_step_splits_the_group():
    """c = tanh(a) + FC(tanh(a)): joining tanh and the sum would put the FullyConnected both
    after and before the group. They run as separate groups (or steps), with the same values."""
    def cell(k):
        a = _var('a%d' % k, (B, H))
        t = mx.sym.tanh(a) * 2
        fc = mx.sym.FullyConnected(t, num_hidden=H, name='fc%d' % k)
        return (t + fc) * a
    sym = mx.sym.Group([cell(0), cell(1)])
    plain = run(sym, {}, NONE)
    fused = run(sym, {}, ELEMWISE)
    same(plain, fused)
    assert fused.count('FullyConnected') == 2 and fused.count('_fused_elemwise') == 4


def test_switches_and_monitor():
    sym, values, req = _graph('add')
    for flag in ('MXMOD_FUSE_ELEMWISE', 'MXMOD_FUSE_RNN'):
        off = run(sym, {}, dict(ELEMWISE, **{flag: '0'}), values=values, grad_req=req)
        assert off.count('_fused_elemwise') == 0
    fused = run(sym, {}, ELEMWISE, values=values, grad_req=req)
    seen = []
    fused.exe.set_monitor_callback(lambda name, arr: seen.append(name), monitor_all=True)
    fused.exe.forward(is_train=True)
    # a monitor sees every operator: the executor runs the steps one by one again
    assert fused.count('_fused_elemwise') == 0 and len(seen) > 4
